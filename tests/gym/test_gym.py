"""cefisim.gym: a Gymnasium environment over any scenario, deterministic, vectorisable."""

from __future__ import annotations

import dataclasses
import functools
import warnings

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import check_env  # noqa: E402
from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv  # noqa: E402

from cefisim.gym import CANCEL, MARKET_BUY, MARKET_SELL, NOTHING, VenueEnv  # noqa: E402


def rollout(env: VenueEnv, seed: int, actions: list[int]) -> list[tuple[bytes, float]]:
    obs, _ = env.reset(seed=seed)
    out = [(obs.tobytes(), 0.0)]
    for a in actions:
        obs, reward, terminated, _, _ = env.step(a)
        assert not terminated
        out.append((obs.tobytes(), reward))
    return out


@pytest.mark.parametrize("scenario", ["demo", "population", "recorded_busy"])
def test_passes_the_env_checker(scenario: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the checker's advice on render modes, not an error
        check_env(VenueEnv(scenario, max_steps=20), skip_render_check=True)


def test_same_seed_and_actions_give_identical_observations() -> None:
    actions = [4, NOTHING, MARKET_BUY, 5, CANCEL, MARKET_SELL, 6, NOTHING] * 3
    first = rollout(VenueEnv("population"), 7, actions)
    second = rollout(VenueEnv("population"), 7, actions)
    assert first == second
    other = rollout(VenueEnv("population"), 8, actions)
    assert other != first  # the seed reseeds the scenario's agents


def test_later_resets_draw_their_seed_from_the_first() -> None:
    env = VenueEnv("demo")
    _, first = env.reset(seed=3)
    _, second = env.reset()
    again = VenueEnv("demo")
    again.reset(seed=3)
    assert again.reset()[1]["seed"] == second["seed"] != first["seed"]


def test_actions_do_what_they_say() -> None:
    env = VenueEnv("demo", qty="0.01", offsets=(3,))
    obs, _ = env.reset(seed=1)
    d = env.depth
    inventory, cash, bids, asks = 4 * d, 4 * d + 1, 4 * d + 2, 4 * d + 3
    obs, *_ = env.step(MARKET_BUY)
    inst = env.venue.instruments[env.instrument_id]
    lots = round(0.01 / float(inst.qty_grid.format(1)))
    assert obs[inventory] == lots and obs[cash] < 0
    obs, *_ = env.step(MARKET_SELL)
    assert obs[inventory] == 0
    obs, *_ = env.step(4)  # quote 3 ticks either side of the mid
    assert (obs[bids], obs[asks]) == (1, 1)
    obs, *_ = env.step(4)  # requote: the old pair is cancelled first
    assert (obs[bids], obs[asks]) <= (1, 1)
    obs, *_ = env.step(CANCEL)
    assert (obs[bids], obs[asks]) == (0, 0)


def test_reward_is_the_equity_change_less_the_inventory_penalty() -> None:
    plain = VenueEnv("demo", qty="0.01")
    taxed = VenueEnv("demo", qty="0.01", inventory_penalty=100.0)
    plain.reset(seed=2)
    taxed.reset(seed=2)
    for a in (MARKET_BUY, NOTHING, NOTHING):
        _, r_plain, *_ = plain.step(a)
        _, r_taxed, *_ = taxed.step(a)
        assert r_taxed == pytest.approx(r_plain - 100.0 * 0.01)
    _, info = plain.reset(seed=2)
    opening = info["equity"]
    rewards = []
    for a in (MARKET_BUY, 4, NOTHING, MARKET_SELL, NOTHING):
        _, reward, _, _, info = plain.step(a)
        rewards.append(reward)
    assert sum(rewards) == pytest.approx(info["equity"] - opening)
    assert sum(rewards) != 0  # fees and the spread cost something


def test_episodes_end_at_max_steps_or_the_scenarios_end() -> None:
    env = VenueEnv("demo", max_steps=3)
    env.reset(seed=0)
    assert [env.step(NOTHING)[3] for _ in range(3)] == [False, False, True]
    demo = VenueEnv("demo").scenario
    short = VenueEnv(dataclasses.replace(demo, end_ns=demo.start_ns + 5 * 10**9), step_seconds=2)
    short.reset(seed=0)
    assert [short.step(NOTHING)[3] for _ in range(3)] == [False, False, True]


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="no client 'nobody'"):
        VenueEnv("demo", client="nobody")
    with pytest.raises(ValueError, match="step_seconds"):
        VenueEnv("demo", step_seconds=0)
    env = VenueEnv("demo")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="not in Discrete"):
        env.step(99)


def test_gymnasium_make_finds_it() -> None:
    env = gymnasium.make("cefisim/Venue-v0", scenario="demo", max_steps=2)
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)


def _vector_rollout(vec: gymnasium.vector.VectorEnv, steps: int) -> list[np.ndarray]:
    obs, _ = vec.reset(seed=[11, 12])
    out = [obs.copy()]
    for k in range(steps):
        obs, *_ = vec.step(np.array([k % 7, (k + 3) % 7]))
        out.append(obs.copy())
    vec.close()
    return out


def test_several_venues_in_one_process_and_in_subprocesses() -> None:
    make = functools.partial(VenueEnv, "demo", max_steps=50)
    sync = _vector_rollout(SyncVectorEnv([make, make]), 10)
    single = rollout(VenueEnv("demo"), 11, [k % 7 for k in range(10)])
    assert [o[0].tobytes() for o in sync] == [s for s, _ in single]  # each venue is its own
    assert not np.array_equal(sync[-1][0], sync[-1][1])
    subprocesses = _vector_rollout(AsyncVectorEnv([make, make]), 10)
    assert all(np.array_equal(a, b) for a, b in zip(sync, subprocesses, strict=True))


def test_the_shipped_example_runs_both_policies(capsys: pytest.CaptureFixture[str]) -> None:
    """``python -m cefisim.examples.gym_random_and_simple`` (docs/gym.md): both policies play a whole
    episode of the steps asked for."""
    from cefisim.examples.gym_random_and_simple import main

    main(["--scenario", "demo", "--steps", "20", "--seed", "3"])
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0].strip() for line in lines] == ["random", "simple"]
    assert all(" 20 steps, reward " in line for line in lines)
