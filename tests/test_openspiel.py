"""The OpenSpiel adapter (umbrella_env.envs.openspiel): OpenSpiel's own random-simulation
checker, the deal and the moves against the engine, returns, hidden information, resampling
for OpenSpiel's ISMCTS, and bad parameters.

Marked ``openspiel``: collected only where the openspiel extra is installed
(tests/conftest.py); CI runs it in an environment with that extra.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import ismcts, mcts

from umbrella_env.core import actions as A
from umbrella_env.core.config import DEFAULT_MAX_TURNS, GameConfig
from umbrella_env.core.single import SingleGame
from umbrella_env.envs import openspiel as O
from umbrella_env.openspiel_bots import AgentBot
from umbrella_env.tools import bench_openspiel

pytestmark = pytest.mark.openspiel


def dealt(game: pyspiel.Game, key_bytes: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 8)) -> O.UmbrellaState:
    state = game.new_initial_state()
    for b in key_bytes:
        assert state.is_chance_node()
        state.apply_action(b)
    assert not state.is_chance_node()
    return state


def random_states(game: pyspiel.Game, seed: int, limit: int = 400):
    """Every state of one random game (uniform chance and moves), deal included."""
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    yield state
    while not state.is_terminal() and len(state.history()) < limit:
        if state.is_chance_node():
            state.apply_action(int(rng.integers(256)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
        yield state


@pytest.mark.parametrize(
    ("players", "max_turns", "sims"), [(1, 200, 3), (2, 40, 3), (3, 40, 2), (4, 30, 2), (2, DEFAULT_MAX_TURNS, 1)]
)
def test_openspiel_random_sim_test_passes(players: int, max_turns: int, sims: int) -> None:
    # OpenSpiel's checker of a game: plays random games, checks the API's invariants
    # (legal actions, chance outcomes summing to 1, returns in the declared range, clones,
    # observations, information states) and serialization round trips.
    game = O.load_game(players, max_turns=max_turns)
    pyspiel.random_sim_test(game, num_sims=sims, serialize=True, verbose=False)


def test_games_are_registered_with_their_types() -> None:
    multi = pyspiel.load_game("python_umbrella(players=3,level=4)")
    solo = pyspiel.load_game("python_umbrella_solo", {"level": 2})
    assert multi.num_players() == 3 and multi.config == GameConfig(num_players=3, plate_level=4)
    assert solo.num_players() == 1 and solo.config == GameConfig(num_players=1, plate_level=2)
    assert multi.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    assert solo.get_type().utility == pyspiel.GameType.Utility.GENERAL_SUM
    for game in (multi, solo):
        kind = game.get_type()
        assert kind.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
        assert kind.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
        assert game.num_distinct_actions() == A.NUM_ACTIONS
        assert game.observation_tensor_shape() == [899]
    assert (multi.min_utility(), multi.max_utility(), multi.utility_sum()) == (-0.5, 1.0, 0.0)
    # solo at level 2: 6 tokens (12) + the best bonus of 6 tokens (8) + 14 umbrellas
    assert (solo.min_utility(), solo.max_utility()) == (0.0, 34.0)


def test_the_deal_is_the_engines_deal_of_the_key_bytes() -> None:
    for players in (1, 2, 4):
        game = O.load_game(players, level=3)
        state = dealt(game, (7, 0, 255, 1, 0, 0, 0, 128))
        key = 7 + (255 << 16) + (1 << 24) + (128 << 56)
        assert state.game.to_dict() == SingleGame.new(GameConfig(num_players=players, plate_level=3), key).to_dict()
        assert state.history() == [7, 0, 255, 1, 0, 0, 0, 128]
    fresh = O.load_game(2).new_initial_state()
    outcomes = fresh.chance_outcomes()
    assert [a for a, _ in outcomes] == list(range(256)) and sum(p for _, p in outcomes) == pytest.approx(1.0)
    assert fresh.observation_tensor(0) == [0.0] * 899
    assert "dealing" in fresh.observation_string(0)


@pytest.mark.parametrize("players", [1, 2, 3, 4])
def test_moves_observations_and_returns_follow_the_engine(players: int) -> None:
    game = O.load_game(players)
    twin = None
    for state in random_states(game, seed=players, limit=3000):
        if state.game is None:
            continue
        if twin is None:
            twin = state.game.clone()
        else:
            twin.step(int(state.history()[-1]))
        assert state.game.to_dict() == twin.to_dict()
        if state.is_terminal():
            break
        actor = state.current_player()
        assert actor == twin.actor
        assert state.legal_actions() == np.flatnonzero(twin.legal_mask()).tolist()
        assert np.array_equal(np.asarray(state.observation_tensor(actor), np.float32), twin.observe(actor))
    assert state.is_terminal()
    returns = state.returns()
    if players == 1:
        assert returns == [float(twin.score(0))]
    else:
        credits = twin.win_credits()
        assert returns == pytest.approx([players / (players - 1) * (c - 1 / players) for c in credits])
        assert sum(returns) == pytest.approx(0.0)
        assert max(returns) > 0  # somebody won (a truncated game would be a draw)


def test_a_truncated_game_is_a_draw() -> None:
    game = O.load_game(3, max_turns=2)
    *_, state = random_states(game, seed=0)
    assert state.is_terminal() and state.game.truncated
    assert state.returns() == [0.0, 0.0, 0.0]


def hidden_twins(players: int = 2) -> tuple[O.UmbrellaState, O.UmbrellaState]:
    """Two dealt states that differ only in one hidden tile."""
    state = dealt(O.load_game(players))
    other = state.clone()
    seat, slot, depth, code = state.game.hidden_tiles()[0]
    tops = {state.game.top_tile(p, k) >> 1 for p in range(players) for k in range(4)}
    hidden = {c >> 1 for *_, c in state.game.hidden_tiles()}
    spare = next(t for t in range(24) if t not in tops | hidden)
    other.game.set_hidden_tile(seat, slot, depth, 2 * spare + (code & 1))
    assert other.game.hidden_tiles() != state.game.hidden_tiles()
    return state, other


def test_no_string_or_tensor_shows_a_hidden_tile() -> None:
    state, other = hidden_twins()
    for p in range(2):
        assert state.observation_string(p) == other.observation_string(p)
        assert state.observation_tensor(p) == other.observation_tensor(p)
        assert state.information_state_string(p) == other.information_state_string(p)
    assert state.information_state_string(0) != state.information_state_string(1)  # "seat N"


def test_the_information_state_tells_a_revealed_tile_apart() -> None:
    # Play random games until a validation uncovers a hidden tile; with another tile
    # there, the same moves give another information state (perfect recall).
    for seed in range(40):
        for state in random_states(O.load_game(2), seed=seed, limit=2000):
            g = state.game
            if g is None or g.done or g.phase != A.PHASE_VALIDATE:
                continue
            action = state.legal_actions()[0]
            slot = A.decode(action)[1][0]
            if g.stack_height(g.current, slot) < 2:
                continue
            other = state.clone()
            code = g.hidden_tiles()
            below = [c for s, k, d, c in code if s == g.current and k == slot and d == g.stack_height(s, k) - 2][0]
            seen = {g.top_tile(p, k) >> 1 for p in range(2) for k in range(4)} | {c >> 1 for *_, c in code}
            spare = next(t for t in range(24) if t not in seen)
            other.game.set_hidden_tile(g.current, slot, g.stack_height(g.current, slot) - 2, 2 * spare + (below & 1))
            assert state.information_state_string(0) == other.information_state_string(0)
            state.apply_action(action)
            other.apply_action(action)
            assert state.information_state_string(0) != other.information_state_string(0)
            return
    pytest.fail("no validation uncovered a tile in 40 random games")


def test_resampling_redraws_hidden_tiles_and_keeps_the_information_state() -> None:
    # the first state of random games with never-seen tiles to redraw and a covered tile
    # that was a top once
    state = next(
        s
        for seed in range(20)
        for s in random_states(O.load_game(2), seed=seed, limit=600)
        if s.game is not None
        and not s.is_terminal()
        and s.game.unseen_tiles()
        and len(s.game.unseen_tiles()) < len(s.game.hidden_tiles())
    )
    unseen = state.game.unseen_tiles()
    remembered = [t for t in state.game.hidden_tiles() if t not in unseen]
    hidden = state.game.hidden_tiles()
    sampler = np.random.default_rng(0).random
    samples = [state.resample_from_infostate(state.current_player(), sampler) for _ in range(20)]
    for sample in samples:
        assert sample.information_state_string(0) == state.information_state_string(0)
        assert sample.observation_tensor(0) == state.observation_tensor(0)
        assert sample.legal_actions() == state.legal_actions()
        assert all(t in sample.game.hidden_tiles() for t in remembered)  # decision 15
    assert len({tuple(s.game.hidden_tiles()) for s in samples}) > 1
    assert state.game.hidden_tiles() == hidden  # the original is untouched
    # a seeded sampler gives the same draws
    again = [state.resample_from_infostate(0, np.random.default_rng(0).random) for _ in range(1)]
    assert again[0].game.hidden_tiles() == samples[0].game.hidden_tiles()


def test_clones_are_independent() -> None:
    state = dealt(O.load_game(2))
    copy = state.clone()
    copy.apply_action(copy.legal_actions()[0])
    assert state.history() == [1, 2, 3, 4, 5, 6, 7, 8] and len(copy.history()) == 9
    assert state.game.turn == 0 and state.game.to_dict() != copy.game.to_dict()


@pytest.mark.parametrize("players", [1, 2])
def test_openspiel_ismcts_plays_legal_moves(players: int) -> None:
    game = O.load_game(players, max_turns=6)
    rollouts = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(1))
    bot = ismcts.ISMCTSBot(game, rollouts, uct_c=2.0, max_simulations=20, random_state=np.random.RandomState(2))
    rng = np.random.default_rng(0)
    state = game.new_initial_state()
    moves = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(int(rng.integers(256)))
            continue
        action = bot.step(state)
        assert action in state.legal_actions()
        state.apply_action(action)
        moves += 1
    assert moves >= 6  # at least one decision a turn, to the end or the turn limit


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: O.load_game(5), "players: expected an int in [1, 4] (1 is the solo game), got 5"),
        (lambda: O.load_game(2, level=0), "parameter 'level': expected an int in [1, 4], got 0"),
        (lambda: O.load_game(1, max_turns=0), "parameter 'max_turns': expected an int in [1, 2147483647], got 0"),
        (
            lambda: pyspiel.load_game("python_umbrella", {"players": 1}),
            "parameter 'players': expected an int in [2, 4], got 1",
        ),
        (lambda: pyspiel.load_game("python_umbrella", {"colour": 1}), "Unknown parameter 'colour'"),
        (lambda: pyspiel.load_game("python_umbrella_solo", {"players": 2}), "Unknown parameter 'players'"),
    ],
)
def test_bad_parameters_are_named_with_their_range(call, message: str) -> None:
    with pytest.raises((ValueError, pyspiel.SpielError)) as info:
        call()
    assert message in str(info.value)


def test_an_illegal_move_is_refused_and_changes_nothing() -> None:
    state = dealt(O.load_game(2))
    before = (state.game.to_dict(), state.history(), state.information_state_string(0))
    illegal = next(a for a in range(A.NUM_ACTIONS) if a not in state.legal_actions())
    for action in (illegal, A.NUM_ACTIONS):
        with pytest.raises(Exception, match="action"):
            state.apply_action(action)
        assert (state.game.to_dict(), state.history(), state.information_state_string(0)) == before


# --------------------------------------------------------------------------- AgentBot
def test_agent_bots_play_through_openspiels_evaluate_bots() -> None:
    # the heuristic beats uniform random nearly always: seats mixed up, or a bot's move
    # applied for the wrong seat, would show in the returns
    game = O.load_game(2, max_turns=300)
    wins = 0
    for n in range(4):
        bots = [AgentBot("heuristic", game, seed=n), AgentBot("random", game, seed=10 + n)]
        if n % 2:
            bots.reverse()
        returns = pyspiel.evaluate_bots(game.new_initial_state(), bots, n)
        wins += returns[n % 2] == 1.0
    assert wins >= 3


def test_an_agent_bot_hands_its_agent_a_copy() -> None:
    class Spoiler:
        def reset(self, seed=None) -> None:
            pass

        def act(self, observation, action_mask, game) -> int:
            game.step(int(np.flatnonzero(action_mask)[0]))  # plays on its copy
            return int(np.flatnonzero(action_mask)[0])

    state = dealt(O.load_game(2))
    before = state.game.to_dict()
    action = AgentBot(Spoiler(), state.get_game()).step(state)
    assert action == state.legal_actions()[0] and state.game.to_dict() == before


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (
            lambda: AgentBot("search", O.load_game(2), options={"simulations": 0}),
            ValueError,
            "agent 'search': simulations must be an integer from 1 to 1,000,000, got 0",
        ),
        (lambda: AgentBot(object(), O.load_game(2), options={"x": 1}), ValueError, "options apply to an agent spec"),
        (lambda: AgentBot("nobody", O.load_game(2)), ValueError, "unknown agent 'nobody': expected one of 'random'"),
        (
            lambda: AgentBot("heuristic", pyspiel.load_game("tic_tac_toe")),
            TypeError,
            "expected an Umbrella OpenSpiel game",
        ),
        (lambda: AgentBot(object(), O.load_game(2)), TypeError, "an agent with act() and reset()"),
        (lambda: AgentBot("random", O.load_game(2), seed=-1), ValueError, "seed must be None or a non-negative int"),
    ],
)
def test_bad_agent_bots_are_refused(make, error: type, message: str) -> None:
    with pytest.raises(error) as info:
        make()
    assert message in str(info.value)


def test_the_snippet_of_docs_integrations_runs(capsys: pytest.CaptureFixture[str]) -> None:
    # the OpenSpiel section's example, with 5 simulations instead of 100 to stay short
    text = (Path(__file__).resolve().parents[1] / "docs" / "integrations.md").read_text(encoding="utf-8")
    section = text[text.index("## OpenSpiel") :]
    snippet = re.findall(r"```python\n(.*?)```", section, re.S)[0]
    assert "max_simulations=100" in snippet
    exec(compile(snippet.replace("max_simulations=100", "max_simulations=5"), "integrations.md", "exec"), {})
    returns = [float(x) for x in re.findall(r"-?\d+\.\d+", capsys.readouterr().out.splitlines()[-1])]
    assert sorted(returns) == [-1.0, 1.0]


def test_the_openspiel_benchmark_runs_and_refuses_bad_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_openspiel.main(["--steps", "0"]) == 2
    assert "--steps must be an integer >= 1, got 0" in capsys.readouterr().err
    assert bench_openspiel.main(["--steps", "300", "--players", "2"]) == 0
    header, row = capsys.readouterr().out.splitlines()[1:3]
    assert header.split()[:3] == ["players", "SingleGame", "OpenSpiel"]
    assert row.split()[0] == "2" and len(row.split()) == 8


def test_the_ismcts_script_of_docs_integrations_runs(monkeypatch, capsys: pytest.CaptureFixture[str]) -> None:
    # the script the section measures with (heuristic 20 100), on one game of 3 simulations
    text = (Path(__file__).resolve().parents[1] / "docs" / "integrations.md").read_text(encoding="utf-8")
    section = text[text.index("## OpenSpiel") :]
    script = re.findall(r"```python\n(.*?)```", section, re.S)[1]
    assert script.startswith("# ismcts_vs.py")
    monkeypatch.setattr(sys, "argv", ["ismcts_vs.py", "heuristic", "1", "3"])
    exec(compile(script, "ismcts_vs.py", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] in ("game 1: ISMCTS won", "game 1: ISMCTS lost", "game 1: ISMCTS drew")
    assert re.fullmatch(r"ISMCTS \(3 simulations\) won (0|0\.5|1) of 1 games against heuristic", lines[-1])
