"""Golden playthroughs: seeded games written as readable text.

Each file records a seeded game: every decision as ``seat / phase / action string``, the
whole table rendered every few moves, and the final scores.  The files in
``tests/golden/`` are compared in the test suite, so a rules change shows up as a
readable diff.  After an intended rules change::

    python -m umbrella_env.tools.playthrough --write

Every engine plays the same game and must write the same text (``--engine``, the test
suite runs all three): the policy chooses from the engine's own position (its state dict,
loaded into a batch of one), so an engine that diverges diverges in the text.  The batched
and single-game engines deal the game themselves from the same key; the reference engine
starts from the batched engine's deal (its state dict), because it deals from its own
``random.Random`` stream by design: an oracle written independently of the fast engines'
random procedure.  Its deals are checked against the setup rules instead
(``tests/test_rules.py``, ``test_setup_*``, on every engine).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

from umbrella_env.cli_args import HelpFormatter, command, source_tree
from umbrella_env.core import actions as A
from umbrella_env.core import batch_io
from umbrella_env.core import engine as E
from umbrella_env.core.config import GameConfig
from umbrella_env.core.playout import policy_actions
from umbrella_env.core.reference import ReferenceGame
from umbrella_env.core.render import render_text
from umbrella_env.core.single import SingleGame

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
#: The engines a playthrough can run on.
ENGINES: tuple[str, ...] = ("batched", "single", "reference")


class _Engine:
    """One game of one engine behind the calls a playthrough makes (all checked)."""

    def __init__(self, engine: str, config: GameConfig, rng: np.random.Generator) -> None:
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
        self.engine = engine
        self.config = config
        self.game: Any
        if engine == "batched":
            self.game = E.init(config, 1, seed=rng)
        elif engine == "single":
            self.game = SingleGame.new(config, E.draw_key(rng))  # the key E.init draws
        else:
            dealt = batch_io.to_dict(E.init(config, 1, seed=rng), 0)
            self.game = ReferenceGame.from_dict(dealt, components=config.components)

    def state_dict(self) -> dict[str, Any]:
        return batch_io.to_dict(self.game, 0) if self.engine == "batched" else self.game.to_dict()

    def as_batch(self) -> E.BatchState:
        """The position as a batch of one (what the policy reads)."""
        if self.engine == "batched":
            return self.game
        return batch_io.from_dict(self.game.to_dict(), components=self.config.components)

    def actor(self) -> int:
        return int(E.actor(self.game)[0]) if self.engine == "batched" else int(self.game.actor)

    def step(self, action: int) -> None:
        if self.engine == "batched":
            E.step(self.game, np.array([action]))
        elif self.engine == "single":
            self.game.step_checked(action)
        else:
            self.game.step(action)

    def ranks(self) -> list[int]:
        return E.ranks(self.game)[0].tolist() if self.engine == "batched" else list(self.game.ranks())


def playthrough(num_players: int, plate_level: int, seed: int, max_steps: int, engine: str = "batched") -> str:
    """The text of one seeded game (greedy-leaning random policy, ``core.playout``) on ``engine``."""
    config = GameConfig(num_players=num_players, plate_level=plate_level)
    rng = np.random.default_rng(seed)
    game = _Engine(engine, config, rng)
    lines = [
        f"# Umbrella golden playthrough: players={num_players} level={plate_level} seed={seed}",
        "# regenerate: python -m umbrella_env.tools.playthrough --write",
        "",
        render_text(game.state_dict()),
        "",
    ]
    for step in range(1, max_steps + 1):
        d = game.state_dict()
        if d["terminated"] or d["truncated"]:
            break
        action = int(policy_actions(game.as_batch(), rng, greedy=0.8)[0])
        seat = game.actor()
        game.step(action)
        lines.append(f"{step:4d}  seat {seat}  {d['phase']:<10}  {A.ACTION_STRINGS[action]}")
        if step % BOARD_EVERY == 0:
            lines += ["", render_text(game.state_dict()), ""]
    d = game.state_dict()
    lines += ["", "# final position", render_text(d), ""]
    status = "terminated" if d["terminated"] else "truncated" if d["truncated"] else "stopped (step cap)"
    lines.append(f"# {status} after {d['turn']} turns; scores {d['scores']}; ranks {game.ranks()}")
    return "\n".join(lines) + "\n"


@command
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m umbrella_env.tools.playthrough",
        description=__doc__,
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--write", action="store_true", help=f"rewrite the golden files in {GOLDEN_DIR}")
    parser.add_argument("--engine", choices=ENGINES, default="batched", help="the engine that plays (default batched)")
    args = parser.parse_args(argv)
    if args.write and source_tree() is None:
        parser.error("--write rewrites tests/golden/ of a clone of the repository; this umbrella_env is installed")
    for name, players, level, seed, steps in GOLDEN_GAMES:
        text = playthrough(players, level, seed, steps, args.engine)
        if args.write:
            GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
            (GOLDEN_DIR / name).write_text(text, encoding="utf-8")
            print(f"wrote {GOLDEN_DIR / name}")
        else:
            print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
