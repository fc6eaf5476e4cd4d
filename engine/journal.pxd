# Compiled build only (setup.py, docs/build.md): a record built by a direct C call from the compiled
# journal writer (api/runtime/journal_file.pxd cimports it), not through the module attribute.

cpdef list to_record(at, src, cmd)
