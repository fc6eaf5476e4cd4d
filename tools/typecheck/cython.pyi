# The part of Cython's ``cython`` module the engine uses, for the type checker (Cython ships no types).
# engine/nocython.py is the same three names for a Python without Cython.
from typing import TypeVar

_T = TypeVar("_T")

compiled: bool

def cclass(cls: _T) -> _T: ...
def no_gc(cls: _T) -> _T: ...
