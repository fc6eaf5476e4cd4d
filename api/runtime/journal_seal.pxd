# Compiled build only (setup.py, docs/build.md): a record's seal in C, for the modules that cimport
# ``seal_record`` (journal_file.pxd: the writer, once per command). journal_seal.py's ``_seal_record``
# is the same rule in Python (which Python callers and the pure build use): the record without its
# closing bracket, the CRC-32 of the file's bytes up to the seal, the seal ``,"xxxxxxxx"]`` and the
# line end, and the chain value after the line. Here zlib's crc32 is called from C (no call through
# the interpreter, no integer object per call), the 8 hex digits are written in C (Python's % formats
# through a string), and the line is one allocation with one copy of the record
# (tests/api/runtime/test_journal_seal.py compares both over many records).

cdef extern from *:
    """
    #include <string.h>
    #include <zlib.h>

    static unsigned long cefisim_crc32(unsigned long crc, const unsigned char *p, Py_ssize_t n) {
        while (n > 0) {  /* zlib takes an unsigned int length: a longer run in pieces */
            unsigned int k = n > 0x40000000 ? 0x40000000u : (unsigned int)n;
            crc = crc32(crc, p, k);
            p += k;
            n -= k;
        }
        return crc;
    }

    static PyObject *cefisim_seal_record(PyObject *data, unsigned long crc, unsigned long *after) {
        static const char digits[] = "0123456789abcdef";
        Py_ssize_t n;
        PyObject *line;
        unsigned char *out;
        int i;
        if (!PyBytes_Check(data)) {
            PyErr_SetString(PyExc_TypeError, "a record to seal is bytes");
            return NULL;
        }
        n = PyBytes_GET_SIZE(data) - 1;  /* the record without its closing bracket */
        if (n < 0) n = 0;
        line = PyBytes_FromStringAndSize(NULL, n + 13);
        if (line == NULL) return NULL;
        out = (unsigned char *)PyBytes_AS_STRING(line);
        memcpy(out, PyBytes_AS_STRING(data), n);
        crc = cefisim_crc32(crc & 0xffffffffUL, out, n);
        out += n;
        out[0] = ',';
        out[1] = '"';
        for (i = 0; i < 8; i++) out[2 + i] = digits[(crc >> (28 - 4 * i)) & 15];
        out[10] = '"';
        out[11] = ']';
        out[12] = '\\n';
        *after = cefisim_crc32(crc, out, 13);
        return line;
    }
    """
    object _seal "cefisim_seal_record" (object data, unsigned long crc, unsigned long *after)


cpdef inline tuple seal_record(data, unsigned long crc):
    cdef unsigned long after
    line = _seal(data, crc, &after)
    return line, after
