"""Command-line helpers shared by the trainers: which options a command line gives, and
presets (``--quick``) that fill in only the options it leaves out."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.checks import MAX_LAYER_SIZE, MAX_LAYERS
from umbrella_env.cli_args import command_name, game_options_problem, seed_option
from umbrella_env.evaluation.stats import wilson_interval
from umbrella_env.match import AgentSpecError, absolute_spec, build_agent
from umbrella_env.paths import previous_run
from umbrella_env.training.metrics import METRICS_FILE, STEP_COLUMNS, written_by_a_trainer

#: TensorBoard's event files begin so (``events.out.tfevents.<time>.<host>...``).
TB_EVENTS = "events.out.tfevents."

#: The discount of the learners (MaskablePPO, RLlib's PPO) and of the teacher games' returns.
GAMMA = 0.99
#: The seed of the deals of every in-training evaluation of MaskablePPO and RLlib (the same
#: for every evaluation of every run, so a learning curve compares like with like).
EVAL_SEED = 12345
#: The turn limit of the learners' training games (evaluation games use the standard one).
TRAIN_MAX_TURNS = 400
#: The largest learning rate the trainers take (each of their rates, cloning included): Adam
#: moves every weight by about the learning rate at each step, so larger rates only diverge.
MAX_LEARNING_RATE = 1
#: The largest ``--shaping``: the end-of-game reward is +-1, and at 1 a game's score edge
#: (often 10 points or more) already outweighs its result; far larger weights overflow the
#: returns and the value loss.
MAX_SHAPING = 1


def given_options(build_parser: Callable[[], argparse.ArgumentParser], argv: Sequence[str]) -> set[str]:
    """The destinations of the options written on the command line ``argv``: a value equal
    to the default still counts as given (``--games 64`` is not "left out")."""
    probe = build_parser()
    for action in probe._actions:  # a default of SUPPRESS leaves an option out of the namespace
        action.default = argparse.SUPPRESS
    return set(vars(probe.parse_args(list(argv))))


def given_among(
    build_parser: Callable[[], argparse.ArgumentParser], argv: Sequence[str], dests: Collection[str]
) -> list[str]:
    """The options of ``dests`` written on the command line ``argv``, as sorted flags
    (``--eval-games``): the options a command refuses because it would ignore them."""
    return sorted(f"--{dest.replace('_', '-')}" for dest in given_options(build_parser, argv) & set(dests))


def apply_preset(args: argparse.Namespace, preset: Mapping[str, Any], given: Collection[str]) -> argparse.Namespace:
    """``args`` with every option of ``preset`` not in ``given`` (:func:`given_options`)
    set to the preset's value: the options given on the command line win."""
    for key, value in preset.items():
        if key not in given:
            setattr(args, key, value)
    return args


def shown_option(value: Any) -> str:
    """An option's value as typed: ``256 256`` for a list, ``0.1`` for a rate."""
    return (
        " ".join(map(str, value))
        if isinstance(value, list)
        else f"{value:g}"
        if isinstance(value, float)
        else str(value)
    )


def _recorded_value(flag: str, saved: Any, now: Any) -> Any:
    """``saved``, the checkpoint's value of ``flag``, as the option holds it (an int read
    for a float option becomes a float), or a ``ValueError`` when it is of another kind
    than ``now``, the option's value: a damaged file."""
    if isinstance(now, list) or now is None:  # agent specs: a list of non-empty strings
        ok = isinstance(saved, list) and bool(saved) and all(isinstance(v, str) and v for v in saved)
    elif isinstance(now, float):
        ok = isinstance(saved, int | float) and not isinstance(saved, bool)
        try:
            saved = float(saved) if ok else saved  # a hand-edited 1 is the rate 1.0
        except OverflowError:  # an integer of hundreds of digits
            ok = False
    elif isinstance(now, int) and not isinstance(now, bool):
        ok = type(saved) is int
    else:
        ok = type(saved) is type(now)
    if not ok:
        raise ValueError(f"the checkpoint records {flag} as {saved!r}, which is not a value of {flag}")
    return saved


