"""What the engine's modules use of Cython's ``cython`` module, for a Python without Cython.

The compiled build (docs/build.md) reads a few class decorators from ``cython`` that only the compiler
understands; interpreted, Cython's own ``cython`` module makes them return the class unchanged, and so
does this one, so the pure package needs no Cython installed. A module imports it as::

    try:
        import cython
    except ImportError:  # the pure package, without Cython
        from cefisim.engine import nocython as cython  # type: ignore[no-redef]  # the same names as cython
"""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")
#: a C ``long long`` compiled (ledger.py's NATIVE); interpreted, Python's int
longlong = int


def cast(kind: type[T], value: T) -> T:
    """Compiled: ``value`` converted to the C type ``kind``. Interpreted: ``value`` itself."""
    return value


def cclass(cls: T) -> T:
    """Compiled: the class is a C type (its ``.pxd`` says so as well). Interpreted: the class itself."""
    return cls


def no_gc(cls: T) -> T:
    """Compiled: the cycle collector does not track the C type's objects, for a class whose fields can
    never lead back to the object (numbers, strings, tuples of them). Interpreted: the class itself."""
    return cls
