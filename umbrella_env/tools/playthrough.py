"""Golden playthroughs: seeded games written as readable text.

Each file records a seeded game of the batched engine: every decision as
``seat / phase / action string``, the whole table rendered every few moves, and the
final scores.  The files in ``tests/golden/`` are compared in the test suite, so a
rules change shows up as a readable diff.  After an intended rules change::

    python -m umbrella_env.tools.playthrough --write
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from umbrella_env.core import actions as A
from umbrella_env.core import batch_io
from umbrella_env.core import engine as E
from umbrella_env.core.config import GameConfig
from umbrella_env.core.render import render_text
from umbrella_env.tools.differential import policy_actions

GOLDEN_DIR = Path(__file__).resolve().parents[2] / "tests" / "golden"

#: (file name, players, level, seed, max steps)
GOLDEN_GAMES: tuple[tuple[str, int, int, int, int], ...] = (
    ("solo_level1_seed1.txt", 1, 1, 1, 200),
    ("solo_level4_seed2.txt", 1, 4, 2, 200),
    ("2p_level1_seed3.txt", 2, 1, 3, 160),
    ("3p_level3_seed4.txt", 3, 3, 4, 160),
    ("4p_level4_seed5.txt", 4, 4, 5, 160),
)
BOARD_EVERY = 25


def playthrough(num_players: int, plate_level: int, seed: int, max_steps: int) -> str:
    """The text of one seeded game (greedy-leaning random policy, see differential.py)."""
    config = GameConfig(num_players=num_players, plate_level=plate_level)
    rng = np.random.default_rng(seed)
    state = E.init(config, 1, seed=rng)
    lines = [
        f"# Umbrella golden playthrough: players={num_players} level={plate_level} seed={seed}",
        "# regenerate: python -m umbrella_env.tools.playthrough --write",
        "",
        render_text(batch_io.to_dict(state, 0)),
        "",
    ]
    for step in range(1, max_steps + 1):
        if state.done[0]:
            break
        action = policy_actions(state, rng, greedy=0.8)
        seat = int(E.actor(state)[0])
        phase = A.PHASES[int(state.phase[0])]
        E.step(state, action)
        lines.append(f"{step:4d}  seat {seat}  {phase:<10}  {A.ACTION_STRINGS[int(action[0])]}")
        if step % BOARD_EVERY == 0:
            lines += ["", render_text(batch_io.to_dict(state, 0)), ""]
    d = batch_io.to_dict(state, 0)
    lines += ["", "# final position", render_text(d), ""]
    status = "terminated" if d["terminated"] else "truncated" if d["truncated"] else "stopped (step cap)"
    lines.append(f"# {status} after {d['turn']} turns; scores {d['scores']}; ranks {E.ranks(state)[0].tolist()}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help=f"rewrite the golden files in {GOLDEN_DIR}")
    args = parser.parse_args(argv)
    for name, players, level, seed, steps in GOLDEN_GAMES:
        text = playthrough(players, level, seed, steps)
        if args.write:
            GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
            (GOLDEN_DIR / name).write_text(text, encoding="utf-8")
            print(f"wrote {GOLDEN_DIR / name}")
        else:
            print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
