# Compiled build only (setup.py, docs/build.md): a grid's attributes as C struct fields and its
# conversions as direct calls (order entry parses a price and a quantity per order). Each attribute
# here is one of Grid's __slots__ in units.py (tests/test_build.py).
cimport cython

@cython.final
cdef class Grid:
    cdef public dict _cache, _texts
    cdef public object _pow, coef, scale, text, zero

    cpdef parse(self, text)
    cpdef _is_canonical(self, text)
    cpdef to_units(self, text)
    cpdef format(self, units)
    cpdef _format(self, units)

cpdef parse_decimal(text)
