"""A book side (engine/levels.py): a dict read in key order, the same as a sorted mapping whatever the
sequence of new keys and deletions, below and past the size where its key list becomes chunks."""

from __future__ import annotations

import copy
import pickle
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cefisim.engine.levels import CHUNK, SPILL, KeyChunks, Levels


def _same_as_sorted(levels: Levels, model: dict[int, str]) -> None:
    levels.check_invariants()
    order = sorted(model)
    assert list(levels) == order
    assert levels.keys() == order
    assert list(levels.values()) == [model[k] for k in order]
    assert levels.items() == [(k, model[k]) for k in order]
    assert list(reversed(levels)) == order[::-1]
    assert levels.first_key() == (order[0] if order else None)
    assert dict(levels) == model


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(-50, 50)), max_size=200))
def test_a_side_reads_in_key_order_after_any_changes(steps: list[tuple[bool, int]]) -> None:
    levels: Levels = Levels()
    model: dict[int, str] = {}
    for put, key in steps:
        if put:
            levels[key] = model[key] = f"level {key} #{len(model)}"  # a new level, or the key's level again
        elif key in model:
            del levels[key]
            del model[key]
        _same_as_sorted(levels, model)
    for limit in (-51, -1, 0, 7, 51):
        assert levels.keys_through(limit) == [k for k in sorted(model) if k <= limit]


def test_past_the_spill_size_a_side_keeps_its_order_and_bounds() -> None:
    levels: Levels = Levels()
    model: dict[int, str] = {}
    for i in range(SPILL + 200):
        key = (i * 7919) % (SPILL + 200)  # every key once, out of order
        levels[key] = model[key] = str(key)
    assert type(levels._keys) is KeyChunks
    for key in range(0, SPILL + 200, 3):
        del levels[key]
        del model[key]
    levels[-1] = model[-1] = "best"
    _same_as_sorted(levels, model)
    assert levels.keys_through(10) == [k for k in sorted(model) if k <= 10]


def test_a_spilled_side_splits_and_empties_its_chunks_in_order() -> None:
    """New keys anywhere (each chunk splits when full) and deletions anywhere, the best most often (a
    chunk empties and goes), down to no key at all and up again."""
    rng = random.Random(43)
    levels: Levels = Levels()
    model: dict[int, str] = {}
    for key in range(SPILL + 1):
        levels[2 * key] = model[2 * key] = str(key)
    spilled = levels._keys
    assert type(spilled) is KeyChunks
    made = len(spilled.chunks)
    span = 8 * SPILL
    for step in range(12 * CHUNK):
        if rng.random() < 0.55:
            key = rng.randrange(-span, span)
            levels[key] = model[key] = str(step)
        elif model:
            key = min(model) if rng.random() < 0.5 else rng.choice(list(model))
            del levels[key]
            del model[key]
        if step % 997 == 0:
            _same_as_sorted(levels, model)
    assert len(spilled.chunks) > made  # chunks were split
    _same_as_sorted(levels, model)
    for limit in (-span - 1, -5, 0, 17, span):
        assert levels.keys_through(limit) == [k for k in sorted(model) if k <= limit]
    for key in sorted(model):  # best first: the last chunk empties first, every time
        del levels[key]
        del model[key]
    assert levels._keys is spilled and spilled.chunks == [] and levels.first_key() is None
    _same_as_sorted(levels, model)
    assert levels.keys_through(0) == []
    for key in (3, -1, 7):
        levels[key] = model[key] = str(key)
    _same_as_sorted(levels, model)


def test_copies_and_pickles_keep_every_key_once() -> None:
    levels: Levels = Levels()
    for key in (5, -3, 9, 0):
        levels[key] = str(key)
    for twin in (copy.deepcopy(levels), copy.copy(levels), pickle.loads(pickle.dumps(levels))):
        assert type(twin) is Levels
        _same_as_sorted(twin, {5: "5", -3: "-3", 9: "9", 0: "0"})


@pytest.mark.parametrize("change", ["pop", "popitem", "setdefault", "update", "clear"])
def test_a_change_behind_the_key_list_is_refused(change: str) -> None:
    levels: Levels = Levels()
    levels[1] = "one"
    args = {"pop": (1,), "popitem": (), "setdefault": (2, "two"), "update": ({2: "two"},), "clear": ()}[change]
    with pytest.raises(TypeError, match="changes only by"):
        getattr(levels, change)(*args)
    with pytest.raises(TypeError):
        levels |= {2: "two"}
    _same_as_sorted(levels, {1: "one"})
