# Compiled build only (setup.py, docs/build.md): an event built by a direct C call. Calling
# ``tuple.__new__`` from compiled code goes through the generic call protocol and the argument checks of
# ``tuple.__new__`` before ``tuple``'s subtype constructor copies the field tuple: most of the cost of an
# event. A module that cimports ``build_event`` gets ``_new_event`` instead, which does only that copy:
# the event type's allocator (an event kind is a tuple subclass adding no storage), then each field.
# Python callers (and the pure build) keep ``build_event = tuple.__new__`` from events.py; both give the
# same tuple of the same type.

cdef extern from *:
    """
    static PyObject *cefisim_new_event(PyObject *kind, PyObject *fields) {
        Py_ssize_t i, n = PyTuple_GET_SIZE(fields);
        PyObject *event = ((PyTypeObject *)kind)->tp_alloc((PyTypeObject *)kind, n);
        if (event == NULL) return NULL;
        for (i = 0; i < n; i++) {
            PyObject *field = PyTuple_GET_ITEM(fields, i);
            Py_INCREF(field);
            PyTuple_SET_ITEM(event, i, field);
        }
        return event;
    }
    """
    object _new_event "cefisim_new_event" (object kind, tuple fields)


cpdef inline build_event(kind, tuple fields):
    return _new_event(kind, fields)
