"""MaskablePPO training throughput: the native vector env against a per-game peer.

    python -m umbrella_env.training.bench                  # train.py's defaults, solo level 1
    python -m umbrella_env.training.bench --n-epochs 2 --features none

Trains the same MaskablePPO (``umbrella_env.training.ppo.build_model`` with train.py's default
hyperparameters, overridable with train.py's own options) for ``--bench-timesteps`` decisions

* on the native batched vector env (:class:`~umbrella_env.envs.sb3.UmbrellaSB3VecEnv`), and
* on the peer SB3 users would build by hand: ``DummyVecEnv`` over ``--n-envs`` single
  ``umbrella_env/Solo-v0`` envs (masks through ``action_masks()``),

after one warm-up rollout each, and prints env steps/s and the ratio.  The timed decisions
are split into ``--rounds`` rounds that alternate the two (native then peer, then peer then
native, ...), so a change of the machine's load during the run falls on both; the summary
gives each env's rate over all its rounds and the median of the rounds' ratios.  On a
machine shared with other work, ``--torch-threads 1`` keeps torch's threads from waiting on
busy cores (seen at 10x slower updates with 2 threads on 2 busy cores).  Needs the train extra.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import gymnasium as gym
import numpy as np

import umbrella_env  # noqa: F401  (registers the envs)
from umbrella_env.cli_args import MissingExtra, command, first_problem, int_problem, missing_extra, set_torch

try:  # the train extra's packages only: an ImportError of this project's own code is a bug's
    import torch  # noqa: F401  (set_torch sets its threads)
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv
except ImportError as exc:  # pragma: no cover - exercised only without the train extra
    missing_extra(__name__, exc, "the training benchmark")
try:
    from umbrella_env.training import ppo as train
except MissingExtra as exc:  # pragma: no cover - torch without sb3-contrib
    missing_extra(__name__, exc, "the training benchmark")
from umbrella_env.core.config import GameConfig
from umbrella_env.core.errors import ConfigError
from umbrella_env.envs.sb3 import UmbrellaSB3VecEnv
from umbrella_env.parallel import local_cpus
from umbrella_env.training.options import given_among, given_options

#: train.py options that shape the model and the envs timed here; the others (output,
#: resume, cloning, evaluation, opponents, ...) would be ignored, and are refused when given.
USED = {"batch_size", "ent_coef", "features", "learning_rate", "level", "max_turns", "n_envs", "n_epochs", "net",
        "players", "seed", "torch_threads", "bench_timesteps", "skip_peer", "rounds"}  # fmt: skip


def _warm_up(model: MaskablePPO) -> None:
    """One rollout and update, outside the timing."""
    model.learn(model.n_steps * model.n_envs)


def _timed(model: MaskablePPO, timesteps: int) -> tuple[int, float]:
    """(env steps, seconds) of ``model.learn(timesteps)``; the steps counted are those learn
    ran (whole rollouts of ``n_steps x n_envs``, so at least ``timesteps``)."""
    before = model.num_timesteps
    t0 = time.perf_counter()
    model.learn(timesteps, reset_num_timesteps=False)
    return model.num_timesteps - before, time.perf_counter() - t0


def build_parser() -> argparse.ArgumentParser:
    """train.py's parser (its model options apply) plus this benchmark's own options; the
    help shows only the options in :data:`USED` (the others are parsed, then refused)."""
    parser = train.build_parser()
    parser.prog = "python -m umbrella_env.training.bench"
    parser.description = __doc__
    parser.set_defaults(players=1)
    parser.add_argument("--bench-timesteps", type=int, default=60_000, help="decisions timed per env")
    parser.add_argument("--skip-peer", action="store_true", help="time the native vector env only")
    parser.add_argument(
        "--rounds", type=int, default=3, help="alternating rounds the timed decisions are split into (default 3)"
    )
    parser.epilog = None  # train.py's, about its other trainer
    for action in parser._actions:
        if action.dest == "players":
            action.help = "1 only: the native vector env is solo"
        elif action.dest not in USED | {"help"}:
            action.help = argparse.SUPPRESS
    return parser


@command
def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = train.resolve_defaults(parser.parse_args(argv))
    if args.players != 1:
        parser.error("this benchmark measures solo training (the native vector env is solo); use --players 1")
    unused = given_among(build_parser, argv, {a.dest for a in parser._actions} - USED)
    if unused:
        parser.error(f"{', '.join(unused)}: not used by this benchmark (it times training only)")
    try:
        train.check_options(args, given_options(build_parser, argv))
        problem = first_problem(
            [int_problem("--bench-timesteps", args.bench_timesteps), int_problem("--rounds", args.rounds)]
        )
        if problem:
            raise ValueError(problem)
        least = args.rounds * train.N_STEPS * args.n_envs
        if args.bench_timesteps < least:  # it timed a whole rollout per round, whatever was asked
            raise ValueError(
                f"--bench-timesteps {args.bench_timesteps} is less than one rollout per round: each round times "
                f"whole rollouts, so give at least --rounds {args.rounds} x {train.N_STEPS} steps x --n-envs "
                f"{args.n_envs} = {least:,}"
            )
        GameConfig(num_players=1, plate_level=args.level, max_turns=args.max_turns)
    except (ValueError, ConfigError) as exc:
        parser.error(str(exc))
    args.torch_threads = args.torch_threads or local_cpus()
    set_torch(threads=max(1, args.torch_threads))
    print(
        f"MaskablePPO, solo level {args.level}, {args.n_envs} games, {train.N_STEPS} steps per rollout, "
        f"{args.n_epochs} epochs, minibatch {train.minibatch(args.batch_size, args.n_envs)} (at most a rollout), "
        f"net {args.net}, features {args.features}, "
        f"torch threads {args.torch_threads}",
        flush=True,
    )
    native = UmbrellaSB3VecEnv(num_envs=args.n_envs, plate_level=args.level, max_turns=args.max_turns)
    native.seed(args.seed)
    models = {"native vector env": train.build_model(args, native)}
    if not args.skip_peer:

        def solo_env() -> gym.Env[Any, Any]:
            return gym.make("umbrella_env/Solo-v0", plate_level=args.level, max_turns=args.max_turns)

        peer = DummyVecEnv([solo_env] * args.n_envs)
        peer.seed(args.seed)
        models["DummyVecEnv of Solo-v0"] = train.build_model(args, peer)
    for model in models.values():
        _warm_up(model)
    per_round = -(-args.bench_timesteps // args.rounds)
    steps_in = dict.fromkeys(models, 0)
    seconds_in = dict.fromkeys(models, 0.0)
    ratios = []
    for r in range(args.rounds):
        rates = {}
        for name in list(models)[:: 1 if r % 2 == 0 else -1]:
            steps, seconds = _timed(models[name], per_round)
            steps_in[name] += steps
            seconds_in[name] += seconds
            rates[name] = steps / seconds
        line = ", ".join(f"{name} {rate:,.0f}" for name, rate in rates.items())
        if len(rates) == 2:
            ratios.append(rates["native vector env"] / rates["DummyVecEnv of Solo-v0"])
            line += f", ratio {ratios[-1]:.2f}"
        print(f"round {r + 1}/{args.rounds}: {line} env steps/s", flush=True)
    for name, steps in steps_in.items():
        seconds = seconds_in[name]
        print(f"{name:<24}{steps / seconds:10,.0f} env steps/s ({steps:,} steps in {seconds:.1f} s)", flush=True)
    if ratios:
        print(f"ratio native / peer     {float(np.median(ratios)):10.2f} (median of {len(ratios)} rounds)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
