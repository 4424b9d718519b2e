"""The batched rules engine (umbrella_env/core/engine.py) as a black box: setup, invariants
of random play in every configuration, the random legal-action sampler, the checked step
and its errors, batch independence, and moving games in and out of a batch.

Scores and ranks are recomputed here from the state dict, independently of the engine,
by the formula of docs/rules.md §5/§8 (and its decision 13).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import numpy as np
import pytest

from umbrella_env.core import actions as A
from umbrella_env.core import batch_io
from umbrella_env.core import engine as E
from umbrella_env.core.components import (
    COLOURS,
    ComponentSet,
    components_from_dict,
    default_components,
    rotate_cells,
)
from umbrella_env.core.config import GameConfig
from umbrella_env.core.errors import (
    ActionError,
    ConfigError,
    GameOverError,
    IllegalActionError,
    StateError,
    UmbrellaError,
)
from umbrella_env.tools.differential import policy_actions, stress_start

CS = default_components()
CONFIGS = [(p, level) for p in (1, 2, 3, 4) for level in (1, 2, 3, 4)]
SUPPLY = {1: 6, 2: 11, 3: 17, 4: 22}
SOLO_ZONE_KEYS = ("top", "personal", "left", "right")


# --------------------------------------------------------------------------- helpers
def snapshot(state: E.BatchState) -> dict[str, np.ndarray]:
    return {name: getattr(state, name).copy() for name in E.ARRAY_FIELDS}


def assert_unchanged(state: E.BatchState, before: dict[str, np.ndarray], games: Any = slice(None)) -> None:
    for name in E.ARRAY_FIELDS:
        np.testing.assert_array_equal(getattr(state, name)[games], before[name][games], err_msg=name)


def assert_same_games(a: E.BatchState, b: E.BatchState) -> None:
    assert a.batch_size == b.batch_size
    for name in E.ARRAY_FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype, name
        np.testing.assert_array_equal(x, y, err_msg=name)


def umbrellas_per_colour(state: E.BatchState) -> np.ndarray:
    """[B, 4] umbrellas of each colour: stages + zones + solo discard."""
    on_stage = (state.stage.reshape(state.batch_size, -1, 1) == np.arange(4)).sum(axis=1)
    return on_stage + state.zones.sum(axis=1) + state.discard


def expected_umbrellas(num_players: int) -> int:
    return 9 if num_players == 1 else 6 * num_players + 1


def expected_scores(d: dict[str, Any]) -> list[int]:
    """docs/rules.md §5 (2-4 players) and §8 (solo), applied to the position of a state dict."""
    plate = CS.plates[d["plate_level"]]
    P = d["num_players"]
    out = []
    for p in range(P):
        occupied = [v is not None for v in d["plates"][p]]
        tokens = sum(occupied)
        score = 2 * tokens + plate.bonus(occupied)
        if P == 1:
            if tokens == CS.solo_tokens:
                score += sum(len(d["zones"][k]) for k in SOLO_ZONE_KEYS)
        else:
            personal = len(d["zones"]["personal"][p])
            score += 2 if personal == 0 else -personal
        out.append(score)
    return out


def expected_ranks(d: dict[str, Any]) -> list[int]:
    """Decision 13: rank = players strictly better (higher score, or equal and fewer personal)."""
    P = d["num_players"]
    if P == 1:
        return [0]
    s = expected_scores(d)
    pers = [len(z) for z in d["zones"]["personal"]]
    return [sum(s[q] > s[p] or (s[q] == s[p] and pers[q] < pers[p]) for q in range(P)) for p in range(P)]


def is_complete(cs: ComponentSet, stage: str, tile: int, face: int, slot: int) -> bool:
    """docs/rules.md §4.2/§6: the face's cells, rotated by the slot, all hold one colour."""
    return len({stage[c] for c in rotate_cells(cs.face_cells(tile, face), slot)}) == 1


def complete_visible_slots(d: dict[str, Any], p: int, cs: ComponentSet = CS) -> list[int]:
    """Slots of seat ``p`` whose visible tile, rotated by the slot, lies on one colour."""
    stage = "".join(d["stages"][p])
    return [
        k
        for k, stack in enumerate(d["slots"][p])
        if stack and is_complete(cs, stage, stack[-1]["tile"], A.FACES.index(stack[-1]["face"]), k)
    ]


def board_tiles(d: dict[str, Any]) -> list[int]:
    tiles = [e["tile"] for board in d["slots"] for stack in board for e in stack]
    if d["passing"] is not None and d["phase"] not in ("swap_stage", "swap_zone"):
        tiles.append(d["passing"]["tile"])  # during a swap it still lies on its slot (decision 2)
    return tiles


def play(state: E.BatchState, rng: np.random.Generator, steps: int, greedy: float = 0.7) -> None:
    for _ in range(steps):
        if state.done.all():
            return
        E.step(state, policy_actions(state, rng, greedy))


def find_game(cfg: GameConfig, seed: int, wanted: Any, batch: int = 32, max_steps: int = 2000) -> E.BatchState:
    """A single-game batch: the first game of a seeded playout for which ``wanted(state, mask, b)``."""
    rng = np.random.default_rng(seed)
    state = E.init(cfg, batch, seed=rng)
    for _ in range(max_steps):
        mask = E.legal_action_mask(state)
        for b in np.flatnonzero(~state.done):
            if wanted(state, mask, b):
                return E.take(state, [b])
        done = np.flatnonzero(state.done)
        if done.size:
            E.reset(state, done, rng)
        E.step(state, policy_actions(state, rng, 0.7))
    raise AssertionError("no wanted state found")  # pragma: no cover


