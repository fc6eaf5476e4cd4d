"""cefisim's HTTP surface: the aiohttp application, CLI, client and pytest plugin.

Thin by design: parse, authenticate, submit one engine command, serialise.
"""
