"""The single-game engine equals the batched engine (umbrella_env.core.single).

The rule tests of ``tests/test_rules.py`` also run on it (``SingleAdapter`` in
``tests/engines.py``).  Here: a differential check against the batched engine on random
games of every configuration (mask, state dict, observation from every seat, scores,
ranks at every state), dealing, error handling, copies and fresh arrays.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from agents.heuristic import HeuristicAgent
from tests.coverage import assert_interesting
from umbrella_env.core import actions as A
from umbrella_env.core import batch_io
from umbrella_env.core import engine as E
from umbrella_env.core import observation as O
from umbrella_env.core.components import components_from_dict
from umbrella_env.core.config import GameConfig
from umbrella_env.core.errors import ActionError, ConfigError, GameOverError, IllegalActionError, StateError
from umbrella_env.core.single import SingleGame
from umbrella_env.tools import differential

CONFIGS = [(p, level) for p in (1, 2, 3, 4) for level in (1, 2, 3, 4)]


def observations(g: SingleGame) -> list[np.ndarray]:
    return [g.observe(q) for q in range(g.config.num_players)]


def snapshot(g: SingleGame) -> tuple:
    """Everything observable about a game."""
    return g.to_dict(), g.legal_mask().tobytes(), [o.tobytes() for o in observations(g)], g.observe().tobytes()


def play_random(g: SingleGame, steps: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if g.done:
            return
        legal = g.legal_actions()
        g.step(legal[rng.integers(len(legal))])


# --------------------------------------------------------------------------- differential
@pytest.mark.parametrize(("num_players", "plate_level"), CONFIGS)
def test_single_equals_batched(num_players: int, plate_level: int) -> None:
    stats = differential.run_single(
        num_players,
        plate_level,
        states=3_000,
        seed=1000 + 10 * num_players + plate_level,
        batch=8,
        max_turns=40,
        late=0.5,  # half the games start near their end: final rounds and reserve tokens in every configuration
    )
    assert stats.states >= 3_000
    # The check is only meaningful if the interesting decisions and endings happened.
    assert_interesting(stats, num_players, plate_level, min_covers=3)


def test_differential_detects_an_observation_divergence(monkeypatch: pytest.MonkeyPatch) -> None:
    original = SingleGame.observe

    def corrupted(self: SingleGame, seat: int | None = None) -> np.ndarray:
        obs = original(self, seat)
        if self.turn >= 3:
            obs[-1] += 1
        return obs

    monkeypatch.setattr(SingleGame, "observe", corrupted)
    with pytest.raises(differential.Mismatch, match="observations"):
        differential.run_single(2, 1, states=500, seed=1)


# --------------------------------------------------------------------------- dealing
@pytest.mark.parametrize("num_players", [1, 2, 3, 4])
def test_new_equals_the_batch_game_dealt_with_the_same_key(num_players: int) -> None:
    """SingleGame.new replays engine.reset's per-game stream in Python: same deal, redraws included."""
    cfg = GameConfig(num_players=num_players, plate_level=3)
    keys = list(range(400))
    state = E.allocate(cfg, len(keys))
    E.reset(state, np.arange(len(keys)), keys=keys)
    for b, key in enumerate(keys):
        assert SingleGame.new(cfg, key).to_dict() == batch_io.to_dict(state, b), f"key {key}"
    for key in (2**63 - 1, 2**64 - 1, -5, np.uint64(2**64 - 3), np.int64(-7)):  # wrapped like the engine
        one = E.allocate(cfg, 1)
        E.reset(one, [0], keys=[key])
        g = SingleGame.new(cfg, key)
        assert g.to_dict() == batch_io.to_dict(one, 0), f"key {key}"
        for q in range(num_players):
            assert np.array_equal(g.observe(q), O.observe(one, seats=q)[0])
        assert np.array_equal(g.legal_mask(), E.legal_action_mask(one)[0])
    assert SingleGame.new(cfg, 5).to_dict() != SingleGame.new(cfg, 6).to_dict()


