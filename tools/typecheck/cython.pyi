# The part of Cython's ``cython`` module the engine uses, for the type checker (Cython ships no types).
# engine/nocython.py gives the same names for a Python without Cython.
from typing import TypeVar

_T = TypeVar("_T")

longlong = int

def cast(kind: type[_T], value: _T) -> _T: ...
def cclass(cls: _T) -> _T: ...
def no_gc(cls: _T) -> _T: ...