#: The options of a teacher's cloning (``--pretrain``) that the MaskablePPO and RLlib
#: trainers' checkpoints record as ``pretraining``: a resume may repeat them, equal
#: (:func:`check_repeated`).
CLONING_OPTIONS = (
    ("--pretrain", "pretrain"),
    ("--pretrain-games", "pretrain_games"),
    ("--pretrain-epochs", "pretrain_epochs"),
    ("--pretrain-lr", "pretrain_lr"),
    ("--pretrain-batch", "pretrain_batch"),
)
#: A resumed checkpoint's cloning when it was written before checkpoints recorded it: the
#: resumed run's checkpoints leave the record out rather than say "no cloning".
UNRECORDED: Any = object()


def check_repeated(
    args: argparse.Namespace,
    given: Collection[str],
    record: Mapping[str, Any] | None,
    options: Sequence[tuple[str, str]],
    what: str,
    normal: Callable[[str, Any], Any] = lambda dest, value: value,
) -> list[str]:
    """A resume does not redo how its run started (``what``: its cloning, its pretraining),
    but the interrupted command with ``--resume`` added repeats those options: each of
    ``options`` (flag, destination) given must equal ``record``'s, as the checkpoint recorded
    it (compared as ``normal(dest, value)``).  Returns the flags given, for the caller's
    note; ``ValueError`` for one that differs, or that the record lacks (a run that did no
    such thing, or a checkpoint older than the record).  One place for every trainer."""
    asked = []
    for flag, dest in options:
        if dest not in given:
            continue
        if record is None or record.get(dest) is None:
            raise ValueError(
                f"{flag}: the checkpoint records no {what} (its run did none, or the checkpoint predates the "
                f"record), and a resume does not redo it: leave {flag} out"
            )
        now = getattr(args, dest)
        if normal(dest, now) != record[dest]:
            raise ValueError(
                f"{flag} {shown_option(now)} differs from the run's {what} ({shown_option(record[dest])}): a resume "
                f"goes on from the trained network and does not redo its {what}; leave {flag} out"
            )
        asked.append(flag)
    return asked


def cloning_record(args: argparse.Namespace) -> dict[str, Any] | None:
    """The :data:`CLONING_OPTIONS` of a run as its checkpoints record them (the teacher's
    spec absolute), None without ``--pretrain``."""
    if args.pretrain is None:
        return None
    record = {dest: getattr(args, dest) for _, dest in CLONING_OPTIONS}
    return {**record, "pretrain": absolute_spec(args.pretrain), "pretrain_lr": float(args.pretrain_lr)}


def _recorded_specs(dest: str, value: Any) -> Any:
    """A cloning option as its record holds it: agent specs absolute."""
    if dest == "pretrain":
        return absolute_spec(value)
    return [absolute_spec(spec) for spec in value] if dest == "pretrain_opponents" else value


def adopt_cloning(
    args: argparse.Namespace,
    given: Collection[str],
    meta: Mapping[str, Any],
    options: Sequence[tuple[str, str]],
    unused: Collection[str],
) -> list[str]:
    """A resume of the MaskablePPO or RLlib trainer does not clone again: its checkpoint's
    ``pretraining`` record (None for a run that cloned nothing) is checked, the cloning
    options given are compared with it (:func:`check_repeated`; ``unused``: the other
    cloning options, such as ``workers``, accepted with the record and not compared), the
    record goes on into the resumed run's checkpoints (``args.cloning``, :data:`UNRECORDED`
    for a checkpoint older than the record) and ``args.pretrain`` is cleared.  Returns the
    note line to print; ``ValueError`` for a damaged record, a given option that differs,
    or any given to a run that cloned nothing."""
    record = meta.get("pretraining")
    keys = sorted(dest for _, dest in options)
    if record is not None and (not isinstance(record, dict) or sorted(record) != keys):
        raise ValueError(f"the checkpoint records its cloning as {record!r}, not a mapping of {', '.join(keys)}")
    asked = [flag for flag, dest in options if dest in given]
    asked += sorted(f"--{dest.replace('_', '-')}" for dest in set(given) & set(unused) - {d for _, d in options})
    if asked and record is None:
        raise ValueError(
            f"{', '.join(asked)}: the checkpoint's run cloned no teacher (or its checkpoint predates the record of "
            "one), and a resume does not clone: leave them out"
        )
    check_repeated(args, given, record, options, "cloning", _recorded_specs)
    args.cloning, args.pretrain = (record if "pretraining" in meta else UNRECORDED), None  # the cloning is done
    once = "the run's cloning, done at its start; a resume does not clone again"
    return [f"note: {', '.join(asked)}: {once}"] if asked else []


