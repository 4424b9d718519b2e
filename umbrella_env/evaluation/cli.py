"""The evaluation command: ``python evaluate.py`` (from a clone) or ``umbrella-evaluate``.

    python evaluate.py --agents random greedy heuristic runs/ppo/best.zip --players 2 --games 200

Bad input exits with status 2 and a message; an agent that misbehaves during a game, 1.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Sequence

from umbrella_env.cli_args import (
    SYSTEM_ERRNOS,
    HelpFormatter,
    command,
    install_hint,
    int_problem,
    path_option,
    program_name,
    say,
    seed_option,
    sigterm_received,
    silence,
)
from umbrella_env.core.config import DEFAULT_MAX_TURNS
from umbrella_env.evaluation.report import REPORT_FILES, print_summary, write_report
from umbrella_env.evaluation.stats import summarise
from umbrella_env.evaluation.tournament import BACKENDS, PROG, SCRIPTS, EvaluationError, run_tournament, seatings
from umbrella_env.match import SPECS_HELP, AgentError
from umbrella_env.parallel import WorkerDied, local_cpus, oversubscribed
from umbrella_env.paths import default_run_dir, output_dir_problem, previous_run


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=program_name(PROG, SCRIPTS),
        description="Round-robin tournament (2-4 players) or solo evaluation of umbrella-env agents.",
        formatter_class=HelpFormatter,
    )
    p.add_argument(
        "--agents", nargs="+", required=True, metavar="AGENT",
        help=f"agents: {SPECS_HELP}; label=spec renames (a label of letters, digits, '_', '.' and '-')",
    )  # fmt: skip
    p.add_argument("--players", type=int, default=2, help="1 (solo), 2, 3 or 4 (default 2)")
    p.add_argument("--level", type=int, default=1, help="score-plate level 1-4 (default 1)")
    p.add_argument(
        "--games",
        type=int,
        default=40,
        help="games per table, rounded up to a multiple of --players! (2, 6 or 24: every seating equally often)",
    )
    p.add_argument("--seed", type=seed_option(), default=0, help="base seed, an integer >= 0 (default 0)")
    p.add_argument(
        "--workers", type=int, default=None,
        help="processes of --backend process (default: the CPUs this process may use)",
    )  # fmt: skip
    p.add_argument(
        "--backend",
        choices=BACKENDS,
        default="process",
        help="play the games in a local process pool (default) or as Ray tasks (the ray extra)",
    )
    p.add_argument(
        "--address",
        default=None,
        help="with --backend ray: HOST:PORT of an existing Ray cluster (default: a local Ray)",
    )
    p.add_argument("--out", type=path_option, default=None, help="output folder (default runs/eval-<time>-<pid>)")
    p.add_argument("--max-turns", type=int, default=DEFAULT_MAX_TURNS, help=f"truncation (default {DEFAULT_MAX_TURNS})")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--overwrite", action="store_true", help="replace a previous report in --out (refused without it)")
    return p


@command
def main(argv: Sequence[str] | None = None) -> int:
    """The CLI; returns the exit status (2 for bad input, with a message on stderr)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)  # a usage error: exit status 2 (command)
    missing = [m for m in ("openskill", "matplotlib") if importlib.util.find_spec(m) is None]
    if missing:
        print(
            f"error: {program_name(PROG, SCRIPTS)} needs {' and '.join(missing)}: {install_hint('eval')}",
            file=sys.stderr,
        )
        return 2
    problem = None if args.workers is None else int_problem("--workers", args.workers)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    note = oversubscribed("--workers", args.workers, "processes") if args.backend == "process" else None
    if note:
        print(note, file=sys.stderr)
    out = args.out if args.out is not None else default_run_dir("eval")
    problem = output_dir_problem(out)
    if problem is not None:
        print(f"error: --out {str(out)!r} cannot hold the report: {problem}", file=sys.stderr)
        return 2
    found = previous_run(out, REPORT_FILES)
    if found and not args.overwrite:
        print(
            f"error: --out {str(out)!r} holds a previous report ({', '.join(found)}): give another --out, "
            "or --overwrite to replace it",
            file=sys.stderr,
        )
        return 2
    try:
        workers = args.workers if args.workers is not None or args.backend == "ray" else local_cpus()
        result = run_tournament(  # kill / timeout: one line and 130, as Ctrl-C (cli_args.command)
            args.agents, args.players, args.level, args.games, args.seed, workers,
            max_turns=args.max_turns, progress=not args.no_progress, backend=args.backend, address=args.address,
        )  # fmt: skip
    except EvaluationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (AgentError, WorkerDied, KeyboardInterrupt) as exc:
        if isinstance(exc, KeyboardInterrupt) or (isinstance(exc, WorkerDied) and sigterm_received()):
            print("interrupted: the games played are not reported (no report written)", file=sys.stderr)
            return 130  # a SIGTERM to the process group ends the workers too
        print(f"error: {exc}", file=sys.stderr)
        return 1
    summary = summarise(result)
    reader_gone, unprinted = False, ""
    try:  # first: a report the disk cannot take leaves the standings on the terminal
        if args.games != result.games_per_table:
            say(
                f"note: --games {args.games} rounded up to {result.games_per_table} per table "
                f"(a multiple of {seatings(args.players)}: every seating equally often)"
            )
        print_summary(summary)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (| head): the games played are still reported
        silence(sys.stdout)
        reader_gone = True
    except OSError as exc:  # stdout on a full disk: the report still takes the standings
        if exc.errno not in SYSTEM_ERRNOS:
            raise
        silence(sys.stdout)
        reader_gone, unprinted = True, str(exc.strerror)  # said once the report is written, naming it
    try:  # replaces a previous report (--overwrite) only once the new one is whole
        report = write_report(result, out, summary, argv)
    except OSError as exc:
        if exc.errno not in SYSTEM_ERRNOS:
            raise
        where = f" ({exc.filename})" if exc.filename else ""
        shown = " (the standings are above)" if not reader_gone else ""
        shown = f" (the standings could not be printed either: {unprinted})" if unprinted else shown
        print(f"error: the report could not be written to {out}: {exc.strerror}{where}; the folder is as it was"
              f"{shown}", file=sys.stderr)  # fmt: skip
        return 1
    if unprinted:
        print(f"error: the standings could not be printed ({unprinted}); they are in the report: {report}",
              file=sys.stderr)  # fmt: skip
    print(f"{summary['games']} games in {result.elapsed:.1f} s; report: {report}")
    return 1 if reader_gone else 0  # as every command whose output pipe closed (cli_args.command)