def fallback_game(num_players: int, seed: int) -> E.BatchState:
    """A single game in phase fallback: the current player's four zones emptied (stress_start)."""
    state = E.init(GameConfig(num_players=num_players, plate_level=1), 1, seed=seed)
    rng = np.random.default_rng(seed)
    play(state, rng, 7, greedy=0.0)
    for _ in range(20):  # stress_start needs a position between two turns
        if state.phase[0] == A.PHASE_SLIDE:
            break
        play(state, rng, 1, greedy=0.0)
    assert state.phase[0] == A.PHASE_SLIDE
    d = stress_start(batch_io.to_dict(state, 0))
    return batch_io.from_dict(d)


# --------------------------------------------------------------------------- 1. setup
@pytest.mark.parametrize("num_players", [1, 2, 3, 4])
def test_init_is_reproducible_by_seed(num_players: int) -> None:
    cfg = GameConfig(num_players=num_players, plate_level=2)
    a = E.init(cfg, 16, seed=7)
    b = E.init(cfg, 16, seed=7)
    assert_same_games(a, b)
    assert_same_games(a, E.init(cfg, 16, seed=np.random.default_rng(7)))
    c = E.init(cfg, 16, seed=8)
    assert not np.array_equal(a.stacks, c.stacks)
    assert not np.array_equal(a.stage, c.stage)


@pytest.mark.parametrize("num_players", [1, 2, 3, 4])
def test_setup(num_players: int) -> None:
    """docs/rules.md §3 (2-4 players) and §8 (solo), checked on 200 seeded setups."""
    P, B = num_players, 200
    cfg = GameConfig(num_players=P, plate_level=3)
    state = E.init(cfg, B, seed=11 + P)
    layouts = {"".join(rows) for rows in CS.layouts.values()}
    faces_seen = set()
    for b in range(B):
        d = batch_io.to_dict(state, b)
        # Umbrellas: 4 of each colour per stage; zones one of each colour (solo: 5 per zone).
        text = "".join(row for stage in d["stages"] for row in stage)
        if P == 1:
            zone_strings = [d["zones"][k] for k in (*SOLO_ZONE_KEYS, "discard")]
            assert [len(d["zones"][k]) for k in SOLO_ZONE_KEYS] == [5, 5, 5, 5]
            assert d["zones"]["discard"] == ""
        else:
            zone_strings = [d["zones"]["central"], *d["zones"]["side"], *d["zones"]["personal"]]
            assert zone_strings == ["BGRY"] * (2 * P + 1)
        text += "".join(zone_strings)
        assert [text.count(c) for c in COLOURS] == [expected_umbrellas(P)] * 4
        # Boards: printed layouts, a different one for each player.
        stages = ["".join(s) for s in d["stages"]]
        assert set(stages) <= layouts
        assert len(set(stages)) == P
        # Tiles: 4P distinct (solo 6, black), two stacks of 2 (solo 3) on slots 0 and 1.
        per = 3 if P == 1 else 2
        for p in range(P):
            assert [len(stack) for stack in d["slots"][p]] == [per, per, 0, 0]
            faces_seen |= {e["face"] for stack in d["slots"][p] for e in stack}
            assert complete_visible_slots(d, p) == [], (b, p)
        tiles = board_tiles(d)
        assert len(tiles) == len(set(tiles)) == (6 if P == 1 else 4 * P)
        # Tokens, turn order, phase.
        assert d["supply"] == SUPPLY[P] and d["reserve_used"] == 0
        assert all(v is None for plate in d["plates"] for v in plate)
        assert (d["current_player"], d["phase"], d["turn"]) == (0, "slide", 0)
        assert d["end_triggered_by"] is None and d["passing"] is None
        assert not d["terminated"] and not d["truncated"]
    assert faces_seen == ({"black"} if P == 1 else {"white", "black"})
    np.testing.assert_array_equal(umbrellas_per_colour(state), expected_umbrellas(P))


# Stage layouts on which some figures are complete (the reconstructed layouts A-D admit
# none at setup, so they never exercise the redraw rule): tile 1's white 2x2 square on Q
# and U, tile 15's white row / tile 8's white column on S, tile 15's black corners on T.
BLOCKY = components_from_dict(
    {
        "layouts": {
            "Q": ["BBGG", "BBGG", "RRYY", "RRYY"],
            "S": ["BBBB", "GGGG", "RRRR", "YYYY"],
            "T": ["BGRB", "GYYR", "RYYG", "BGRB"],
            "U": ["YYRR", "YYRR", "GGBB", "GGBB"],
        }
    }
)


