# Compiled build only (setup.py, docs/build.md): the clock's two times as C struct fields (Python ints:
# nanoseconds since 1970 would fit a C long, but a snapshot may hold any int). clock.py's __slots__.

cimport cython

@cython.final
cdef class Clock:
    cdef public object last, now

    cpdef advance(self, to_ns)

    cpdef stamp(self)
