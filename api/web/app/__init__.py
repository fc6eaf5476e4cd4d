"""The application assembled above the interfaces: one route table over auth, cefi and control
(``application.create_app``), and the OpenAPI documents it serves (``openapi_documents``)."""