@pytest.mark.parametrize("num_players", [1, 2, 3, 4])
def test_setup_redraws_tiles_that_show_a_complete_figure(num_players: int) -> None:
    """docs/rules.md §3.3 / decision 9, on a component set where complete setups are common."""
    P, B = num_players, 300
    per = 3 if P == 1 else 2
    stages = ["".join(rows) for rows in BLOCKY.layouts.values()]
    # Without the redraw, a plain deal would often show a complete figure.
    rng = np.random.default_rng(P)
    naive = 0
    for _ in range(2000):
        stage = stages[rng.integers(len(stages))]
        tiles = rng.permutation(24)[: 2 * per]
        faces = np.ones(2 * per, int) if P == 1 else rng.integers(0, 2, 2 * per)
        tops = ((tiles[per - 1], faces[per - 1]), (tiles[-1], faces[-1]))
        naive += any(is_complete(BLOCKY, stage, int(t), int(f), k) for k, (t, f) in enumerate(tops))
    assert naive >= 20
    state = E.init(GameConfig(num_players=P, plate_level=1, components=BLOCKY), B, seed=90 + P)
    for b in range(B):
        d = batch_io.to_dict(state, b)
        for p in range(P):
            assert complete_visible_slots(d, p, BLOCKY) == [], (b, p, d["stages"][p], d["slots"][p])
            assert [len(stack) for stack in d["slots"][p]] == [per, per, 0, 0]
            if P == 1:
                assert all(e["face"] == "black" for stack in d["slots"][p] for e in stack)
        assert len(board_tiles(d)) == (6 if P == 1 else 4 * P)
    np.testing.assert_array_equal(umbrellas_per_colour(state), expected_umbrellas(P))