@pytest.mark.parametrize("num_players", [1, 2, 4])
def test_new_replays_setup_redraws(monkeypatch: pytest.MonkeyPatch, num_players: int) -> None:
    """The default layouts never show a complete figure at setup, so redraws (docs/rules.md §3.3)
    are checked with layouts whose four corners share a colour: tile 15 black (the corners
    from every slot) is then complete, in solo too."""
    from umbrella_env.core import single_deal

    corners = components_from_dict(
        {
            "layouts": {
                "A": ["BGRB", "GRYY", "RYGR", "BYGB"],
                "B": ["BRGB", "RGYY", "GYRG", "BYRB"],
                "C": ["GBRG", "BRYY", "RYBR", "GYBG"],
                "D": ["YGRY", "GRBB", "RBGR", "YBGY"],
            }
        }
    )
    hits: list[bool] = []
    original = single_deal._setup_complete

    def counting(*args: object) -> bool:
        hit = original(*args)  # type: ignore[arg-type]
        hits.append(hit)
        return hit

    monkeypatch.setattr(single_deal, "_setup_complete", counting)
    cfg = GameConfig(num_players=num_players, components=corners)
    keys = list(range(200))
    state = E.allocate(cfg, len(keys))
    E.reset(state, np.arange(len(keys)), keys=keys)
    for b, key in enumerate(keys):
        assert SingleGame.new(cfg, key).to_dict() == batch_io.to_dict(state, b), f"key {key}"
    assert sum(hits) > 10


# --------------------------------------------------------------------------- conversions
@pytest.mark.parametrize("num_players", [1, 2, 4])
def test_batch_and_dict_round_trips(num_players: int) -> None:
    cfg = GameConfig(num_players=num_players, plate_level=4, max_turns=500)
    g = SingleGame.new(cfg, 11)
    play_random(g, 60, seed=num_players)
    state = E.init(cfg, 3, seed=0)
    others = [batch_io.to_dict(state, b) for b in (0, 2)]
    g.to_batch(state, 1)
    assert batch_io.to_dict(state, 1) == g.to_dict()
    assert [batch_io.to_dict(state, b) for b in (0, 2)] == others  # other slots untouched
    assert snapshot(SingleGame.from_batch(state, 1)) == snapshot(g)
    assert snapshot(SingleGame.from_dict(g.to_dict())) == snapshot(g)
    assert snapshot(pickle.loads(pickle.dumps(g))) == snapshot(g)


def test_from_dict_validates() -> None:
    d = SingleGame.new(GameConfig(num_players=2), 1).to_dict()
    d["supply"] += 1
    with pytest.raises(StateError, match="supply"):
        SingleGame.from_dict(d)


def test_to_batch_needs_the_same_configuration() -> None:
    g = SingleGame.new(GameConfig(num_players=2, plate_level=1), 1)
    with pytest.raises(ConfigError):
        g.to_batch(E.allocate(GameConfig(num_players=2, plate_level=2), 1), 0)


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize("num_players", [1, 2, 3])
def test_step_checked_errors_leave_the_state_unchanged(num_players: int) -> None:
    cfg = GameConfig(num_players=num_players, plate_level=4, max_turns=60)
    rng = np.random.default_rng(num_players)
    phases: set[int] = set()
    for key in range(20):
        g = SingleGame.new(cfg, key)
        while not g.done:
            before = snapshot(g)
            mask = g.legal_mask()
            illegal = np.flatnonzero(~mask)
            for bad in (-1, A.NUM_ACTIONS, 2.0, "3", None, True):
                with pytest.raises(ActionError) as info:
                    g.step_checked(bad)  # type: ignore[arg-type]
                assert not isinstance(info.value, IllegalActionError)
            for a in illegal[rng.integers(len(illegal), size=3)]:
                with pytest.raises(IllegalActionError, match=A.PHASES[g.phase]):
                    g.step_checked(int(a))
            assert snapshot(g) == before
            phases.add(g.phase)
            g.step_checked(int(rng.choice(np.flatnonzero(mask))))
        before = snapshot(g)
        assert not g.legal_mask().any() and g.legal_actions() == []
        for a in (0, np.int64(640)):
            with pytest.raises(GameOverError):
                g.step_checked(a)
        assert snapshot(g) == before
        if A.PHASE_VALIDATE in phases and key >= 1:
            break
    assert {A.PHASE_SLIDE, A.PHASE_VALIDATE} <= phases


