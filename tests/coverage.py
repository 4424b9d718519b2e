"""What a differential run must have reached for its equality check to mean something."""

from __future__ import annotations

from umbrella_env.core import actions as A
from umbrella_env.tools.differential import DiffStats


def assert_interesting(stats: DiffStats, num_players: int, plate_level: int, min_covers: int) -> None:
    """The interesting decisions and both endings happened (validations, covers, fallbacks,
    2-player face choices, level-4 swaps, terminations and truncations; at 2-4 players a
    triggered end and tokens from the reserve)."""
    assert stats.phases[A.PHASE_VALIDATE] > 100
    assert stats.phases[A.PHASE_COVER] > min_covers
    assert stats.terminated > 0
    if num_players > 1:
        assert stats.phases[A.PHASE_FALLBACK] > 0
        assert stats.truncated > 0
        assert stats.end_triggered > 0 and stats.reserve_used > 0
    if num_players == 2:
        assert stats.phases[A.PHASE_GIVE_FACE] > 100
    if plate_level == 4:
        assert stats.phases[A.PHASE_SWAP_STAGE] > 0 and stats.phases[A.PHASE_SWAP_ZONE] > 0
