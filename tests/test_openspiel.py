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
from open_spiel.python import rl_environment
from open_spiel.python.algorithms import generate_playthrough, ismcts, mcts
from open_spiel.python.observation import make_observation

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
    # at level 4 the best bonus is 11 and the extra-turn power gives an umbrella back
    assert O.load_game(1, level=4).max_utility() == 38.0
    # a solo game lasts at most 21 turns (docs/rules.md decision 11), of at most 7 decisions
    assert solo.max_game_length() == 8 + 21 * 7
    assert O.load_game(2, max_turns=O.MAX_TURNS).max_game_length() <= 2**31 - 1


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
    for player in (2, -1, 9, 0.0, True):  # OpenSpiel's own methods refuse them; a sample was returned
        with pytest.raises(ValueError, match=re.escape(f"player_id: expected a player in [0, 2), got {player!r}")):
            state.resample_from_infostate(player, sampler)


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
        (lambda: O.load_game(1, max_turns=0), "parameter 'max_turns': expected an int in [1, 306783373], got 0"),
        (
            lambda: O.load_game(2, max_turns=2**31 - 1),  # OpenSpiel's max_game_length is a C int
            "parameter 'max_turns': expected an int in [1, 306783373], got 2147483647",
        ),
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


@pytest.mark.parametrize("players", [1, 2])
def test_openspiels_playthrough_generator_runs(players: int) -> None:
    # OpenSpiel's own playthrough tool reads every observer: information state, observation,
    # public and private, strings and tensors
    name = "python_umbrella_solo(max_turns=4)" if players == 1 else "python_umbrella(max_turns=3)"
    text = generate_playthrough.playthrough(name, None)
    assert 'InformationStateString(0) = "seat 0\\n' in text and "ObservationTensor(0)" in text
    assert "InformationStateTensor" not in text  # not provided


def test_the_observer_types_of_openspiel() -> None:
    state = dealt(O.load_game(2))
    board = state.observation_string(0)
    game = state.get_game()
    for private in (
        pyspiel.PrivateInfoType.NONE,
        pyspiel.PrivateInfoType.SINGLE_PLAYER,
        pyspiel.PrivateInfoType.ALL_PLAYERS,
    ):
        public = make_observation(
            game, pyspiel.IIGObservationType(public_info=True, perfect_recall=False, private_info=private)
        )
        assert public.string_from(state, 0) == board  # nothing is private: the same board
        public.set_from(state, 0)
        assert np.array_equal(public.tensor, state.game.observe(0))
        hidden = make_observation(
            game, pyspiel.IIGObservationType(public_info=False, perfect_recall=False, private_info=private)
        )
        hidden.set_from(state, 0)
        assert hidden.string_from(state, 0) == "" and hidden.tensor.size == 0  # nothing private to show
    recall = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True))
    recall.set_from(state, 1)  # no tensor to fill, and no error
    assert recall.string_from(state, 1) == state.information_state_string(1)
    assert game.information_state_tensor_size() == 0 and state.information_state_tensor(0) == []


def test_action_strings_of_the_deal() -> None:
    state = O.load_game(2).new_initial_state()
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, 5) == "deal key byte 5"
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, 300) == "chance outcome 300 (out of range [0, 256))"
    state = dealt(O.load_game(2))
    assert state.history_str() == "1, 2, 3, 4, 5, 6, 7, 8"
    assert state.action_to_string(0, 0) == A.ACTION_STRINGS[0]


def test_agent_bots_are_reset_at_each_game_of_evaluate_bots() -> None:
    seeds: list[int | None] = []

    class Counting:
        def reset(self, seed=None) -> None:
            seeds.append(seed)

        def act(self, observation, action_mask, game) -> int:
            return int(np.flatnonzero(action_mask)[0])

    game = O.load_game(2, max_turns=5)
    bots = [AgentBot(Counting(), game, seed=7), AgentBot("random", game, seed=1)]
    for n in range(3):
        pyspiel.evaluate_bots(game.new_initial_state(), bots, n)
    assert seeds == [7, 8, 9]


def test_an_agent_bot_refuses_a_state_of_another_game() -> None:
    bot = AgentBot("heuristic", O.load_game(2))
    state = dealt(O.load_game(3, level=4))
    with pytest.raises(ValueError) as info:
        bot.step(state)
    assert str(info.value) == (
        "this AgentBot plays 2 players, plate level 1, and the state is of 3 players, plate level 4: "
        "build the bot with the state's game"
    )
    assert (
        AgentBot("random", O.load_game(2, max_turns=9)).step(dealt(O.load_game(2)))
        in dealt(O.load_game(2)).legal_actions()
    )


def test_openspiels_rl_environment_hands_agents_the_observation() -> None:
    env = rl_environment.Environment(O.load_game(2, max_turns=20), seed=0)
    step = env.reset()
    rng = np.random.default_rng(0)
    moves = 0
    while not step.last():
        player = step.observations["current_player"]
        info = step.observations["info_state"][player]
        legal = step.observations["legal_actions"][player]
        game = env.get_state.game  # the engine's own view of the mover, not the adapter's
        np.testing.assert_array_equal(np.asarray(info, np.float32), game.observe(player))
        assert player == game.actor and legal == game.legal_actions()
        step = env.step([int(rng.choice(legal))])
        moves += 1
    assert moves >= 20 and sorted(step.rewards) in ([-1.0, 1.0], [0.0, 0.0])


def test_a_seeded_resampler_makes_ismcts_repeat_itself() -> None:
    game = O.load_game(2)
    chosen = []
    for _ in range(2):
        state = dealt(game)
        rs = np.random.RandomState(1)
        # 100 simulations over the 64 first slides: the worlds drawn decide the visits
        bot = ismcts.ISMCTSBot(
            game, mcts.RandomRolloutEvaluator(1, np.random.RandomState(0)), 2.0, 100, random_state=rs
        )
        bot.set_resampler(lambda s, player, rs=rs: s.resample_from_infostate(player, rs.uniform))
        chosen.append(bot.step_with_policy(state))
    assert chosen[0] == chosen[1]
