"""A random policy and a simple hand-written one in cefisim's Gymnasium environment (docs/gym.md).

    pip install 'cefisim[gym]'
    python -m cefisim.examples.gym_random_and_simple [--scenario population] [--steps 300] [--seed 1]

Nothing is trained: the point is the interface. The simple policy is a market maker of its own: it
quotes one tick either side of the mid while its inventory is small, leans out of a position past
``LIMIT`` lots with a market order, and otherwise keeps its quotes. Both run on the same seed, so
they face the same population of agents (which then react to what each does).
"""

from __future__ import annotations

import argparse
import time

from cefisim.api.cli.common.extras import missing_extra

try:  # the [gym] extra (gymnasium, numpy): without it, one line saying how to get it, not a traceback
    import numpy as np

    from cefisim.gym import MARKET_BUY, MARKET_SELL, NOTHING, VenueEnv
except ModuleNotFoundError as exc:
    raise SystemExit(f"cefisim: {missing_extra(exc, 'gym', 'this example')}") from None

LIMIT = 3  # lots of inventory before the simple policy trades out


def simple(obs: np.ndarray, env: VenueEnv) -> int:
    d = env.depth
    inventory, bids, asks = obs[4 * d], obs[4 * d + 2], obs[4 * d + 3]
    if inventory > LIMIT:
        return MARKET_SELL
    if inventory < -LIMIT:
        return MARKET_BUY
    if bids == 0 or asks == 0:
        return 4  # (re)quote at the first offset (one tick) either side of the mid
    return NOTHING


def episode(env: VenueEnv, policy: str, seed: int) -> tuple[float, int, float]:
    obs, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    total, steps = 0.0, 0
    start = time.perf_counter()
    while True:
        action = env.action_space.sample() if policy == "random" else simple(obs, env)
        obs, reward, terminated, truncated, _ = env.step(action)
        total += reward
        steps += 1
        if terminated or truncated:
            return total, steps, steps / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenario", default="population")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    env = VenueEnv(args.scenario, offsets=(1, 3, 10), max_steps=args.steps, inventory_penalty=0.5)
    for policy in ("random", "simple"):
        total, steps, rate = episode(env, policy, args.seed)
        print(f"{policy:>6}: {steps} steps, reward {total:+.2f} (quote currency), {rate:,.0f} steps/s")


if __name__ == "__main__":
    main()
