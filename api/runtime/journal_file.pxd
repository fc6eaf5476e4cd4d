# Compiled build only (setup.py, docs/build.md): the writer seals each record by a direct C call
# (journal_seal.pxd), not through the module attribute journal_file.py imports, and keeps the journal's
# size and chain value as C fields of a C type (each record updates both). The attributes are
# JournalFile's __slots__ (tests/test_build.py).
cimport cython

from cefisim.api.runtime.journal_seal cimport seal_record
from cefisim.engine.journal cimport to_record


@cython.final
cdef class JournalFile:
    cdef public object _file, _raw, _target, _write, path, sealed
    cdef public unsigned long crc
    cdef public Py_ssize_t size
