"""One side of an order book: its price levels by key, read in key order (best first).

Contract:
- A :class:`Level` keeps its orders in a dict by order id, whose insertion order is arrival order, and
  the total open quantity of those orders (``engine/book.py`` keeps both).
- :class:`Levels` is a ``dict`` of key -> level, so the reads the matching and entry paths make at
  every order (``get``, ``[]``, ``in``, ``len``) are the dict's own. Beside it, the sorted list of its
  keys: iteration, ``keys``, ``values`` and ``items`` go in key order, ``first_key`` is the best key
  and ``keys_through(limit)`` the keys up to a limit.
- Only ``levels[key] = level`` and ``del levels[key]`` change it; the dict methods that would change
  the dict behind the list's back (``pop``, ``popitem``, ``setdefault``, ``update``, ``clear``, ``|=``)
  raise TypeError.
- Complexity: a read O(1); a new key or a deletion O(log n) to find its place, plus, while the side
  holds at most ``SPILL`` keys, a move of the keys better than it (a ``list`` insert or delete, in C;
  the list is kept best last, so a change at the touch moves next to nothing).
  Past ``SPILL`` keys the list becomes a :class:`KeyChunks` (sorted chunks of at most ``CHUNK`` keys,
  for good): a change then moves at most a chunk's keys, and a sweep pops the best keys without a
  search. A book's levels come and go at every cancel and sweep; a new level and its deletion take
  about half the time they take in a ``SortedDict`` or less, up to 100,000 levels
  (``benchmarks/bench_levels.py``).
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterator
from itertools import chain
from operator import neg
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn

if TYPE_CHECKING:
    from cefisim.engine.records import Order

#: keys a side keeps in a plain list; past it, in :class:`KeyChunks` (the measured break-even is ~5,000)
SPILL = 4096
#: keys a chunk of :class:`KeyChunks` holds at most; a fuller chunk splits in two halves
CHUNK = 1024


class Level:
    __slots__ = ("orders", "price", "qty")

    SNAPSHOT: ClassVar[tuple[str, ...]] = __slots__  # every slot is state (api/runtime/snapshot.py)

    def __init__(self, price: int) -> None:
        self.price = price
        self.orders: dict[int, Order] = {}
        self.qty = 0  # sum of open lots of the orders at this level

    def __repr__(self) -> str:
        return f"Level(price={self.price}, orders={len(self.orders)}, qty={self.qty})"


#: the key lists' search and insertion: the bisect module's functions; compiled, levels.pxd's inline ones of
#: the same names (a binary search over the list in C, without a Python call: a level comes and goes at every
#: sweep, and at every few updates of a recorded market)
_bisect_left = bisect_left
_insort = insort
#: whether a side has a key: dict's own test, called as a function (compiled: levels.pxd's direct
#: PyDict_Contains, where ``key in side`` on a dict subclass goes through the generic sequence protocol)
_has = dict.__contains__
#: dict's own item assignment and deletion, under the key list's bookkeeping (compiled: direct calls of
#: PyDict_SetItem and PyDict_DelItem, levels.pxd, where calling the slot wrapper looked it up first)
_dict_set = dict.__setitem__
_dict_del = dict.__delitem__
#: ``level_at(side, key)``: a side's level at ``key``, None when it has none. The dict's own ``get``, called
#: as a function: compiled, a direct dict lookup (levels.pxd), where ``side.get(key)`` on the C type is a
#: method lookup and call
level_at = dict.get
#: ``level_of(side, key)``: a side's level at ``key``, KeyError when it has none. The dict's own item read,
#: called as a function: ``side[key]`` on a book side (a ``Levels``, a Python subclass of ``dict``) goes
#: through the generic ``__getitem__`` slot, which looks up and calls ``dict.__getitem__``; compiled, a
#: direct dict lookup (levels.pxd)
level_of = dict.__getitem__


class KeyChunks:
    """The negated keys of a side past ``SPILL``, ascending: sorted lists (chunks) of at most ``CHUNK``
    keys, every key of a chunk below the next chunk's, and each chunk's largest key (``tops``).

    A key's chunk is a bisect of ``tops`` away, and a new key or a deletion moves at most a chunk's keys
    (a ``list`` insert or delete, in C). The largest key, a side's best, is the last chunk's last: a
    sweep that clears the best levels pops them without a search. A chunk that empties goes; chunks are
    never merged (a side's levels come and go around the touch, which is one or two chunks).
    """

    __slots__ = ("chunks", "tops")

    def __init__(self, negs: list[int]) -> None:
        half = CHUNK // 2
        self.chunks: list[list[int]] = [negs[i : i + half] for i in range(0, len(negs), half)]
        self.tops: list[int] = [chunk[-1] for chunk in self.chunks]

    def add(self, neg: int) -> None:
        """Insert ``neg`` (not present)."""
        chunks, tops = self.chunks, self.tops
        i = _bisect_left(tops, neg)
        if i == len(tops):  # above every key: the last chunk's new top
            if not tops:
                chunks.append([neg])
                tops.append(neg)
                return
            i -= 1
            chunk = chunks[i]
            chunk.append(neg)
            tops[i] = neg
        else:
            chunk = chunks[i]
            _insort(chunk, neg)
        if len(chunk) > CHUNK:
            upper = chunk[CHUNK // 2 :]
            del chunk[CHUNK // 2 :]
            tops[i] = chunk[-1]
            chunks.insert(i + 1, upper)
            tops.insert(i + 1, upper[-1])

    def remove(self, neg: int) -> None:
        """Delete ``neg`` (present)."""
        chunks, tops = self.chunks, self.tops
        i = _bisect_left(tops, neg)
        chunk = chunks[i]
        if tops[i] != neg:
            del chunk[_bisect_left(chunk, neg)]
            return
        chunk.pop()
        if chunk:
            tops[i] = chunk[-1]
        else:
            del chunks[i]
            del tops[i]

    def top(self) -> int | None:
        """The largest key, None when there is none."""
        tops = self.tops
        return tops[-1] if tops else None

    def at_least(self, low: int) -> list[int]:
        """The keys from ``low`` up, largest first."""
        chunks = self.chunks
        i = _bisect_left(self.tops, low)
        out = [neg for chunk in reversed(chunks[i + 1 :]) for neg in reversed(chunk)]
        if i < len(chunks):
            first = chunks[i]
            out += reversed(first[_bisect_left(first, low) :])
        return out

    def __iter__(self) -> Iterator[int]:
        return chain.from_iterable(self.chunks)

    def __reversed__(self) -> Iterator[int]:
        return chain.from_iterable(map(reversed, reversed(self.chunks)))

    def check_invariants(self) -> None:
        """No empty or oversized chunk, and ``tops`` holds each chunk's largest key."""
        assert all(0 < len(chunk) <= CHUNK for chunk in self.chunks), "an empty or oversized key chunk"
        assert self.tops == [chunk[-1] for chunk in self.chunks], "a key chunk's top is stale"


class SortedLevels(dict):  # type: ignore[type-arg]  # key -> Level: a C type takes no subscripted base
    """A book side's dict of levels and the sorted list of its keys: what changes them and the best key.

    A C type in the compiled build (levels.pxd) that subclasses ``dict`` itself, so a new level and a
    deletion are its slots, called directly, and every read is the dict's own. Its key-ordered views are
    :class:`Levels`'s: Cython refuses a C type's ``keys``, ``values`` and ``items`` that differ from the
    dict's.
    """

    # ``_keys`` holds the keys negated, sorted, so the best key is the list's last item: a
    # sweep deletes the best levels and new orders open levels near the touch, and a list insert or
    # delete moves only the items behind the place it changes. Sorted best first, each of those
    # moved the whole list (callgrind: most of the cross stream's memory moves).
    __slots__ = ("_keys",)

    def __init__(self) -> None:
        super().__init__()
        self._keys: list[int] | KeyChunks = []

    def __setitem__(self, key: int, level: Level) -> None:
        if not _has(self, key):
            negs = self._keys
            if isinstance(negs, list):
                _insort(negs, -key)
                if len(negs) > SPILL:
                    self._keys = KeyChunks(negs)
            else:
                negs.add(-key)
        _dict_set(self, key, level)

    def __delitem__(self, key: int) -> None:
        _dict_del(self, key)
        negs, neg = self._keys, -key
        if isinstance(negs, list):
            if negs[-1] == neg:  # the best level (a sweep, a cancel at the touch): no search
                negs.pop()
            else:
                del negs[_bisect_left(negs, neg)]
        else:
            negs.remove(neg)

    def first_key(self) -> int | None:
        """The smallest key (the best level's), None when the side is empty."""
        negs = self._keys
        if isinstance(negs, list):
            return -negs[-1] if negs else None
        top = negs.top()
        return None if top is None else -top

    def keys_through(self, limit: int) -> list[int]:
        """The keys up to and including ``limit``, in order."""
        negs = self._keys
        if isinstance(negs, list):
            return [-n for n in reversed(negs[_bisect_left(negs, -limit) :])]
        return [-n for n in negs.at_least(-limit)]

    def __iter__(self) -> Iterator[int]:
        return map(neg, reversed(self._keys))

    def __reversed__(self) -> Iterator[int]:
        return map(neg, self._keys)

    def check_invariants(self) -> None:
        """The key list holds exactly the dict's keys, sorted."""
        negs = self._keys
        assert list(negs) == sorted(-key for key in dict.keys(self)), "a book side's key list disagrees with its levels"
        if not isinstance(negs, list):
            negs.check_invariants()

    def _unsupported(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("a book side changes only by levels[key] = level and del levels[key]")

    pop = popitem = setdefault = update = clear = __ior__ = _unsupported


class Levels(SortedLevels):
    """A book side: :class:`SortedLevels` read in key order."""

    __slots__ = ()

    def keys(self) -> list[int]:  # type: ignore[override]  # a list in key order, not a live view
        return [-n for n in reversed(self._keys)]

    def values(self) -> Iterator[Level]:  # type: ignore[override]  # in key order
        return map(self.__getitem__, self)

    def items(self) -> list[tuple[int, Level]]:  # type: ignore[override]  # a list in key order
        return [(key, self[key]) for key in self]

    def __reduce__(self) -> tuple[Any, ...]:
        # copy and pickle rebuild through __setitem__ from the items alone: the dict protocol's default
        # would restore the key list first, then add every key to it again
        return (_levels_of, (self.items(),))

    def __repr__(self) -> str:
        return f"Levels({{{', '.join(f'{k!r}: {v!r}' for k, v in self.items())}}})"


def _levels_of(items: list[tuple[int, Level]]) -> Levels:
    levels = Levels()
    for key, level in items:
        levels[key] = level
    return levels


__all__ = ["CHUNK", "SPILL", "KeyChunks", "Level", "Levels", "SortedLevels", "level_at", "level_of"]
