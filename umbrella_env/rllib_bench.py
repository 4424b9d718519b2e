"""Where the time of RLlib training goes: env steps/s with 1, 2, ... env runners.

    python -m umbrella_env.rllib_bench --runners 1 2 [--steps 20000] [any rllib_train option]

For each env-runner count, on a local Ray with this machine's CPUs (or ``--address``): the
algorithm of ``python -m umbrella_env.rllib_train`` with the same options is built, warmed
up by one training iteration, then timed twice:

* **sampling**: every env runner plays ``--steps`` / N env steps at once
  (``EnvRunnerGroup.foreach_env_runner(sample)``), the games only;
* **training**: ``--bench-iterations`` (default 3) training iterations end to end (sampling, the
  learner's PPO update in this process, weight sync), as ``rllib_train`` runs them.

One JSON line per runner count, then a table (docs/scaling.md quotes it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

from umbrella_env.cli_args import command, first_problem, int_problem, set_torch
from umbrella_env.ray_cluster import RayUnavailable, cluster_cpus, import_ray, ray_session, stop_algorithm
from umbrella_env.rllib_train import MULTIPLAYER_ONLY, build_config, build_parser, check_options, quiet_ray
from umbrella_env.training.options import given_among

PROG = "python -m umbrella_env.rllib_bench"


def _steps(episodes: Any) -> int:
    return int(sum(e.env_steps() if hasattr(e, "env_steps") else len(e) for e in episodes))


def _timed_sample(runner: Any, steps: int) -> tuple[int, float]:
    """(env steps, CPU seconds of this process) of one ``sample`` call of an env runner."""
    cpu = time.process_time()
    done = _steps(runner.sample(num_timesteps=steps))
    return done, time.process_time() - cpu


def measure(args: argparse.Namespace, runners: int, steps: int, iterations: int) -> dict[str, Any]:
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME

    set_torch(threads=args.torch_threads)
    args.num_env_runners = runners
    algo = build_config(args).build_algo()
    try:
        algo.train()  # warm-up: actors started, first weights synced
        group = algo.env_runner_group
        share = max(1, steps // max(1, runners))
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        if runners == 0:
            parts = [_timed_sample(algo.env_runner, share)]
        else:
            parts = group.foreach_env_runner(lambda r: _timed_sample(r, share), local_env_runner=False)
        sample_s = time.perf_counter() - t0
        sampled = int(sum(p[0] for p in parts))
        cpu_s = float(sum(p[1] for p in parts))
        before = algo.train()[ENV_RUNNER_RESULTS][NUM_ENV_STEPS_SAMPLED_LIFETIME]
        t0 = time.perf_counter()
        for _ in range(iterations):
            after = algo.train()[ENV_RUNNER_RESULTS][NUM_ENV_STEPS_SAMPLED_LIFETIME]
        train_s = time.perf_counter() - t0
    finally:
        stop_algorithm(algo)
    return {
        "env_runners": runners,
        "sampling_env_steps": sampled,
        "sampling_seconds": round(sample_s, 2),
        "sampling_env_steps_per_s": round(sampled / sample_s, 1),
        # CPU time the env runners got while sampling: on a shared machine, less than runners x seconds
        "sampling_cpu_seconds": round(cpu_s, 2),
        "sampling_env_steps_per_cpu_s": round(sampled / cpu_s, 1),
        "load_average": round(load, 2),
        "training_env_steps": int(after - before),
        "training_seconds": round(train_s, 2),
        "training_env_steps_per_s": round((after - before) / train_s, 1),
    }


def build_bench_parser() -> argparse.ArgumentParser:
    """``rllib_train``'s options plus this benchmark's own (one ``--help`` lists both)."""
    parser = build_parser()
    parser.prog = PROG
    parser.description = __doc__
    own = parser.add_argument_group("benchmark options")
    own.add_argument("--runners", type=int, nargs="+", default=[1, 2], help="env-runner counts to time (default 1 2)")
    own.add_argument("--steps", type=int, default=20_000, help="env steps of the sampling measurement (default 20,000)")
    own.add_argument("--bench-iterations", type=int, default=3, help="timed training iterations (default 3)")
    return parser


#: rllib_train options a benchmark does not use (it writes nothing, evaluates nothing, and
#: sets the env-runner count from --runners): refused when given.
UNUSED = {
    "out", "timesteps", "iterations", "eval_every", "eval_games", "eval_opponent", "pretrain", "pretrain_games",
    "pretrain_epochs", "pretrain_lr", "pretrain_batch", "workers", "num_env_runners",
}  # fmt: skip


@command
def main(argv: Sequence[str] | None = None) -> int:
    parser = build_bench_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)  # a usage error: exit status 2 (command)
    try:
        unused = given_among(build_bench_parser, argv, UNUSED | (MULTIPLAYER_ONLY if args.players == 1 else set()))
        if unused:
            why = " (--runners sets the env runners)" if "--num-env-runners" in unused else ""
            raise ValueError(f"{', '.join(unused)}: not used by this benchmark{why}")
        check_options(args)
        problem = first_problem(
            [int_problem("--runners", r, 0) for r in args.runners]
            + [int_problem("--steps", args.steps), int_problem("--bench-iterations", args.bench_iterations)]
        )
        if problem:
            raise ValueError(problem)
        import_ray(PROG)
    except (ValueError, RayUnavailable) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    quiet_ray()
    rows = []
    try:
        with ray_session(args.address, what=PROG) as ray:
            cpus = cluster_cpus(ray)
            if max(args.runners) > cpus:
                need = max(args.runners)
                print(f"{PROG}: error: {need} env runners need {need} CPUs, the cluster has {cpus}", file=sys.stderr)
                return 2
            for runners in args.runners:
                row = measure(args, runners, args.steps, args.bench_iterations)
                rows.append(row)
                print(json.dumps(row), flush=True)
    except RayUnavailable as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # the rows measured are printed above, as they came
        print(f"\ninterrupted: {len(rows)} of {len(args.runners)} measurement(s) done", file=sys.stderr)
        return 130
    base = rows[0]
    print(f"\n{'env runners':>11} | {'sampling env steps/s':>20} | {'x':>5} | {'CPU s / wall s':>14} | "
          f"{'training env steps/s':>20} | {'x':>5}")  # fmt: skip
    for row in rows:
        print(f"{row['env_runners']:>11} | {row['sampling_env_steps_per_s']:>20,.0f} | "
              f"{row['sampling_env_steps_per_s'] / base['sampling_env_steps_per_s']:>5.2f} | "
              f"{row['sampling_cpu_seconds'] / row['sampling_seconds']:>14.2f} | "
              f"{row['training_env_steps_per_s']:>20,.0f} | "
              f"{row['training_env_steps_per_s'] / base['training_env_steps_per_s']:>5.2f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
