"""Play seeded games on the batched engine: summarise a batch, or draw one game.

    python -m umbrella_env.demo [--players 2] [--level 1] [--games 256] [--seed 0] [--policy random]

plays a batch of seeded games side by side and prints the final position of the first one
and summary statistics: how games ended, their length, scores per seat, win shares per
seat (a shared victory split, a truncated game a draw, as in evaluation), and the engine's
speed.
``--policy greedy`` prefers slides that complete a figure (otherwise random).

With a picture option it plays one seeded game instead (``--players``, ``--level``,
``--seed`` and ``--policy`` as above) and draws it:

    python -m umbrella_env.demo --gif game.gif [--frames DIR] [--svg last.svg] [--turns K]
        [--max-frames 200] [--frame-ms 300] [--overwrite]

* ``--gif FILE.gif``: an animated GIF, one frame per decision (the picture of
  ``render_mode="rgb_array"``, :mod:`umbrella_env.core.image`), the last one held longer;
* ``--frames DIR``: the same frames as PNG files ``DIR/frame_0000.png``, ... (DIR is created;
  a folder that already holds frames is refused, as is an existing ``--gif`` or ``--svg``
  file, unless ``--overwrite`` is given: it replaces them, and removes the old frames first);
* ``--svg FILE.svg``: the last position as SVG (:mod:`umbrella_env.core.svg`);
* ``--turns K``: stop once K whole turns are played (default: play to the end of the game);
* ``--max-frames N`` (with ``--gif`` or ``--frames``): at most N frames (default 200, the
  first ones); ``--frame-ms`` (with ``--gif``): the time each GIF frame shows (default
  300 ms; a multiple of 10, 20 to 655350: a GIF counts hundredths of a second).

GIF and PNG frames need Pillow (``pip install -c constraints.txt -e ".[eval]"``).  A uniformly
random 2-player game takes several hundred decisions (886 on average in the 256 games of
seed 0); ``--policy greedy`` games are far shorter (126 there), and score more in solo (5.55
on average against 0.61) but not at 2 players (8.05 and 8.14 against 8.24 and 8.48).

The README's picture, ``docs/images/game.svg``, is made by

    python -m umbrella_env.demo --svg docs/images/game.svg --players 2 --level 1 --seed 6 --policy greedy --turns 40

(a test checks that the committed file is what this command writes; ``--overwrite`` redraws it
over the committed file).
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from umbrella_env.cli_args import (
    SYSTEM_ERRNOS,
    HelpFormatter,
    command,
    install_hint,
    int_problem,
    path_option,
    seed_option,
)
from umbrella_env.core import batch_io, facts
from umbrella_env.core import engine as E
from umbrella_env.core.config import GameConfig
from umbrella_env.core.errors import UmbrellaError
from umbrella_env.core.image import _PALETTE, render_rgb
from umbrella_env.core.playout import policy_actions
from umbrella_env.core.render import render_text
from umbrella_env.core.svg import state_to_svg
from umbrella_env.paths import output_dir_problem, output_file_problem, output_folder, write_atomically

#: The most games --games plays side by side: the greedy policy's look-ahead takes about
#: 43 kB per game at the peak (4 players, measured; random play 1.8 kB), so 100,000 games
#: about 4 GB; far more was NumPy's MemoryError or the machine's out-of-memory killer.
MAX_GAMES = 100_000
#: Defaults of the picture options.
MAX_FRAMES = 200
FRAME_MS = 300
#: A GIF stores a frame's time in hundredths of a second, in 16 bits: --frame-ms is a
#: multiple of 10 up to this (browsers show frames under 20 ms at 100 ms, hence the floor).
FRAME_MS_RANGE = (20, 655_350)
#: The last GIF frame (the end of the game, or where it was stopped) shows at least this long.
LAST_FRAME_MS = 2000
#: The names of the PNG frames in the --frames folder.
FRAME_GLOB = "frame_*.png"


def _actions(state: E.BatchState, rng: np.random.Generator, policy: str) -> np.ndarray:
    if policy == "greedy":
        return policy_actions(state, rng, greedy=1.0)
    return E.random_legal_actions(state, rng)


# --------------------------------------------------------------------------- a batch, summarised
def run(players: int, level: int, games: int, seed: int, policy: str) -> str:
    config = GameConfig(num_players=players, plate_level=level)
    rng = np.random.default_rng(seed)
    state = E.init(config, games, seed=rng)
    steps = 0
    t0 = time.perf_counter()
    next_report = t0 + 2.0
    while not state.done.all():
        actions = _actions(state, rng, policy)
        steps += int((~state.done).sum())
        E.step(state, actions)
        if time.perf_counter() > next_report:
            print(f"  ... {int(state.done.sum())}/{games} games finished, {steps:,} steps", file=sys.stderr)
            next_report += 2.0
    elapsed = time.perf_counter() - t0
    scores = E.scores(state)
    ranks = E.ranks(state)
    turns = state.turn
    out = [
        f"Final position of game 0 (seed {seed}):",
        render_text(batch_io.to_dict(state, 0)),
        "",
        f"{games} {'solo' if players == 1 else f'{players}-player'} games at plate level {level}, "
        f"{policy} policy, seed {seed}",
        f"  ended by the rules: {int(state.terminated.sum())}   truncated at {config.max_turns} turns: "
        f"{int(state.truncated.sum())}",
        f"  turns per game: mean {turns.mean():.1f}, median {np.median(turns):.0f}, "
        f"min {turns.min()}, max {turns.max()}",
        f"  decisions: {steps:,} in {elapsed:.2f} s ({steps / elapsed:,.0f} steps/s)",
    ]
    credits = facts.win_credits(ranks, state.truncated)  # a shared victory split, a truncated game a draw
    for seat in range(players):
        s = scores[:, seat]
        line = f"  seat {seat}: score mean {s.mean():6.2f} (sd {s.std():5.2f}, min {s.min()}, max {s.max()})"
        if players > 1:
            line += f", win share {credits[:, seat].mean():6.1%}"
        out.append(line)
    if players == 1:
        verdicts = Counter(facts.merit_band(s) for s in scores[:, 0].tolist())
        out.append("  merit bands: " + ", ".join(f"{name} {verdicts[name]}" for _, _, name in facts.MERIT_BANDS))
    return "\n".join(out)


# --------------------------------------------------------------------------- one game, drawn
def positions(players: int, level: int, seed: int, policy: str, turns: int | None = None) -> Iterator[dict[str, Any]]:
    """The state dicts of one seeded game: the start, then the position after each decision,
    until the game ends or ``turns`` whole turns are played."""
    config = GameConfig(num_players=players, plate_level=level)
    rng = np.random.default_rng(seed)
    state = E.init(config, 1, seed=rng)
    yield batch_io.to_dict(state, 0)
    while not state.done[0] and (turns is None or state.turn[0] < turns):
        E.step(state, _actions(state, rng, policy))
        yield batch_io.to_dict(state, 0)


def _pillow() -> Any:
    """The PIL.Image module, or None when Pillow is not installed."""
    try:
        from PIL import Image
    except ImportError:
        return None
    return Image


def draw_game(args: argparse.Namespace) -> list[str]:
    """Play the game of ``args`` and write the pictures it asks for; return what was written.
    The PNG frames of ``--frames`` stay only if every picture was written: a failure (a full
    disk, Ctrl-C) removes them, and the folder when it was made for them."""
    if args.frames is None:
        return _draw_game(args, None)
    frames_dir = Path(args.frames)
    with output_folder(frames_dir):
        try:
            return _draw_game(args, frames_dir)
        except BaseException:
            for frame in frames_dir.glob(FRAME_GLOB):
                frame.unlink(missing_ok=True)
            raise


def _draw_game(args: argparse.Namespace, frames_dir: Path | None) -> list[str]:
    want_frames = args.gif is not None or frames_dir is not None
    max_frames = MAX_FRAMES if args.max_frames is None else args.max_frames
    Image: Any = None
    palette: Any = None
    if want_frames:
        Image = _pillow()
        # render_rgb paints only the colours of image.py's palette: one palette of those
        # colours holds every frame exactly, and a small palette keeps the GIF small.
        palette = Image.new("P", (1, 1))
        palette.putpalette(_PALETTE.reshape(-1).tolist())
    if frames_dir is not None:
        for old in frames_dir.glob(FRAME_GLOB):  # --overwrite: no frame of an earlier game stays
            old.unlink()
    digits = max(4, len(str(max_frames - 1)))
    frames: list[Any] = []  # palette images for the GIF
    written, capped = 0, False
    framed: dict[str, Any] = {}  # the position of the last frame
    last: dict[str, Any] = {}
    for d in positions(args.players, args.level, args.seed, args.policy, args.turns):
        last = d
        if want_frames and written < max_frames:
            image = Image.fromarray(render_rgb(d)).quantize(palette=palette, dither=Image.Dither.NONE)
            if frames_dir is not None:
                png = frames_dir / f"frame_{written:0{digits}d}.png"
                write_atomically(png, functools.partial(image.save, format="PNG"))
            if args.gif is not None:
                frames.append(image)
            written, framed = written + 1, d
        elif want_frames:
            capped = True
            if args.svg is None:  # nothing needs the rest of the game
                break
    cap = f" (--max-frames {max_frames} reached)" if capped else ""
    report = []
    if args.gif is not None:
        durations = [args.frame_ms] * (len(frames) - 1) + [max(args.frame_ms, LAST_FRAME_MS)]
        write_atomically(
            args.gif,
            lambda tmp: frames[0].save(
                tmp, format="GIF", save_all=True, append_images=frames[1:], duration=durations, loop=0
            ),
        )
        report.append(
            f"wrote {args.gif}: {len(frames)} frames, {args.frame_ms} ms each, from the start to {_where(framed)}{cap}"
        )
    if frames_dir is not None:
        report.append(f"wrote {written} PNG frames to {frames_dir}, from the start to {_where(framed)}{cap}")
    if args.svg is not None:
        svg = state_to_svg(last, description=_command(args))
        write_atomically(args.svg, lambda tmp: tmp.write_text(svg, encoding="utf-8"))
        scores = ", ".join(str(v) for v in last["scores"])
        report.append(f"wrote {args.svg}: the position at {_where(last)}, scores {scores}")
    return report


def _where(d: dict[str, Any]) -> str:
    return "the end of the game" if d["phase"] == "game_over" else f"turn {d['turn']} (phase {d['phase']})"


def _command(args: argparse.Namespace) -> str:
    """The command that draws this SVG, kept in its ``<desc>``."""
    parts = [
        f"python -m umbrella_env.demo --svg {args.svg} --players {args.players} --level {args.level}",
        f"--seed {args.seed} --policy {args.policy}",
    ]
    if args.turns is not None:
        parts.append(f"--turns {args.turns}")
    return "Drawn by " + " ".join(parts)


# --------------------------------------------------------------------------- command line
def _check_file(parser: argparse.ArgumentParser, option: str, path: Path, suffix: str, overwrite: bool) -> None:
    problem = output_file_problem(path, suffix, overwrite=overwrite)
    if problem is not None:
        parser.error(f"{option}: {problem}")


def _check_dir(parser: argparse.ArgumentParser, option: str, path: Path, overwrite: bool) -> None:
    value = str(path)
    if path.exists() and not path.is_dir():
        parser.error(f"{option}: {value!r} exists and is not a folder")
    problem = output_dir_problem(path)
    if problem is not None:
        parser.error(f"{option}: cannot write to {value!r}: {problem}")
    if path.is_dir() and next(path.glob(FRAME_GLOB), None) is not None and not overwrite:
        # New frames would mix with an earlier game's (a shorter game leaves the old last ones).
        parser.error(
            f"{option}: {value!r} already holds frames ({FRAME_GLOB}); give an empty or new folder, "
            "or --overwrite to replace them"
        )


def _check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Every option checked before anything is played or written (exit code 2 on bad input)."""

    def in_range(option: str, value: int | None, lo: int, hi: int | None = None) -> None:
        problem = None if value is None else int_problem(option, value, lo, hi)
        if problem:
            parser.error(problem)

    in_range("--games", args.games, 1, MAX_GAMES)
    in_range("--turns", args.turns, 0)
    in_range("--max-frames", args.max_frames, 1)
    lo, hi = FRAME_MS_RANGE
    if args.frame_ms is not None and not (lo <= args.frame_ms <= hi and args.frame_ms % 10 == 0):
        parser.error(
            f"--frame-ms: expected a multiple of 10 from {lo} to {hi} (a GIF keeps a frame's time in "
            f"hundredths of a second), got {args.frame_ms}"
        )
    drawing = args.gif is not None or args.frames is not None or args.svg is not None
    if drawing and args.games is not None:
        parser.error("--games: the summary of a batch; --gif, --frames and --svg draw one game (leave out --games)")
    # An option the pictures asked for would ignore is refused, not dropped.
    for option, value, used, needs in (
        ("--turns", args.turns, drawing, "a picture option (--gif, --frames or --svg)"),
        ("--max-frames", args.max_frames, args.gif is not None or args.frames is not None, "--gif or --frames"),
        ("--frame-ms", args.frame_ms, args.gif is not None, "--gif"),
        ("--overwrite", args.overwrite or None, drawing, "a picture option (--gif, --frames or --svg)"),
    ):
        if value is not None and not used:
            parser.error(f"{option}: only with {needs}")
    if args.gif is not None:
        _check_file(parser, "--gif", args.gif, ".gif", args.overwrite)
    if args.svg is not None:
        _check_file(parser, "--svg", args.svg, ".svg", args.overwrite)
    if args.frames is not None:
        _check_dir(parser, "--frames", args.frames, args.overwrite)


