"""Benchmark of the environments against PettingZoo's connect_four_v3 (not a test).

In one run, with the same random-legal-move loop for every env:

* the AEC env (2 and 4 players) vs ``pettingzoo.classic.connect_four_v3`` (needs pygame:
  ``pip install -c constraints.txt -e ".[bench]"``): ``agent_iter`` / ``last`` / a uniformly random action
  from the observation's mask / ``step``;
* the Gymnasium solo env (``gymnasium.make``): a random action from ``info["action_mask"]``;
* the native vector env at ``--num-envs`` games: actions from the core's random sampler.

    python -m umbrella_env.tools.bench_envs [--seconds 5] [--num-envs 1024] [--skip-peer]

``--skip-peer`` times our envs only (no pygame needed, no ratio column).

Every row counts **decisions**: an AEC ``step(None)`` of an agent already done is not one,
nor is the slot of a vector game waiting for its autoreset.

Targets (issue #3): AEC >= 2x connect_four_v3, solo env >= 3x connect_four_v3, vector env
>= 500,000 steps/s at 1024 envs.
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

import umbrella_env
from umbrella_env.cli_args import HelpFormatter, command, first_problem, install_hint, int_problem, real_problem
from umbrella_env.core import engine as E
from umbrella_env.envs.vector import UmbrellaSoloVectorEnv

#: The largest --num-envs: about 18 kB of memory per env of the vector env (observations,
#: masks, the games; measured), so 100,000 envs about 1.8 GB; 10**9 was NumPy's MemoryError.
MAX_NUM_ENVS = 100_000


def aec_steps_per_second(make_env: Callable[[], Any], seconds: float, seed: int = 0) -> float:
    env = make_env()
    rng = np.random.default_rng(seed)
    steps = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        env.reset(seed=int(rng.integers(2**31)))
        for _agent in env.agent_iter():
            obs, reward, termination, truncation, info = env.last()
            if termination or truncation:
                env.step(None)  # stepping a finished agent out: not a decision
                continue
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            steps += 1
            if steps % 256 == 0 and time.perf_counter() - t0 >= seconds:
                break
    return steps / (time.perf_counter() - t0)


def solo_steps_per_second(seconds: float, seed: int = 0) -> float:
    env = gym.make("umbrella_env/Solo-v0")
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    steps = 0
    t0 = time.perf_counter()
    while True:
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        steps += 1
        if terminated or truncated:
            obs, info = env.reset()
        if steps % 256 == 0 and time.perf_counter() - t0 >= seconds:
            break
    return steps / (time.perf_counter() - t0)


def vector_steps_per_second(num_envs: int, seconds: float, seed: int = 0) -> float:
    env = gym.make_vec("umbrella_env/Solo-v0", num_envs=num_envs, vectorization_mode="vector_entry_point")
    inner = env.unwrapped
    assert isinstance(inner, UmbrellaSoloVectorEnv)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    steps = calls = 0
    t0 = time.perf_counter()
    while True:
        actions = E.random_legal_actions(inner._state, rng)
        env.step(np.maximum(actions, 0))  # -1 only for games waiting for their autoreset
        steps += int((actions >= 0).sum())  # decisions: the waiting games' slots are not
        calls += 1
        if calls % 16 == 0 and time.perf_counter() - t0 >= seconds:
            break
    return steps / (time.perf_counter() - t0)


@command
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m umbrella_env.tools.bench_envs",
        description=__doc__,
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds timed per env")
    parser.add_argument(
        "--num-envs", type=int, default=1024, help=f"envs of the vector env, 1 to {MAX_NUM_ENVS:,} (default 1024)"
    )
    parser.add_argument(
        "--skip-peer", action="store_true", help="time our envs only: no connect_four_v3, no pygame, no ratios"
    )
    args = parser.parse_args(argv)
    problem = first_problem(
        [
            real_problem("--seconds", args.seconds, positive=True),
            int_problem("--num-envs", args.num_envs, 1, MAX_NUM_ENVS),
        ]
    )
    if problem:
        parser.error(problem)
    peer = math.nan
    if not args.skip_peer:
        try:
            from pettingzoo.classic import connect_four_v3
        except ImportError as exc:
            parser.error(
                f"connect_four_v3 is not importable ({exc}); install the bench extra: "
                f"{install_hint('bench')}, or give --skip-peer to time our envs only"
            )
        peer = aec_steps_per_second(connect_four_v3.env, args.seconds)

    def row(name: str, sps: float) -> None:
        ratio = "" if math.isnan(peer) else f" {sps / peer:18.2f}"
        print(f"{name:<34} {sps:12,.0f}{ratio}", flush=True)

    print(f"{'env':<34} {'steps/s':>12}" + ("" if args.skip_peer else f" {'x connect_four_v3':>18}"))
    if not args.skip_peer:
        row("pettingzoo connect_four_v3 (AEC)", peer)
    for players in (2, 4):
        make_env = functools.partial(umbrella_env.env, num_players=players)
        row(f"umbrella AEC, {players} players", aec_steps_per_second(make_env, args.seconds))
    row("umbrella solo (gymnasium.make)", solo_steps_per_second(args.seconds))
    row(f"umbrella vector env, {args.num_envs} envs", vector_steps_per_second(args.num_envs, args.seconds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