def adopt_recorded(
    args: argparse.Namespace, given: Collection[str], meta: Mapping[str, Any], options: Sequence[tuple[str, str]]
) -> list[str]:
    """A ``--resume`` goes on with the settings its checkpoint recorded: each option of
    ``options`` (flag, destination) left out of the command line takes the checkpoint's value;
    one given that differs is kept, and a note line says so (returned, for the caller to
    print once the resume has passed every check).  A value of another kind than the
    option's (a damaged file) is a ``ValueError`` naming it, raised before any option
    changes; its range is the caller's options check, run after this.  A checkpoint written
    before an option was recorded leaves the option as it is."""
    recorded = {
        dest: _recorded_value(flag, meta[dest], getattr(args, dest))
        for flag, dest in options
        if meta.get(dest) is not None
    }
    notes = []
    for flag, dest in options:
        if dest not in recorded:
            continue
        saved, now = recorded[dest], getattr(args, dest)
        if dest not in given:
            setattr(args, dest, saved)
        elif now != saved:
            notes.append(
                f"note: the checkpoint's run trained with {flag} {shown_option(saved)}; "
                f"this run uses {shown_option(now)}"
            )
    return notes


def check_recorded_opponents(specs: Sequence[str], config: Any) -> None:
    """The opponents a resumed run takes from its checkpoint can still be built (a checkpoint
    opponent may have moved since), or a ``ValueError`` naming the one that cannot and the
    way out; ``random`` and ``self`` are the trainers' own."""
    for spec in specs:
        if spec in ("random", "self"):
            continue
        try:
            build_agent(spec, config)
        except AgentSpecError as exc:
            raise ValueError(
                f"--resume: the checkpoint's run trained against {spec!r}, which cannot be built here ({exc}); "
                "give --opponents"
            ) from None


#: The largest --seed of the trainers: Stable-Baselines3 (and NumPy's legacy seeding) take
#: seeds below 2**32.
MAX_SEED = 2**32 - 1
#: ``train.py`` / ``umbrella-train`` for usage lines (:func:`umbrella_env.cli_args.program_name`).
TRAIN_COMMAND = (command_name("train.py", "umbrella-train"), ("umbrella-train", "train.py"))
#: The argparse type of both trainers' ``--seed``.
trainer_seed = seed_option(MAX_SEED, "the range both trainers take, Stable-Baselines3's")
#: The help of both trainers' ``--seed``.
TRAINER_SEED_HELP = f"seed, 0 to {MAX_SEED} (default 0)"


#: Above any mean score a game can have (the tie-break of :func:`selection_metric` scales by it).
_SCORE_BOUND = 1000.0


def resume_seed(seed: int, timesteps: int) -> int:
    """The seed of a run resumed with ``--seed seed`` from a checkpoint of ``timesteps``
    steps (both PPO trainers): its deals, seats and opponents, the learner's sampling and the
    minibatch order.  ``MaskablePPO.load`` would reseed everything with the seed saved in the
    checkpoint, and RLlib seeds its env runners from ``--seed`` alone, so a resume replayed
    the first run's deals; derived with the step count, a resume with the first run's seed
    does not replay them either."""
    return int(np.random.SeedSequence([seed, timesteps, 1]).generate_state(1)[0])


def selection_metric(win_rate: float, mean_score: float, games: int, solo: bool) -> float:
    """The number the PPO trainers (``train.py``'s and ``rllib_train``'s) keep their best
    checkpoint by: solo, the mean score; 2-4 players, the win rate, ties broken by the mean
    score (the alphazero trainer keeps the first of equal win rates, docs/alphazero.md).  A
    win rate over ``games`` games is a multiple of 1/(12 x games) (a shared win counts 1/k,
    k <= 4), so the mean score is scaled to stay under one such step: it never outweighs a
    higher win rate."""
    if solo:
        return mean_score
    return win_rate + mean_score / (_SCORE_BOUND * 12 * max(games, 1))


def win_rate_text(win_rate: float, games: int) -> str:
    """A trainer's evaluation win rate as its lines print it: with its 95% Wilson interval
    and the number of games (the interval is wide at the default game counts: a "new best"
    can be noise, docs/training.md)."""
    low, high = wilson_interval(win_rate * games, games)
    return f"{win_rate:.3f} [{low:.3f}, {high:.3f}] ({games} games)"