def test_observer_seat_is_checked() -> None:
    g = SingleGame.new(GameConfig(num_players=3), 0)
    for bad in (-1, 3, 1.0, True, None.__class__):
        with pytest.raises(ValueError):
            g.observe(bad)  # type: ignore[arg-type]
    assert np.array_equal(g.observe(np.int64(2)), g.observe(2))


# --------------------------------------------------------------------------- copies
@pytest.mark.parametrize("num_players", [1, 2, 4])
def test_clone_is_independent(num_players: int) -> None:
    g = SingleGame.new(GameConfig(num_players=num_players, plate_level=4), 8)
    play_random(g, 30, seed=1)
    for make in (SingleGame.clone, copy.copy, copy.deepcopy):
        before = snapshot(g)
        twin = make(g)
        assert snapshot(twin) == before
        play_random(twin, 200, seed=2)
        assert snapshot(g) == before  # the original did not move
        twin_state = snapshot(twin)
        play_random(g, 5, seed=3)
        assert snapshot(twin) == twin_state  # nor the copy when the original moves
        assert snapshot(make(g)) == snapshot(g)


def test_observe_and_mask_return_fresh_arrays() -> None:
    g = SingleGame.new(GameConfig(num_players=2), 4)
    obs, mask = g.observe(), g.legal_mask()
    assert obs.dtype == np.float32 and obs.shape == (O.OBS_SIZE,)
    assert mask.dtype == np.bool_ and mask.shape == (A.NUM_ACTIONS,)
    obs[:] = 7
    mask[:] = True
    assert not np.array_equal(g.observe(), obs) and not g.legal_mask().all()
    assert g.observe() is not g.observe() and g.observe(0) is not g.observe(0)
    assert not np.shares_memory(g.observe(), g.observe(1))


def test_games_of_every_turn_limit_share_one_set_of_tables_and_keep_their_own_limit() -> None:
    """Review of resource use: the tables were cached per ``max_turns``, 0.6 MB for each new
    limit (a curriculum over limits grew without bound), and the agents' caches keyed on
    them multiplied too."""
    from umbrella_env.core import single

    games = [SingleGame.new(GameConfig(num_players=2, max_turns=limit), 4) for limit in (6, 7, 8)]
    before = len(single._CACHE)
    games += [SingleGame.new(GameConfig(num_players=2, max_turns=limit), 4) for limit in range(9, 60)]
    assert len(single._CACHE) == before and len({id(g.tables) for g in games}) == 1
    fraction = next(start for start, _, name, _ in O.observation_layout() if name == "turn_fraction")
    rng = np.random.default_rng(0)
    for game in [*games[:3], *(g.clone() for g in games[:3])]:  # clones of the new games
        while not (game.terminated or game.truncated):
            game.step(int(rng.choice(np.flatnonzero(game.legal_mask()))))
            assert game.observe(0)[fraction] == pytest.approx(game.turn / game.config.max_turns)
        assert game.truncated and game.turn == game.config.max_turns  # each game its own limit


def _played_with_memory(num_players: int, key: int) -> list[tuple[SingleGame, set[int]]]:
    """The decisions of a seeded random game, each with the tiles shown face up so far (a
    top of any stack, or the tile in transit), tracked outside the engine."""
    g = SingleGame.new(GameConfig(num_players=num_players), key)
    rng = np.random.default_rng(key)
    heuristic = HeuristicAgent(seed=key)  # random play seldom fills the four slots of a solo board
    shown: set[int] = set()
    out = []
    while not g.done:
        shown |= {g.top_tile(p, k) >> 1 for p in range(num_players) for k in range(4) if g.top_tile(p, k) >= 0}
        if g.passing >= 0:
            shown.add(g.passing >> 1)
        out.append((g.clone(), set(shown)))
        if rng.random() < 0.5:
            g.step(int(rng.choice(g.legal_actions())))
        else:
            g.step(heuristic.act(g.observe(g.actor), g.legal_mask(), g))
    return out


