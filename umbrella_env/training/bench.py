"""MaskablePPO training throughput: the native vector env against a per-game peer.

    python -m umbrella_env.training.bench                  # train.py's defaults, solo level 1
    python -m umbrella_env.training.bench --n-epochs 2 --features none

Trains the same MaskablePPO (``umbrella_env.training.ppo.build_model`` with train.py's default
hyperparameters, overridable with train.py's own options) for ``--bench-timesteps`` decisions

* on the native batched vector env (:class:`~umbrella_env.envs.sb3.UmbrellaSB3VecEnv`), and
* on the peer SB3 users would build by hand: ``DummyVecEnv`` over ``--n-envs`` single
  ``umbrella_env/Solo-v0`` envs (masks through ``action_masks()``),

after one warm-up rollout each, and prints env steps/s and the ratio.  Needs the train extra.
"""

from __future__ import annotations

import argparse
import sys
import time

import gymnasium as gym
import torch
from stable_baselines3.common.vec_env import DummyVecEnv

import umbrella_env  # noqa: F401  (registers the envs)
from umbrella_env.core.config import GameConfig
from umbrella_env.core.errors import ConfigError
from umbrella_env.envs.sb3 import UmbrellaSB3VecEnv
from umbrella_env.training import ppo as train
from umbrella_env.training.options import given_among

#: train.py options that shape the model and the envs timed here; the others (output,
#: resume, cloning, evaluation, opponents, ...) would be ignored, and are refused when given.
USED = {"batch_size", "ent_coef", "features", "learning_rate", "level", "max_turns", "n_envs", "n_epochs", "net",
        "players", "seed", "torch_threads", "bench_timesteps", "skip_peer"}  # fmt: skip


def _measure(model, timesteps: int) -> float:
    """Env steps/s of ``model.learn`` after a warm-up rollout; the steps counted are those
    learn ran (whole rollouts of ``n_steps x n_envs``, so at least ``timesteps``)."""
    model.learn(model.n_steps * model.n_envs)  # warm-up rollout and update
    before = model.num_timesteps
    t0 = time.perf_counter()
    model.learn(timesteps, reset_num_timesteps=False)
    return (model.num_timesteps - before) / (time.perf_counter() - t0)


def build_parser() -> argparse.ArgumentParser:
    """train.py's parser (its model options apply) plus this benchmark's own options."""
    parser = train.build_parser()
    parser.description = __doc__
    parser.set_defaults(players=1)
    parser.add_argument("--bench-timesteps", type=int, default=60_000, help="decisions timed per env")
    parser.add_argument("--skip-peer", action="store_true", help="time the native vector env only")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = train.resolve_defaults(parser.parse_args(argv))
    if args.players != 1:
        parser.error("bench_train measures solo training (the native vector env is solo); use --players 1")
    unused = given_among(build_parser, argv, {a.dest for a in parser._actions} - USED)
    if unused:
        parser.error(f"{', '.join(unused)}: not used by this benchmark (it times training only)")
    try:
        train.check_options(args)
        if args.bench_timesteps < 1:
            raise ValueError(f"--bench-timesteps must be at least 1, got {args.bench_timesteps}")
        GameConfig(num_players=1, plate_level=args.level, max_turns=args.max_turns)
    except (ValueError, ConfigError) as exc:
        parser.error(str(exc))
    args.torch_threads = args.torch_threads or train.default_threads()
    torch.set_num_threads(max(1, args.torch_threads))
    print(
        f"MaskablePPO, solo level {args.level}, {args.n_envs} games, {train.N_STEPS} steps per rollout, "
        f"{args.n_epochs} epochs, minibatch {args.batch_size}, net {args.net}, features {args.features}, "
        f"torch threads {args.torch_threads}",
        flush=True,
    )
    native = UmbrellaSB3VecEnv(num_envs=args.n_envs, plate_level=args.level, max_turns=args.max_turns)
    native.seed(args.seed)
    rate = _measure(train.build_model(args, native), args.bench_timesteps)
    print(f"native vector env       {rate:10,.0f} env steps/s", flush=True)
    if args.skip_peer:
        return 0
    peer = DummyVecEnv(
        [
            (lambda i=i: gym.make("umbrella_env/Solo-v0", plate_level=args.level, max_turns=args.max_turns))
            for i in range(args.n_envs)
        ]
    )
    peer.seed(args.seed)
    peer_rate = _measure(train.build_model(args, peer), args.bench_timesteps)
    print(f"DummyVecEnv of Solo-v0  {peer_rate:10,.0f} env steps/s", flush=True)
    print(f"ratio native / peer     {rate / peer_rate:10.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
