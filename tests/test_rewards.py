"""The reward functions of the env policy layer (``umbrella_env.envs.common``) on explicit
numbers, and the seat each learner is paid for: docs/rules.md §5.3 (ties), the env docs'
reward modes, and the shaping signal of training."""

from __future__ import annotations

import numpy as np
import pytest

from umbrella_env.core import batch_io
from umbrella_env.core import engine as E
from umbrella_env.core.config import GameConfig
from umbrella_env.core.single import SingleGame
from umbrella_env.envs.common import end_rewards, illegal_rewards, score_edge, step_rewards


def never() -> None:
    raise AssertionError("ranks are read only when a game ended in 'win' mode")


def test_win_rewards_of_a_sole_winner_a_shared_win_and_a_truncation() -> None:
    assert end_rewards([12, 9, 7], [0, 1, 2], True, "win").tolist() == [1.0, -1.0, -1.0]
    assert end_rewards([12, 12, 7], [0, 0, 2], True, "win").tolist() == [0.5, 0.5, -1.0]  # decision 13: shared
    assert end_rewards([9, 9, 9, 9], [0, 0, 0, 0], True, "win").tolist() == [0.5] * 4
    assert end_rewards([12, 9, 7], [0, 1, 2], False, "win").tolist() == [0.0, 0.0, 0.0]  # truncated
    batch = end_rewards([[12, 12], [3, 8], [5, 1]], [[0, 0], [1, 0], [0, 1]], [True, True, False], "win")
    assert batch.tolist() == [[0.5, 0.5], [-1.0, 1.0], [0.0, 0.0]]
    assert end_rewards([12, 9], None, True, "score").tolist() == [12.0, 9.0]


def test_step_rewards_pay_only_the_games_that_ended() -> None:
    before, after = [[3, 4], [5, 5], [0, 2]], [[6, 4], [5, 9], [1, 2]]
    done, terminated = np.array([False, True, False]), np.array([False, True, False])
    assert step_rewards("dense", before, after, done, terminated, never).tolist() == [[3, 0], [0, 4], [1, 0]]
    assert step_rewards("score", before, after, done, terminated, never).tolist() == [[0, 0], [5, 9], [0, 0]]
    win = step_rewards("win", before, after, done, terminated, lambda: np.array([[1, 0], [1, 0], [0, 1]]))
    assert win.tolist() == [[0, 0], [-1, 1], [0, 0]]
    assert step_rewards("score", before, after, np.zeros(3, bool), terminated, never).tolist() == [[0, 0]] * 3
    # one game, in plain Python
    assert step_rewards("score", [1, 2], [4, 2], False, False, never) == [0.0, 0.0]
    assert step_rewards("score", [1, 2], [4, 2], True, True, never) == [4.0, 2.0]
    assert step_rewards("win", [1, 2], [4, 4], True, True, lambda: [0, 0]) == [0.5, 0.5]
    assert step_rewards("dense", [1, 2], [4, 1], False, False, never) == [3.0, -1.0]


def test_score_edge_is_the_seat_against_the_mean_of_the_others() -> None:
    assert score_edge([10, 4, 7], 0) == pytest.approx(10 - (4 + 7) / 2)
    assert score_edge([10, 4, 7], 2) == pytest.approx(7 - (10 + 4) / 2)
    assert score_edge([10, 4], 1) == pytest.approx(-6)
    assert score_edge([[10, 4, 7], [1, 2, 3]], [1, 2]).tolist() == pytest.approx([4 - 8.5, 3 - 1.5])
    assert score_edge([[13], [20]], [0, 0]).tolist() == [13.0, 20.0]  # solo: the score itself
    assert illegal_rewards(3, 1).tolist() == [0.0, -1.0, 0.0]


def test_reset_deals_the_keys_of_the_generator_in_index_order() -> None:
    """``engine.reset(state, idx, rng)``: game ``idx[i]`` is dealt from the i-th key drawn."""
    config = GameConfig(num_players=3, plate_level=2)
    state = E.allocate(config, 5)
    idx = np.array([4, 0, 2])
    E.reset(state, idx, np.random.default_rng(7))
    rng = np.random.default_rng(7)
    keys = [E.draw_key(rng) for _ in idx]
    for b, key in zip(idx, keys):
        assert batch_io.to_dict(state, int(b)) == SingleGame.new(config, key).to_dict()
