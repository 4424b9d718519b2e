"""The batched multiplayer API (self-play at scale)."""

from __future__ import annotations

import numpy as np
import pytest

from umbrella_env.core import engine as E
from umbrella_env.core.errors import ConfigError, IllegalActionError
from umbrella_env.envs.vector_game import VectorGame


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_every_seat_gets_its_result_and_games_restart(num_players: int) -> None:
    from umbrella_env.tools.differential import policy_actions

    games = VectorGame(num_games=16, num_players=num_players, max_turns=150, seed=1)
    view = games.reset(seed=1)
    rng = np.random.default_rng(0)
    totals = np.zeros((16, num_players))
    finished = terminations = 0
    for _ in range(600):
        mask = view["action_mask"]
        assert mask[np.arange(16), games.random_actions(np.random.default_rng(1))].all()
        actions = policy_actions(games.state, rng, greedy=0.9)  # completes figures, so games end
        view, rewards, terminated, truncated, info = games.step(actions)
        totals += rewards
        done = terminated | truncated
        for g in np.flatnonzero(terminated):
            ranks = info["final_ranks"][g]
            won = ranks == 0
            expected = np.where(won, 1.0 if won.sum() == 1 else 0.5, -1.0)
            np.testing.assert_array_equal(rewards[g], expected)
        np.testing.assert_array_equal(rewards[truncated], 0.0)
        finished += int(done.sum())
        terminations += int(terminated.sum())
        assert (games.state.turn[done] == 0).all()  # reset in the same call
        np.testing.assert_array_equal(view["to_move"], E.actor(games.state))
    assert finished >= 16 and terminations > 0
    assert (totals < 0).any()  # losses reach the losers


def test_dense_rewards_track_every_seats_score() -> None:
    games = VectorGame(num_games=8, num_players=3, reward_mode="dense", seed=2)
    games.reset(seed=2)
    rng = np.random.default_rng(0)
    start = E.scores(games.state).astype(float)
    total = np.zeros((8, 3))
    for _ in range(50):
        _, rewards, terminated, truncated, _ = games.step(games.random_actions(rng))
        assert not (terminated | truncated).any()
        total += rewards
    np.testing.assert_array_equal(start + total, E.scores(games.state))


def test_bad_input_names_the_game() -> None:
    games = VectorGame(num_games=4, num_players=2, seed=0)
    view = games.reset()
    actions = games.random_actions(np.random.default_rng(0))
    actions[2] = int(np.flatnonzero(~view["action_mask"][2])[0])
    with pytest.raises(IllegalActionError, match="game 2"):
        games.step(actions)
    with pytest.raises(ConfigError):
        VectorGame(num_games=0)
    with pytest.raises(ConfigError, match="solo"):
        VectorGame(num_games=2, num_players=1)
