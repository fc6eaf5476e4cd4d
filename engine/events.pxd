# Compiled build only (setup.py, docs/build.md): an event built by a direct C call. Calling
# ``tuple.__new__`` from compiled code goes through the generic call protocol and the argument checks of
# ``tuple.__new__`` before ``tuple``'s subtype constructor copies the field tuple: most of the cost of an
# event. A module that cimports ``build_event`` gets ``_new_event`` instead. An event kind is a tuple
# subclass adding no storage, so the event is the field tuple itself under its kind's type: the tuple
# the call site has just built (``build_event(Kind, (field, ...))``, a display with at least one field
# that is not a constant, tests/engine/test_events.py) is referred to by nothing else (its reference count
# is 1: the caller's), and it takes the kind's type (and a reference to it) instead of being copied into
# a new one and freed. Any other tuple is copied (the kind's allocator, then each field). Python callers
# (and the pure build) keep ``build_event = tuple.__new__`` from events.py; all give the same tuple of the
# same type.

cdef extern from *:
    """
    static PyObject *cefisim_new_event(PyObject *kind, PyObject *fields) {
        Py_ssize_t i, n = PyTuple_GET_SIZE(fields);
        PyObject *event;
        if (n > 0 && Py_REFCNT(fields) == 1 && Py_IS_TYPE(fields, &PyTuple_Type)) {
            /* the caller's new tuple, which nothing else refers to: it becomes the event. A tuple of the
               kind is laid out as a tuple (no storage added), allocated and freed as one (tuple's own
               deallocation keeps only exact tuples for reuse) */
            Py_INCREF(kind);
            Py_SET_TYPE(fields, (PyTypeObject *)kind);
            Py_INCREF(fields);
            return fields;
        }
        event = ((PyTypeObject *)kind)->tp_alloc((PyTypeObject *)kind, n);
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