def test_setup_redraw_keeps_tiles_distinct() -> None:
    """Decision 9: a redraw takes tiles no other player holds (several players may redraw)."""
    for P in (2, 3, 4):
        state = E.init(GameConfig(num_players=P, plate_level=1, components=BLOCKY), 2000, seed=P)
        tiles = np.sort(np.where(state.stacks >= 0, state.stacks // 2, -1).reshape(2000, -1), axis=1)
        repeated = ((tiles[:, 1:] == tiles[:, :-1]) & (tiles[:, 1:] >= 0)).any(axis=1)
        assert not repeated.any(), f"{P} players: games {np.flatnonzero(repeated)[:5].tolist()} deal a tile twice"


def test_complete_figure_checker_detects_a_complete_figure() -> None:
    """The independent checker used above must be able to fail."""
    d = batch_io.to_dict(E.init(GameConfig(num_players=2), 1, seed=3), 0)
    assert complete_visible_slots(d, 0) == []
    top = d["slots"][0][1][-1]
    cells = rotate_cells(CS.face_cells(top["tile"], A.FACES.index(top["face"])), 1)
    stage = list("".join(d["stages"][0]))
    blues = [i for i, ch in enumerate(stage) if ch == "B"]
    # Move the four blue umbrellas onto the figure's cells (swaps keep the colour counts).
    for cell in cells:
        if stage[cell] != "B":
            src = next(i for i in blues if i not in cells and stage[i] == "B")
            stage[cell], stage[src] = stage[src], stage[cell]
    d["stages"][0] = ["".join(stage[r * 4 : r * 4 + 4]) for r in range(4)]
    assert 1 in complete_visible_slots(d, 0)


# --------------------------------------------------------------------------- 2. invariants of play
def check_dict_views(state: E.BatchState, games: np.ndarray, round_trip: np.ndarray) -> int:
    """Scores, ranks and tiles of ``games`` against the state dict; dict round trips."""
    P = state.config.num_players
    scores, ranks = E.scores(state), E.ranks(state)
    for b in games:
        d = batch_io.to_dict(state, int(b))
        assert scores[b].tolist() == expected_scores(d), d
        assert ranks[b].tolist() == expected_ranks(d), d
        tiles = board_tiles(d)
        assert len(tiles) == len(set(tiles))
        if P > 1:
            assert len(tiles) == 4 * P
        else:
            assert len(tiles) <= 6
    for b in round_trip:
        d = batch_io.to_dict(state, int(b))
        single = batch_io.from_dict(json.loads(json.dumps(d)))
        assert batch_io.to_dict(single, 0) == d
        assert_same_games(single, E.take(state, [b]))
    return len(round_trip)


@pytest.mark.parametrize(("num_players", "plate_level"), CONFIGS)
def test_random_play_invariants(num_players: int, plate_level: int) -> None:
    P, B, max_turns = num_players, 24, (120 if num_players < 4 else 200)
    cfg = GameConfig(num_players=P, plate_level=plate_level, max_turns=max_turns)
    rng = np.random.default_rng(1000 * P + plate_level)
    sampler_rng = np.random.default_rng(7)
    state = E.init(cfg, B, seed=rng)
    if P > 1:  # a few games start in the fallback phase
        for b in range(0, B, 8):
            batch_io.load_dict(state, b, stress_start(batch_io.to_dict(state, b)))
    umbrellas = expected_umbrellas(P)
    phases_seen: set[int] = set()
    round_trips = 0
    for step in range(6 * max_turns):
        done = state.done
        live = np.flatnonzero(~done)
        # Conservation of umbrellas and tokens; no negative counts.
        np.testing.assert_array_equal(umbrellas_per_colour(state), umbrellas)
        placed = (state.plates >= 0).sum(axis=(1, 2))
        np.testing.assert_array_equal(state.supply + placed - state.reserve_used, SUPPLY[P])
        assert (state.zones >= 0).all() and (state.discard >= 0).all() and (state.supply >= 0).all()
        assert (state.reserve_used >= 0).all() and (state.reserve_used <= 3).all()
        # Termination flags.
        assert not (state.terminated & state.truncated).any()
        np.testing.assert_array_equal(state.phase == A.PHASE_GAME_OVER, done)
        assert (state.turn[state.truncated] == max_turns).all()
        assert (state.turn <= max_turns).all()
        # The mask: non-empty for live games and inside the phase's id range; empty when done.
        mask = E.legal_action_mask(state)
        assert mask.shape == (B, A.NUM_ACTIONS) and mask.dtype == np.bool_
        assert not mask[done].any()
        assert mask[live].any(axis=1).all()
        outside = mask & (A.ACTION_PHASE[None, :] != state.phase[:, None])
        assert not outside.any(), [A.PHASES[p] for p in state.phase[outside.any(axis=1)]]
        phases_seen |= set(state.phase[live].tolist())
        # The sampler picks legal actions, and -1 for finished games.
        sample = E.random_legal_actions(state, sampler_rng)
        assert (sample[done] == -1).all()
        assert mask[live, sample[live]].all()
        # Actor: the receiver decides the cover.
        want_actor = np.where(state.phase == A.PHASE_COVER, (state.current + 1) % P, state.current)
        np.testing.assert_array_equal(E.actor(state), want_actor)
        # Scores, ranks and dict round trips (a rotating sixth of the live games).  Finished
        # games are checked below to be left unchanged, and once more at the end.
        round_trips += check_dict_views(state, live, live[(live + step) % 6 == 0])
        if done.all():
            break
        before = snapshot(state)
        acts = policy_actions(state, rng, 0.7)
        assert (acts[done] == -1).all()
        E.step(state, acts)
        # Finished games are left alone; time and plates only move forward.
        assert_unchanged(state, before, done)
        assert (state.turn >= before["turn"]).all()
        was = before["plates"] >= 0
        np.testing.assert_array_equal(state.plates[was], before["plates"][was])
    assert state.done.all(), "every game must end or be truncated"
    assert not (state.terminated & state.truncated).any()
    check_dict_views(state, np.arange(B), np.arange(B))
    assert state.terminated.any()
    assert A.PHASE_VALIDATE in phases_seen and A.PHASE_COVER in phases_seen
    if P > 1:
        assert A.PHASE_FALLBACK in phases_seen
    if plate_level == 4:
        assert A.PHASE_SWAP_STAGE in phases_seen or A.PHASE_SWAP_ZONE in phases_seen
    assert round_trips >= 50


def test_ranks_tie_break_on_personal_umbrellas() -> None:
    """Equal scores: fewer personal umbrellas ranks better; still equal: shared rank."""
    cfg = GameConfig(num_players=3, plate_level=1)
    state = E.init(cfg, 2, seed=5)
    d = batch_io.to_dict(state, 0)
    d.pop("scores")
    # p0: 2 tokens, empty personal zone -> 4 + 2 = 6; p1: 4 tokens, 2 personal -> 8 - 2 = 6;
    # p2: no token, 4 personal -> -4.  No level-1 group is complete.
    d["plates"][0] = ["B", None, None, "Y", None, None, None, None, None, None]
    d["plates"][1] = [None, "G", None, "Y", "B", None, None, "B", None, None]
    d["supply"] = 17 - 6
    d["turn"] = 6  # a turn places at most one token
    d["zones"]["personal"] = ["", "BG", "BGRY"]
    d["zones"]["central"] = "BBGGRRRYYY"
    batch_io.load_dict(state, 0, d)
    assert E.scores(state)[0].tolist() == expected_scores(d) == [6, 6, -4]
    assert E.ranks(state)[0].tolist() == expected_ranks(d) == [0, 1, 2]
    # Shared victory: p1 now has p0's position (2 tokens, empty personal zone).
    d["plates"][1] = list(d["plates"][0])
    d["supply"] = 17 - 4
    d["zones"]["personal"] = ["", "", "BGRY"]
    d["zones"]["central"] = "BBBGGGRRRYYY"
    batch_io.load_dict(state, 1, d)
    assert E.scores(state)[1].tolist() == [6, 6, -4]
    assert E.ranks(state)[1].tolist() == [0, 0, 2]


# --------------------------------------------------------------------------- 3. sampler uniformity
def _assert_uniform(single: E.BatchState, seed: int, per_action: int = 200) -> int:
    """Sample ``per_action`` times per legal action of one state; chi-square style bound."""
    legal = np.flatnonzero(E.legal_action_mask(single)[0])
    k = legal.size
    n = per_action * k
    batch = E.take(single, np.zeros(n, dtype=np.intp))
    sample = E.random_legal_actions(batch, np.random.default_rng(seed))
    assert np.isin(sample, legal).all(), "sampled an illegal action"
    counts = np.bincount(sample, minlength=A.NUM_ACTIONS)[legal]
    assert (counts > 0).all(), "some legal action is never sampled"
    expected = n / k
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    # A uniform sampler gives chi2 ~ (k - 1) +- sqrt(2 (k - 1)); allow 5 standard deviations.
    dof = max(k - 1, 1)
    assert chi2 < dof + 5 * np.sqrt(2 * dof) + 5, (chi2, dof, counts)
    return k


def _wanted(phase: int, min_legal: int, max_legal: int = A.NUM_ACTIONS) -> Any:
    def wanted(state: E.BatchState, mask: np.ndarray, b: int) -> bool:
        return state.phase[b] == phase and min_legal <= mask[b].sum() <= max_legal

    return wanted


@pytest.mark.parametrize(
    ("name", "num_players", "plate_level", "phase", "min_legal", "max_legal"),
    [
        ("slide-partial", 3, 1, A.PHASE_SLIDE, 8, 60),
        ("validate", 4, 1, A.PHASE_VALIDATE, 3, 40),
        ("validate-solo", 1, 3, A.PHASE_VALIDATE, 3, 40),
        ("swap_stage", 4, 4, A.PHASE_SWAP_STAGE, 10, 25),
        ("swap_zone", 2, 4, A.PHASE_SWAP_ZONE, 50, 257),
        ("give_face", 2, 2, A.PHASE_GIVE_FACE, 2, 2),
        ("cover", 4, 1, A.PHASE_COVER, 4, 4),
    ],
)
def test_random_legal_actions_is_uniform(
    name: str, num_players: int, plate_level: int, phase: int, min_legal: int, max_legal: int
) -> None:
    cfg = GameConfig(num_players=num_players, plate_level=plate_level)
    single = find_game(cfg, seed=len(name), wanted=_wanted(phase, min_legal, max_legal))
    assert _assert_uniform(single, seed=3) >= min_legal


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_random_legal_actions_is_uniform_in_fallback(num_players: int) -> None:
    single = fallback_game(num_players, seed=num_players)
    assert single.phase[0] == A.PHASE_FALLBACK
    k = _assert_uniform(single, seed=4, per_action=100)
    assert k >= 16 and k % 16 == 0  # (zone, colour) sources x 16 (side, line)


def test_uniformity_check_can_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bound above rejects a sampler biased towards the first legal action."""
    single = find_game(GameConfig(num_players=2), seed=1, wanted=_wanted(A.PHASE_SLIDE, 8, 60))
    original = E.random_legal_actions

    def biased(state: E.BatchState, rng: np.random.Generator) -> np.ndarray:
        out = original(state, rng)
        first = np.flatnonzero(E.legal_action_mask(state)[0])[0]
        out[rng.random(out.size) < 0.05] = first
        return out

    monkeypatch.setattr(E, "random_legal_actions", biased)
    with pytest.raises(AssertionError):
        _assert_uniform(single, seed=3)


# --------------------------------------------------------------------------- 4. checked step
@pytest.fixture()
def mixed_batch() -> E.BatchState:
    """4 games of 2 players, level 1: games 0, 2, 3 live, game 1 finished."""
    cfg = GameConfig(num_players=2, plate_level=1, max_turns=40)
    state = E.init(cfg, 4, seed=21)
    finished = E.init(cfg, 1, seed=22)
    play(finished, np.random.default_rng(22), 1000)
    assert finished.done[0]
    E.put(state, [1], finished)
    return state


def _legal_actions(state: E.BatchState, seed: int = 0) -> np.ndarray:
    return E.random_legal_actions(state, np.random.default_rng(seed))


@pytest.mark.parametrize(
    ("actions", "message"),
    [
        (np.zeros(5, np.int64), r"shape \(4,\), got int64 array of shape \(5,\)"),
        (np.zeros((4, 1), np.int64), r"shape \(4,\), got int64 array of shape \(4, 1\)"),
        (np.int64(0), r"shape \(4,\), got int64 array of shape \(\)"),
        ([[0, 0], [0, 0]], r"got int64 array of shape \(2, 2\)"),
        (np.zeros(4, np.float64), r"an integer array of shape \(4,\), got float64 array"),
        (np.zeros(4, np.float32), "got float32 array"),
        (np.zeros(4, bool), "got bool array"),
        (["0", "0", "0", "0"], "an integer array of shape"),
    ],
)
def test_bad_action_arrays_raise_action_error(mixed_batch: E.BatchState, actions: Any, message: str) -> None:
    before = snapshot(mixed_batch)
    with pytest.raises(ActionError, match=message) as exc:
        E.step(mixed_batch, actions)
    assert exc.type is ActionError
    assert_unchanged(mixed_batch, before)


@pytest.mark.parametrize("bad", [A.NUM_ACTIONS, A.NUM_ACTIONS + 100, -1, -2, 2**40])
def test_out_of_range_ids_raise_action_error(mixed_batch: E.BatchState, bad: int) -> None:
    acts = _legal_actions(mixed_batch)
    acts[2] = bad
    before = snapshot(mixed_batch)
    with pytest.raises(ActionError, match=rf"game 2: action id {bad} is out of range.*\[0, {A.NUM_ACTIONS}\)") as exc:
        E.step(mixed_batch, acts)
    assert exc.type is ActionError
    assert_unchanged(mixed_batch, before)


def test_illegal_action_names_the_phase(mixed_batch: E.BatchState) -> None:
    acts = _legal_actions(mixed_batch)
    acts[3] = A.validate_action(0, 0)  # a validation while the game waits for a slide
    before = snapshot(mixed_batch)
    message = r"game 3: action 640 \('validate slot0 space0'\) is not legal in phase 'slide'"
    with pytest.raises(IllegalActionError, match=message):
        E.step(mixed_batch, acts)
    assert_unchanged(mixed_batch, before)


def test_illegal_slide_from_an_empty_zone_names_the_fallback_phase() -> None:
    single = fallback_game(3, seed=5)
    before = snapshot(single)
    with pytest.raises(IllegalActionError, match="not legal in phase 'fallback'"):
        E.step(single, np.array([A.slide_action(0, 0, 0)]))
    assert_unchanged(single, before)
    legal = np.flatnonzero(E.legal_action_mask(single)[0])
    illegal_fallback = sorted(set(range(A.FALLBACK_START, A.VALIDATE_START)) - set(legal.tolist()))
    with pytest.raises(IllegalActionError, match="phase 'fallback'"):
        E.step(single, np.array([illegal_fallback[0]]))
    assert_unchanged(single, before)
    E.step(single, np.array([legal[0]]))  # a legal fallback works
    assert single.turn[0] == before["turn"][0] + 1 or single.phase[0] == A.PHASE_VALIDATE


def test_illegal_action_mid_turn() -> None:
    single = find_game(GameConfig(num_players=4, plate_level=1), seed=2, wanted=_wanted(A.PHASE_COVER, 4))
    before = snapshot(single)
    with pytest.raises(IllegalActionError, match="phase 'cover'"):
        E.step(single, np.array([A.slide_action(0, 0, 0)]))
    assert_unchanged(single, before)


def test_action_for_a_finished_game_raises_game_over(mixed_batch: E.BatchState) -> None:
    acts = _legal_actions(mixed_batch)
    acts[1] = 0
    before = snapshot(mixed_batch)
    with pytest.raises(GameOverError, match=r"game\(s\) \[1\].*over"):
        E.step(mixed_batch, acts)
    assert_unchanged(mixed_batch, before)


def test_minus_one_for_finished_games_while_others_step(mixed_batch: E.BatchState) -> None:
    acts = _legal_actions(mixed_batch)
    assert acts[1] == -1 and (acts[[0, 2, 3]] >= 0).all()
    before = snapshot(mixed_batch)
    E.step(mixed_batch, acts)
    assert_unchanged(mixed_batch, before, [1])
    for b in (0, 2, 3):  # each live game moved on
        assert any(not np.array_equal(getattr(mixed_batch, f)[b], before[f][b]) for f in E.ARRAY_FIELDS)


def test_step_accepts_lists_and_any_integer_dtype(mixed_batch: E.BatchState) -> None:
    acts = _legal_actions(mixed_batch)
    other = mixed_batch.clone()
    E.step(mixed_batch, acts.tolist())
    E.step(other, acts.astype(np.int16))
    assert_same_games(mixed_batch, other)


def test_single_game_accepts_a_scalar() -> None:
    a = E.init(GameConfig(num_players=3), 1, seed=4)
    b = a.clone()
    act = int(_legal_actions(a)[0])
    E.step(a, act)
    E.step(b, np.array([act]))
    assert_same_games(a, b)
    assert a.turn[0] == 1 or a.phase[0] == A.PHASE_VALIDATE


def test_action_errors_are_umbrella_errors() -> None:
    assert issubclass(IllegalActionError, ActionError)
    assert issubclass(ActionError, UmbrellaError) and issubclass(ActionError, ValueError)
    assert issubclass(GameOverError, UmbrellaError)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_players": 0}, "num_players must be 1 .solo., 2, 3 or 4, got 0"),
        ({"num_players": 5}, "num_players must be 1 .solo., 2, 3 or 4, got 5"),
        ({"num_players": -1}, "num_players"),
        ({"plate_level": 0}, "plate_level must be 1, 2, 3 or 4, got 0"),
        ({"plate_level": 5}, "plate_level must be 1, 2, 3 or 4, got 5"),
        ({"num_players": "2"}, "num_players must be an int, got '2' of type str"),
        ({"num_players": 2.0}, "num_players must be an int, got 2.0 of type float"),
        ({"num_players": True}, "num_players must be an int, got True of type bool"),
        ({"plate_level": "2"}, "plate_level must be an int"),
        ({"plate_level": 2.0}, "plate_level must be an int"),
        ({"plate_level": True}, "plate_level must be an int"),
        ({"max_turns": 0}, r"max_turns must be an int in \[1, 2147483647\], got 0"),
        ({"max_turns": -5}, r"max_turns must be an int in \[1, 2147483647\]"),
        # the batched engine counts turns in int32: a larger limit would wrap, never truncate
        ({"max_turns": 2**31}, r"max_turns must be an int in \[1, 2147483647\], got 2147483648"),
        ({"max_turns": 10.0}, "max_turns must be an int"),
        ({"max_turns": False}, "max_turns must be an int"),
        ({"num_players": np.bool_(True)}, "num_players must be an int, got .*True.* of type bool"),
        ({"components": {}}, "components must be a ComponentSet"),
    ],
)
def test_bad_config_raises_config_error(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        GameConfig(**kwargs)


def test_config_accepts_numpy_integers_and_stores_ints() -> None:
    cfg = GameConfig(num_players=np.int64(3), plate_level=np.int32(2), max_turns=np.uint16(50))
    assert cfg == GameConfig(num_players=3, plate_level=2, max_turns=50)
    assert all(type(v) is int for v in (cfg.num_players, cfg.plate_level, cfg.max_turns))


@pytest.mark.parametrize("batch_size", [0, -1, 2.0, True, "4", None, 1_000_001, 10**12])  # 10**12: a MemoryError
def test_init_rejects_bad_batch_size(batch_size: Any) -> None:
    with pytest.raises(ConfigError, match="batch_size must be an int from 1 to 1,000,000, got"):
        E.init(GameConfig(), batch_size)


def test_the_batched_envs_take_the_cores_batch_limit() -> None:
    """A huge batch was NumPy's MemoryError traceback from the vector envs and the trainers."""
    import gymnasium as gym

    from umbrella_env.envs.vector_game import VectorGame

    with pytest.raises(ConfigError, match="num_envs must be an int from 1 to 1,000,000, got 1000000000000"):
        gym.make_vec("umbrella_env/Solo-v0", num_envs=10**12, vectorization_mode="vector_entry_point")
    with pytest.raises(ConfigError, match="num_games must be an int from 1 to 1,000,000, got 0"):
        VectorGame(0, 2)


@pytest.mark.parametrize("seed", ["1", 1.5, True, [1, 2], -1])  # -1: NumPy's own error before
def test_init_rejects_bad_seed(seed: Any) -> None:
    with pytest.raises(ConfigError, match="seed must be None or a non-negative int or a numpy Generator, got"):
        E.init(GameConfig(), 2, seed=seed)


def test_init_rejects_a_config_that_is_not_a_game_config() -> None:
    with pytest.raises(ConfigError, match="config must be a GameConfig"):
        E.init({"num_players": 2}, 2, seed=0)  # type: ignore[arg-type]


def test_init_accepts_numpy_integers_and_no_seed() -> None:
    state = E.init(GameConfig(num_players=2), np.int64(3), seed=np.int32(5))
    assert state.batch_size == 3
    assert_same_games(state, E.init(GameConfig(num_players=2), 3, seed=5))
    assert E.init(GameConfig(num_players=2), 2).batch_size == 2


# --------------------------------------------------------------------------- 5. batch independence
@pytest.mark.parametrize(("num_players", "plate_level"), [(1, 4), (2, 4), (3, 1), (4, 4)])
def test_batch_step_equals_stepping_each_game_alone(num_players: int, plate_level: int) -> None:
    cfg = GameConfig(num_players=num_players, plate_level=plate_level, max_turns=60)
    rng = np.random.default_rng(50 + num_players)
    B = 12
    state = E.init(cfg, B, seed=rng)
    if num_players > 1:
        for b in (0, 5):
            batch_io.load_dict(state, b, stress_start(batch_io.to_dict(state, b)))
    phase_mixes = 0
    for _ in range(120):
        if state.done.all():
            break
        acts = policy_actions(state, rng, 0.7)
        singles = [E.take(state, [b]) for b in range(B)]
        for b, single in enumerate(singles):
            E.step(single, acts[b : b + 1])
        phase_mixes = max(phase_mixes, np.unique(state.phase).size)
        E.step(state, acts)
        for b, single in enumerate(singles):
            assert_same_games(E.take(state, [b]), single)
    assert phase_mixes >= 3


def test_reset_only_touches_the_given_games() -> None:
    cfg = GameConfig(num_players=3, plate_level=4)
    state = E.init(cfg, 8, seed=31)
    play(state, np.random.default_rng(31), 60)
    before = snapshot(state)
    idx = np.array([1, 6])
    E.reset(state, idx, np.random.default_rng(32))
    others = np.setdiff1d(np.arange(8), idx)
    assert_unchanged(state, before, others)
    np.testing.assert_array_equal(state.turn[idx], 0)
    np.testing.assert_array_equal(state.phase[idx], A.PHASE_SLIDE)
    np.testing.assert_array_equal(state.supply[idx], SUPPLY[3])
    assert (state.plates[idx] == -1).all() and not state.done[idx].any()
    assert (before["turn"][idx] > 0).all()
    # A reset slot is a proper fresh game.
    for b in idx:
        d = batch_io.to_dict(state, int(b))
        assert all(complete_visible_slots(d, p) == [] for p in range(3))
    untouched = snapshot(state)  # taken before: an empty reset changes nothing
    E.reset(state, np.array([], dtype=np.intp), np.random.default_rng(0))
    assert_unchanged(state, untouched)


def test_clone_is_independent() -> None:
    state = E.init(GameConfig(num_players=2, plate_level=4), 4, seed=41)
    play(state, np.random.default_rng(41), 10)
    clone = state.clone()
    assert clone.config == state.config
    for name in E.ARRAY_FIELDS:
        assert not np.shares_memory(getattr(clone, name), getattr(state, name)), name
    assert_same_games(clone, state)
    before = snapshot(state)
    play(clone, np.random.default_rng(42), 5)
    assert_unchanged(state, before)
    assert not np.array_equal(clone.turn, state.turn) or not np.array_equal(clone.stage, state.stage)
    clone_before = snapshot(clone)
    state.stage[:] = 0
    state.supply[:] = 0
    assert_unchanged(clone, clone_before)


def test_take_put_move_every_array() -> None:
    """take/put copy every state array: checked on a batch whose arrays all differ by game."""
    state = E.allocate(GameConfig(num_players=3, plate_level=4), 5)
    rng = np.random.default_rng(0)
    for name in E.ARRAY_FIELDS:
        arr = getattr(state, name)
        arr[...] = rng.integers(0, 2, arr.shape) if arr.dtype == np.bool_ else rng.integers(-1, 100, arr.shape)
        assert any(not np.array_equal(arr[0], arr[b]) for b in range(1, 5)), name
    before = snapshot(state)
    perm = np.array([2, 4, 0, 1, 3])
    moved = E.allocate(state.config, 5)
    E.put(moved, np.arange(5), E.take(state, perm))
    for name in E.ARRAY_FIELDS:
        np.testing.assert_array_equal(getattr(moved, name), before[name][perm], err_msg=name)
    E.put(moved, perm, E.take(moved, np.arange(5)))
    assert_same_games(moved, state)


def test_take_put_round_trip() -> None:
    cfg = GameConfig(num_players=4, plate_level=2)
    state = E.init(cfg, 6, seed=51)
    play(state, np.random.default_rng(51), 40)
    before = snapshot(state)
    # take copies, in the given order, repeats allowed.
    sub = E.take(state, [4, 0, 4])
    assert sub.batch_size == 3 and sub.config == cfg
    for j, b in enumerate([4, 0, 4]):
        for name in E.ARRAY_FIELDS:
            np.testing.assert_array_equal(getattr(sub, name)[j], before[name][b], err_msg=name)
    sub.stage[:] = 0
    assert_unchanged(state, before)
    # put back where it came from: nothing changes.
    E.put(state, [2, 5], E.take(state, [2, 5]))
    assert_unchanged(state, before)
    # a permutation through take/put, then its inverse.
    perm = np.array([3, 1, 5, 0, 2, 4])
    E.put(state, np.arange(6), E.take(state, perm))
    for name in E.ARRAY_FIELDS:
        np.testing.assert_array_equal(getattr(state, name), before[name][perm], err_msg=name)
    E.put(state, perm, E.take(state, np.arange(6)))
    assert_unchanged(state, before)
    # games moved between batches play on identically.
    other = E.init(cfg, 3, seed=52)
    E.put(other, [1], E.take(state, [3]))
    acts_state = _legal_actions(state, 9)
    acts_other = np.full(3, -1)
    acts_other[[0, 2]] = _legal_actions(other, 9)[[0, 2]]
    acts_other[1] = acts_state[3]
    E.step(state, acts_state)
    E.step(other, acts_other)
    assert_same_games(E.take(other, [1]), E.take(state, [3]))


# --------------------------------------------------------------------------- 6. state I/O
@pytest.mark.parametrize("num_players", [1, 2, 3, 4])
def test_load_dict_into_one_slot_leaves_the_others(num_players: int) -> None:
    cfg = GameConfig(num_players=num_players, plate_level=4)
    source = E.init(cfg, 4, seed=61)
    play(source, np.random.default_rng(61), 25)
    d = batch_io.to_dict(source, 2)
    target = E.init(cfg, 5, seed=62)
    before = snapshot(target)
    batch_io.load_dict(target, 3, d)
    assert_unchanged(target, before, [0, 1, 2, 4])
    assert batch_io.to_dict(target, 3) == d
    assert_same_games(E.take(target, [3]), E.take(source, [2]))


def test_load_dict_rejects_another_configuration() -> None:
    state = E.init(GameConfig(num_players=2, plate_level=1), 3, seed=71)
    before = snapshot(state)
    three = batch_io.to_dict(E.init(GameConfig(num_players=3, plate_level=1), 1, seed=1), 0)
    level2 = batch_io.to_dict(E.init(GameConfig(num_players=2, plate_level=2), 1, seed=1), 0)
    turns = batch_io.to_dict(E.init(GameConfig(num_players=2, plate_level=1, max_turns=50), 1, seed=1), 0)
    solo = batch_io.to_dict(E.init(GameConfig(num_players=1, plate_level=1), 1, seed=1), 0)
    for d, field in ((three, "num_players"), (level2, "plate_level"), (turns, "max_turns"), (solo, "num_players")):
        with pytest.raises(StateError, match=rf"^{field}: the batch is configured for"):
            batch_io.load_dict(state, 1, d)
        assert_unchanged(state, before)


def _corrupt(d: dict[str, Any], how: str) -> dict[str, Any]:
    d = copy.deepcopy(d)
    if how == "extra umbrella":
        d["zones"]["central"] += "B"
    elif how == "missing umbrella":
        d["zones"]["side"][0] = d["zones"]["side"][0][1:]
    elif how == "stage colour swapped for another":
        d["stages"][1][0] = "BBBB"
    elif how == "duplicate tile":
        d["slots"][1][0][0]["tile"] = d["slots"][0][0][0]["tile"]
    elif how == "missing tile":
        d["slots"][0][0].pop(0)
    elif how == "token out of nowhere":
        d["plates"][0][0] = "B"
    elif how == "unknown key":
        d["colour"] = "B"
    elif how == "bad phase":
        d["phase"] = "draw"
    elif how == "wrong scores":
        d["scores"][0] += 1
    return d


@pytest.mark.parametrize(
    ("how", "message"),
    [
        ("extra umbrella", "umbrellas of colour B"),
        ("missing umbrella", "umbrellas of colour"),
        ("stage colour swapped for another", "umbrellas of colour"),
        ("duplicate tile", r"slots\[1\]\[0\]\[0\]\.tile: tile \d+ is already at slots\[0\]\[0\]\[0\]"),
        ("missing tile", "expected 4 per player"),
        ("token out of nowhere", "^supply"),
        ("unknown key", "unknown key"),
        ("bad phase", "^phase"),
        ("wrong scores", "^scores"),
    ],
)
def test_load_dict_rejects_a_corrupt_dict(how: str, message: str) -> None:
    state = E.init(GameConfig(num_players=3, plate_level=1), 2, seed=81)
    good = batch_io.to_dict(state, 0)
    batch_io.load_dict(state, 1, good)  # the uncorrupted dict is accepted
    before = snapshot(state)
    with pytest.raises(StateError, match=message):
        batch_io.load_dict(state, 1, _corrupt(good, how))
    assert_unchanged(state, before)
    with pytest.raises(StateError, match=message):
        batch_io.from_dict(_corrupt(good, how))


def test_game_index_is_checked() -> None:
    state = E.init(GameConfig(num_players=2), 2, seed=0)
    for bad in (2, -1, True, 1.0):
        with pytest.raises(IndexError):
            batch_io.to_dict(state, bad)  # type: ignore[arg-type]
