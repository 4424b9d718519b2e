"""The batched engine equals the reference engine (masks, states, scores, ranks).

10,000 states per configuration here; ``python -m umbrella_env.tools.differential
--states 100000`` runs the large check.
"""

from __future__ import annotations

import pytest

from tests.coverage import assert_interesting
from umbrella_env.tools import differential

CONFIGS = [(p, level) for p in (1, 2, 3, 4) for level in (1, 2, 3, 4)]


@pytest.mark.parametrize(("num_players", "plate_level"), CONFIGS)
def test_batched_equals_reference(num_players: int, plate_level: int) -> None:
    stats = differential.run(num_players, plate_level, states=10_000, seed=100 * num_players + plate_level)
    assert stats.states >= 10_000
    # The check is only meaningful if the interesting decisions happened.
    assert_interesting(stats, num_players, plate_level, min_covers=10)


def test_differential_detects_a_divergence(monkeypatch: pytest.MonkeyPatch) -> None:
    """The checker itself must fail when the engines disagree."""
    from umbrella_env.core.reference import ReferenceGame

    original = ReferenceGame.to_dict

    def corrupted(self: ReferenceGame) -> dict:
        d = original(self)
        if d["turn"] >= 3:
            d["supply"] += 1
        return d

    monkeypatch.setattr(ReferenceGame, "to_dict", corrupted)
    with pytest.raises(differential.Mismatch, match="supply"):
        differential.run(2, 1, states=2_000, seed=1)


def test_the_command_reports_a_mismatch_in_one_message_and_exits_1(monkeypatch, capsys) -> None:
    # a mismatch used to end the command in a traceback
    def diverging(num_players, plate_level, states, seed):
        raise differential.Mismatch("states differ at supply")

    monkeypatch.setattr(differential, "run", diverging)
    assert differential.main(["--players", "2", "--levels", "3", "--states", "50", "--seed", "7"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "MISMATCH at 2 player(s), plate level 3 (--seed 7): states differ at supply" in err
    assert "--players 2 --levels 3 --states 50 --seed 7" in err