def check_game(players: int, level: int, max_turns: int | None = None) -> None:
    """Refuse (ValueError) a ``--players``, ``--level`` or ``--max-turns`` the game does not
    have, naming the option (:func:`~umbrella_env.cli_args.game_options_problem`)."""
    problem = game_options_problem(players, level, max_turns)
    if problem is not None:
        raise ValueError(problem)


#: The files of a run of each trainer in its ``--out`` folder.
ALPHAZERO_RUN_FILES = (
    "best.pt", "best.json", "last.pt", "last.json", "optimizer.pt", "history.json", "learning_curve.png",
    "progress.csv", "tb",
)  # fmt: skip
PPO_RUN_FILES = (
    "best.zip", "best.json", "last.zip", "last.json", "snapshot.zip", "snapshot.json", "train_summary.json",
    "progress.csv", "tb",
)  # fmt: skip
#: What either trainer takes for a previous run, and removes with ``--overwrite``: the files
#: of both trainers.  They share ``best.json`` and ``last.json``, so a run replacing only its
#: own files would leave the other trainer's checkpoints beside its own sidecars.
RUN_FILES = tuple(dict.fromkeys(ALPHAZERO_RUN_FILES + PPO_RUN_FILES))


def check_layers(flag: str, sizes: Sequence[int]) -> None:
    """Refuse (ValueError, naming ``flag``) more than MAX_LAYERS hidden layers, or layer sizes
    outside 1..MAX_LAYER_SIZE."""
    if len(sizes) > MAX_LAYERS:
        raise ValueError(f"{flag}: at most {MAX_LAYERS} hidden layers, got {len(sizes)}")
    if any(not 1 <= n <= MAX_LAYER_SIZE for n in sizes):
        raise ValueError(f"{flag} layer sizes must be from 1 to {MAX_LAYER_SIZE:,}, got {list(sizes)}")


def not_a_trainers(entry: Path) -> str | None:
    """What in the run entry ``entry`` no trainer wrote (a file of a ``tb`` folder other than
    TensorBoard's event files; a ``progress.csv`` that is not a trainer's metrics), or None:
    the generic names of :data:`RUN_FILES` may be a user's own.  A symbolic link is the
    trainer's to replace (the link goes, not what it points to)."""
    entry = Path(entry)
    if entry.is_symlink():
        return None
    if entry.name == "tb":
        if not entry.is_dir():
            return "a file, where a trainer writes a folder of TensorBoard event files"
        for f in sorted(entry.rglob("*")):
            if not f.is_dir() and not f.name.startswith(TB_EVENTS):
                return str(f.relative_to(entry.parent))
    if entry.name == METRICS_FILE and entry.is_file() and not written_by_a_trainer(entry):
        return "not a trainer's metrics: its header starts with none of " + ", ".join(STEP_COLUMNS)
    return None


def overwrite_problem(
    out: Any, run_files: Collection[str], overwrite: bool, reads: Mapping[str, Any | None]
) -> str | None:
    """Why a trainer may not write its run into the folder ``out``, or None.  A folder holding
    a previous run is refused unless the run resumes that run (``--resume`` of a checkpoint
    in ``out``) or replaces it (``--overwrite``); ``--overwrite`` is refused when the run reads
    a file of ``out`` (``reads``: flag -> path, e.g. ``--resume``, ``--init``), which it would
    remove first."""
    found = previous_run(out, run_files)
    if not found:
        return None
    inside = {flag: p for flag, p in reads.items() if p is not None and Path(p).resolve().parent == Path(out).resolve()}
    if overwrite:
        if inside:
            flag, p = next(iter(inside.items()))
            return f"--overwrite would remove {str(p)!r}, which {flag} reads: give another --out"
        for name in found:
            foreign = not_a_trainers(Path(out) / name)
            if foreign is not None:
                return (
                    f"--overwrite would remove {str(Path(out) / name)!r}, which holds what no trainer writes "
                    f"({foreign}): move it or give another --out"
                )
        return None
    if "--resume" in inside:
        return None
    return (
        f"--out {str(out)!r} holds a previous run ({', '.join(found)}): give --resume with its last checkpoint "
        "to continue it, --overwrite to replace it, or another --out"
    )
