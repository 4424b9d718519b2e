"""The heuristic tuner (umbrella_env.evaluation.tune_heuristic): what it tries and keeps."""

from __future__ import annotations

import io
import re

import pytest

from agents.heuristic import MULTIPLAYER_WEIGHTS
from umbrella_env.evaluation import tune_heuristic as th


def test_candidates_stay_in_range():
    assert th.candidates("choice", 2) == [1, 3, 4]
    assert max(th.candidates("gamma", 0.95)) == 1.0
    assert all(0.0 <= a <= 1.0 for a in th.candidates("alpha", 0.9))
    assert th.candidates("kappa", 0.25) == [0.125, 0.1875, 0.3325, 0.5]
    assert th.candidates("dead_colour", 0.0) == [0.3, 1.0]
    w = th.replace(MULTIPLAYER_WEIGHTS, "figure2", 0.4)
    assert th.get(w, "figure2") == 0.4 and w.figure[3] == MULTIPLAYER_WEIGHTS.figure[3]


def test_tune_keeps_a_change_only_when_it_gains_on_its_deals():
    log = io.StringIO()
    start = th.mean_score(None, MULTIPLAYER_WEIGHTS, 1, 7, 4)
    w, score = th.tune(None, MULTIPLAYER_WEIGHTS, level=1, seed=7, games=4, rounds=1, min_gain=0.5, log=log)
    assert score == th.mean_score(None, w, 1, 7, 4)
    best = start
    lines = log.getvalue().splitlines()[1:]
    assert len(lines) >= 25  # every weight tried (about four values each)
    for line in lines:
        value = float(re.search(r": (-?[\d.]+)", line).group(1))
        assert ("kept" in line) == (value > best + 0.5)
        best = value if "kept" in line else best
    assert best == score
    assert (w == MULTIPLAYER_WEIGHTS) == (score == start)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--games", "0"], "--games: must be > 0"),
        (["--start", "other"], "--start: invalid choice"),
        (["--games", "1", "--rounds", "1", "--seed", "-5"], "argument --seed: expected an integer >= 0, got '-5'"),
        (
            ["--games", "1", "--rounds", "1", "--check-seed", "-5"],
            "argument --check-seed: expected an integer >= 0, got '-5'",
        ),
        (["--min-gain", "nan"], "--min-gain: must be a finite number >= 0, got nan"),
        (["--min-gain=-inf"], "--min-gain: must be a finite number >= 0, got -inf"),
        (["--min-gain", "-0.1"], "--min-gain: must be a finite number >= 0, got -0.1"),
    ],
)
def test_cli_bad_input_exits_2_with_a_message(argv, expected, capsys, monkeypatch):
    def no_search(*args, **kwargs):
        raise AssertionError("the search ran before the options were checked")

    monkeypatch.setattr(th, "tune", no_search)  # bad input is refused before any game
    exc_code = th.main(argv)
    assert exc_code == 2
    assert expected in capsys.readouterr().err


def test_candidate_weights_print_as_the_numbers_they_are() -> None:
    # 0.65 - 0.2 printed as alpha=0.44999999999999996 in the weights found.
    assert th.candidates("alpha", 0.65) == [0.45, 0.55, 0.75, 0.85]
    assert th.candidates("gamma", 0.95) == [0.75, 0.85, 1.0]
    assert th.candidates("kappa", 0.3) == [0.15, 0.225, 0.399, 0.6]  # 0.3 * 0.75 = 0.22499999999999998