def _missing_pillow(prog: str) -> NoReturn:
    print(
        f"{prog}: error: --gif and --frames need the eval extra (Pillow is missing): {install_hint('eval')}",
        file=sys.stderr,
    )
    sys.exit(2)  # as every command's missing extra (cli_args.missing_extra)


@command
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m umbrella_env.demo", description=__doc__, formatter_class=HelpFormatter
    )
    parser.add_argument("--players", type=int, default=2, choices=[1, 2, 3, 4], help="1 (solo) to 4")
    parser.add_argument("--level", type=int, default=1, choices=[1, 2, 3, 4], help="score-plate level 1 to 4")
    parser.add_argument(
        "--games", type=int, default=None, help=f"games played side by side, 1 to {MAX_GAMES:,} (default 256)"
    )
    parser.add_argument("--seed", type=seed_option(), default=0, help="an int >= 0")
    parser.add_argument("--policy", choices=["random", "greedy"], default="random", help="the agent of every seat")
    pictures = parser.add_argument_group("pictures of one game")
    pictures.add_argument(
        "--gif", metavar="FILE.gif", type=path_option, help="write an animated GIF, one frame per decision"
    )
    pictures.add_argument("--frames", metavar="DIR", type=path_option, help="write the frames as PNG files into DIR")
    pictures.add_argument("--svg", metavar="FILE.svg", type=path_option, help="write the last position as SVG")
    pictures.add_argument("--turns", type=int, help="stop after this many whole turns (default: the end)")
    pictures.add_argument("--max-frames", type=int, help=f"at most this many GIF or PNG frames (default {MAX_FRAMES})")
    pictures.add_argument(
        "--frame-ms",
        type=int,
        help=f"milliseconds per GIF frame, a multiple of 10 from {FRAME_MS_RANGE[0]} to {FRAME_MS_RANGE[1]} "
        f"(default {FRAME_MS})",
    )
    pictures.add_argument(
        "--overwrite", action="store_true", help="replace an existing --gif or --svg file, or the frames in --frames"
    )
    args = parser.parse_args(argv)
    _check_args(parser, args)
    try:
        GameConfig(num_players=args.players, plate_level=args.level)
        if args.gif is None and args.frames is None and args.svg is None:
            print(run(args.players, args.level, 256 if args.games is None else args.games, args.seed, args.policy))
            return 0
        if (args.gif is not None or args.frames is not None) and _pillow() is None:
            _missing_pillow(parser.prog)
        if args.frame_ms is None:
            args.frame_ms = FRAME_MS
        for line in draw_game(args):
            print(line)
    except UmbrellaError as exc:
        parser.error(str(exc))
    except OSError as exc:
        if exc.errno in SYSTEM_ERRNOS:  # a full disk is no usage error: one line, exit 1 (cli_args.command)
            raise
        parser.error(f"cannot write the pictures: {exc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
