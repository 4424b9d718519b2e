"""The batched multiplayer API (self-play at scale)."""

from __future__ import annotations

import numpy as np
import pytest

from umbrella_env.core import engine as E
from umbrella_env.core.config import GameConfig
from umbrella_env.core.errors import ConfigError, IllegalActionError
from umbrella_env.core.single import SingleGame
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
    """Every seat's dense rewards add up to its score change, the seats not moving too:
    each game starts from a stress start (its mover's four zones emptied into the others'),
    and its first decision, a fallback, takes from the next seat's personal zone."""
    from umbrella_env.core import actions as A
    from umbrella_env.tools.differential import stress_start

    games = VectorGame(num_games=8, num_players=3, reward_mode="dense", seed=2)
    games.reset(seed=2)
    rng = np.random.default_rng(0)
    for i in range(8):
        d = games.get_state(i)
        assert d["phase"] == "slide"
        games.set_state(i, stress_start(d))
    start = E.scores(games.state).astype(float)
    movers = E.actor(games.state).copy()
    mask = games.view()["action_mask"]
    first = np.array([
        next(a for a in np.flatnonzero(m) if " of personal+1 " in A.action_to_string(int(a))) for m in mask
    ])  # fmt: skip
    _, total, terminated, truncated, _ = games.step(first)
    nxt = (movers + 1) % 3
    assert (total[np.arange(8), nxt] != 0).all()  # the next seat's score changed on another's move
    for _ in range(50):
        _, rewards, terminated, truncated, _ = games.step(games.random_actions(rng))
        assert not (terminated | truncated).any()
        total += rewards
    np.testing.assert_array_equal(start + total, E.scores(games.state))


def test_set_state_loads_a_game_and_a_refused_dict_changes_nothing() -> None:
    from umbrella_env.core.errors import OutOfRangeError, StateError

    games = VectorGame(num_games=3, num_players=2, seed=4)
    other = VectorGame(num_games=1, num_players=2, seed=9).get_state(0)
    games.set_state(1, other)
    assert games.get_state(1) == other and games.get_state(0) != other
    before = [games.get_state(i) for i in range(3)]
    for i, d, error in (
        (0, dict(other, num_players=3), StateError),  # another configuration
        (0, {**other, "phase": "nonsense"}, StateError),
        (3, other, OutOfRangeError),
    ):
        with pytest.raises(error):
            games.set_state(i, d)
        assert [games.get_state(k) for k in range(3)] == before
    ended = SingleGame.new(GameConfig(num_players=2), 5)
    rng = np.random.default_rng(0)
    while not ended.done:
        ended.step(int(rng.choice(ended.legal_actions())))
    with pytest.raises(StateError, match="holds a finished game: VectorGame holds games in play"):
        games.set_state(0, ended.to_dict())
    assert [games.get_state(k) for k in range(3)] == before


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


def test_the_final_observation_of_every_seat_is_kept_for_the_games_that_end() -> None:
    """A user's loop could not bootstrap a truncated game: ``step`` returned the next deal's
    position and no final observation (the solo vector env gives ``final_obs``)."""
    from umbrella_env.core.single import SingleGame

    games = VectorGame(num_games=6, num_players=3, max_turns=2, seed=3)
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(60):
        actions = games.random_actions(rng)
        before = [SingleGame.from_dict(games.get_state(i)) for i in range(6)]
        _, _, terminated, truncated, info = games.step(actions)
        done = terminated | truncated
        if not done.any():
            assert "final_obs" not in info
            continue
        np.testing.assert_array_equal(info["_final_obs"], done)
        for i in range(6):
            if not done[i]:
                assert info["final_obs"][i] is None
                continue
            last = before[i]
            last.step(int(actions[i]))  # the single-game engine's own copy of the ending move
            seen = info["final_obs"][i]
            assert seen.shape == (3, 899) and seen.dtype == np.float32
            for p in range(3):
                np.testing.assert_array_equal(seen[p], last.observe(p))
                assert games.single_observation_space.contains(seen[p])
            checked += 1
    assert checked >= 6


def test_the_gymnasium_vector_names_a_custom_loop_reads() -> None:
    games = VectorGame(num_games=5, num_players=2, seed=0)
    assert games.num_envs == 5 and games.single_action_space.n == 968
    view = games.view()
    assert all(games.single_observation_space.contains(o) for o in view["observation"])
    assert view["action_mask"].dtype == np.bool_
    games.close()
    assert games.step(games.random_actions(np.random.default_rng(0)))[1].shape == (5, 2)  # close() releases nothing


def test_built_in_agents_play_a_game_of_the_batch_as_their_error_says() -> None:
    from agents import make_agent
    from umbrella_env.core.single import SingleGame

    games = VectorGame(num_games=3, num_players=2, seed=4)
    view = games.view()
    greedy = make_agent("greedy", seed=0)
    with pytest.raises(ValueError, match=r"SingleGame.from_dict\(games.get_state\(i\)\) for game i of a VectorGame"):
        greedy.act(view["observation"][1], view["action_mask"][1])
    action = greedy.act(view["observation"][1], view["action_mask"][1], SingleGame.from_dict(games.get_state(1)))
    assert view["action_mask"][1][action]


def test_the_docstring_loop_and_the_readme_snippet_run_as_written() -> None:
    """The docstring's example trained seat 0 only (seat 0 always moves first) and called
    reset() after the constructor's deal; run as written here, shortened."""
    import re
    import textwrap
    from pathlib import Path

    import umbrella_env.envs.vector_game as module

    doc = module.__doc__ or ""
    code = textwrap.dedent(doc.split("::\n", 1)[1].split("\nBuilt-in agents", 1)[0])
    assert "range(10_000)" in code and "N = 512" in code
    code = code.replace("range(10_000)", "range(3000)").replace("N = 512", "N = 16")
    space: dict[str, object] = {"my_policy": lambda obs, masks: masks.argmax(axis=1)}  # first legal action
    exec(code, space)
    seat, returns = space["seat"], space["returns"]
    assert set(seat.tolist()) == {0, 1} and (returns != 0).any()  # games ended, both seats learnt from
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    [snippet] = [b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if "VectorGame" in b]
    space = {}
    exec(snippet, space)
    assert space["rewards"].shape == (512, 2)
