# Compiled build only (setup.py, docs/build.md): a level's attributes as C struct fields, and a book side's
# dict of levels a C type that subclasses dict itself, so that its reads stay the dict's own while a new
# level and a deletion are its own slots (no Python-level method in between) and dict's item assignment
# and deletion under them direct C calls. Each attribute here is one of the class's __slots__ in
# levels.py (tests/test_build.py).
cimport cython

cdef extern from "Python.h":
    int PyDict_SetItem(object mapping, object key, object value) except -1
    int PyDict_DelItem(object mapping, object key) except -1
    int PyList_Insert(object sequence, Py_ssize_t index, object item) except -1
    int PyDict_Contains(object mapping, object key) except -1

cpdef inline bint _has(dict mapping, key) except -1:
    return PyDict_Contains(mapping, key)

# bisect's bisect_left and insort (insort_right) on a key list, as C loops (the same comparisons)
cpdef inline Py_ssize_t _bisect_left(list a, x) except -1:
    cdef Py_ssize_t lo = 0, hi = len(a), mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo

cpdef inline _insort(list a, x):
    cdef Py_ssize_t lo = 0, hi = len(a), mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if x < a[mid]:
            hi = mid
        else:
            lo = mid + 1
    PyList_Insert(a, lo, x)

cpdef inline _dict_set(dict mapping, key, value):
    PyDict_SetItem(mapping, key, value)

cpdef inline _dict_del(dict mapping, key):
    PyDict_DelItem(mapping, key)

cpdef inline level_at(dict side, key):
    return side.get(key)

cpdef inline level_of(dict side, key):
    return side[key]

@cython.final
cdef class Level:
    cdef public object price, qty
    cdef public dict orders

@cython.final
cdef class KeyChunks:
    cdef public list chunks, tops

    @cython.locals(chunk=list, upper=list)
    cpdef add(self, neg)

    @cython.locals(chunk=list)
    cpdef remove(self, neg)

    cpdef top(self)

cdef class SortedLevels(dict):
    cdef public object _keys

    cpdef first_key(self)
