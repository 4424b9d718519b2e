"""Seeded games frozen as readable text (tests/golden/); a rules change shows as a diff.

Each golden game is played on every engine (batched, single, reference): all must write
the same text (see umbrella_env/tools/playthrough.py for how the reference gets the deal).
"""

from __future__ import annotations

import difflib

import pytest

from umbrella_env.tools.playthrough import ENGINES, GOLDEN_DIR, GOLDEN_GAMES, playthrough


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("name", "players", "level", "seed", "steps"), GOLDEN_GAMES, ids=[g[0] for g in GOLDEN_GAMES])
def test_golden_playthrough(name: str, players: int, level: int, seed: int, steps: int, engine: str) -> None:
    expected = (GOLDEN_DIR / name).read_text(encoding="utf-8")
    actual = playthrough(players, level, seed, steps, engine)
    if actual != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True), "golden", "now", n=2))
        pytest.fail(
            f"{name} on the {engine} engine differs from the golden file (if the change is intended, run "
            f"`python -m umbrella_env.tools.playthrough --write`):\n{diff[:4000]}"
        )


def test_golden_games_exercise_the_rules() -> None:
    """The frozen games are worth freezing: figures validated, a game ended."""
    texts = [(GOLDEN_DIR / g[0]).read_text(encoding="utf-8") for g in GOLDEN_GAMES]
    assert all("validate slot" in t for t in texts)
    assert any("# terminated" in t for t in texts)