@pytest.mark.parametrize("num_players", [1, 2, 3, 4])
def test_a_game_remembers_which_hidden_tiles_were_tops_once(num_players: int) -> None:
    """docs/rules.md §6 (decision 15): ``unseen_tiles`` lists the hidden tiles never shown face
    up; the others were a top once and were covered later, and a player may remember them.
    Checked against every tile shown in the game, tracked outside the engine, at every
    decision."""
    remembered = 0
    for key in range(6):
        for g, shown in _played_with_memory(num_players, key):
            unseen = set(g.unseen_tiles())
            assert unseen <= set(g.hidden_tiles())
            for tile in g.hidden_tiles():
                assert (tile in unseen) == (tile[3] >> 1 not in shown), tile
            remembered += len(g.hidden_tiles()) - len(unseen)
    assert remembered > (5 if num_players == 1 else 100), remembered  # solo covers only when four slots are full


def test_memory_is_kept_by_copies_and_not_by_a_position() -> None:
    """``clone``, ``copy``, ``deepcopy`` and pickling keep what a game remembers; a game
    built from a position (``from_dict``, ``from_batch``) counts every hidden tile as unseen."""
    g = next(g for g, _ in _played_with_memory(2, 1) if len(g.unseen_tiles()) < len(g.hidden_tiles()))
    for other in (g.clone(), copy.copy(g), copy.deepcopy(g), pickle.loads(pickle.dumps(g))):
        assert other.unseen_tiles() == g.unseen_tiles()
    assert SingleGame.from_dict(g.to_dict()).unseen_tiles() == g.hidden_tiles()
    state = E.allocate(g.config, 1)
    g.to_batch(state, 0)
    assert SingleGame.from_batch(state, 0).unseen_tiles() == g.hidden_tiles()


@pytest.mark.parametrize("num_players", [1, 2, 3, 4])
def test_win_credits_count_a_result_as_the_runner_does(num_players: int) -> None:
    """``SingleGame.win_credits()`` equals the match runner's credits of the same game, a
    truncated game included (a draw), and sums to 1 (solo: no winner)."""
    from umbrella_env.match import win_credits

    truncated = 0
    for key, limit in ((1, 3000), (2, 3000), (3, 12)):
        g = SingleGame.new(GameConfig(num_players=num_players, max_turns=limit), key)
        rng = np.random.default_rng(key)
        while not g.done:
            g.step(int(rng.choice(g.legal_actions())))
        assert g.win_credits() == win_credits(g.ranks(), g.truncated)
        assert sum(g.win_credits()) == (0.0 if num_players == 1 else pytest.approx(1.0))
        if g.truncated and num_players > 1:
            assert g.win_credits() == [1 / num_players] * num_players
        elif num_players > 1:  # most points, then fewest umbrellas in the personal zone (§5.3)
            best = max((g.score(p), -g.personal_umbrellas(p)) for p in range(num_players))
            winners = [p for p in range(num_players) if (g.score(p), -g.personal_umbrellas(p)) == best]
            assert g.win_credits() == [1 / len(winners) if p in winners else 0.0 for p in range(num_players)]
        truncated += g.truncated
    assert truncated == 1


def test_a_solo_game_remembers_its_discarded_tiles_and_recall_never_draws_them() -> None:
    """docs/rules.md §6 (decision 15), §8.2: a validated white tile leaves a solo game after it
    was seen; ``discarded_tiles`` lists exactly the tiles shown and no longer in play (tracked
    outside the engine), and a determinization with recall never puts one under a top."""
    from agents.common import determinize

    rng = np.random.default_rng(0)
    discarded = drawn = 0
    for key in range(8):
        for g, shown in _played_with_memory(1, key):
            present = {tile["tile"] for stack in g.to_dict()["slots"][0] for tile in stack}
            present |= {g.passing >> 1} if g.passing >= 0 else set()
            assert set(g.discarded_tiles()) == shown - present
            if g.discarded_tiles() and g.unseen_tiles():
                d = determinize(g, 0, rng, recall=True)
                assert not {code >> 1 for *_, code in d.hidden_tiles()} & set(g.discarded_tiles())
                drawn += 1
            discarded = max(discarded, len(g.discarded_tiles()))
    assert discarded >= 2 and drawn >= 20, (discarded, drawn)
    g = SingleGame.new(GameConfig(num_players=1), 0)
    assert g.discarded_tiles() == [] and pickle.loads(pickle.dumps(g)).discarded_tiles() == []
