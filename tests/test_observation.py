"""The egocentric observation (umbrella_env/core/observation.py): size and layout, the
public-information promise (tiles under a stack's top never leak), seat symmetry, and the
global segments against values read independently from the state dict."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

from umbrella_env.core import actions as A
from umbrella_env.core import batch_io
from umbrella_env.core import engine as E
from umbrella_env.core.components import COLOURS, default_components
from umbrella_env.core.config import GameConfig
from umbrella_env.core.observation import (
    GLOBAL_SEGMENTS,
    MAX_SEATS,
    OBS_SIZE,
    SEAT_SEGMENTS,
    SEAT_SIZE,
    observation_layout,
    observe,
)
from umbrella_env.tools.differential import policy_actions, stress_start

CS = default_components()
CONFIGS = [(p, level) for p in (1, 2, 3, 4) for level in (1, 2, 3, 4)]
SEGMENTS = {name: slice(start, stop) for start, stop, name, _ in observation_layout()}


# --------------------------------------------------------------------------- helpers
def sample_dicts(num_players: int, plate_level: int, seed: int, batch: int = 8, steps: int = 150) -> list[dict]:
    """State dicts of a seeded playout, taken every 15 steps (all phases, deep stacks)."""
    cfg = GameConfig(num_players=num_players, plate_level=plate_level, max_turns=150)
    rng = np.random.default_rng(seed)
    state = E.init(cfg, batch, seed=rng)
    out = []
    for step in range(steps):
        if step % 15 == 0:
            out.extend(batch_io.to_dict(state, b) for b in range(batch))
        done = np.flatnonzero(state.done)
        if done.size:
            E.reset(state, done, rng)
        E.step(state, policy_actions(state, rng, 0.7))
    # A few mid-turn positions, where the tile in transit is shown.
    mid = np.flatnonzero(state.phase >= A.PHASE_VALIDATE)
    out.extend(batch_io.to_dict(state, int(b)) for b in mid)
    if num_players > 1:  # and a fallback position
        between = [d for d in out if d["phase"] == "slide"]
        fallback = stress_start(between[-1])
        fallback["scores"] = batch_io.to_dict(batch_io.from_dict(fallback), 0)["scores"]
        out.append(fallback)
    return out


def observe_all_seats(d: dict[str, Any]) -> np.ndarray:
    """[P, OBS_SIZE]: the observation of the state dict ``d`` from each seat."""
    P = d["num_players"]
    state = E.take(batch_io.from_dict(d), np.zeros(P, dtype=np.intp))
    return observe(state, seats=np.arange(P))


def board_tiles(d: dict[str, Any]) -> set[int]:
    tiles = {e["tile"] for board in d["slots"] for stack in board for e in stack}
    if d["passing"] is not None:
        tiles.add(d["passing"]["tile"])
    return tiles


def relabel(d: dict[str, Any], k: int) -> dict[str, Any]:
    """The same position with seat ``j`` renamed ``j - k``: new seat j is old seat j + k.

    Side zone i lies between seats i and i + 1, so side zones rotate with the seats.
    """
    P = d["num_players"]

    def rot(seq: list) -> list:
        return [copy.deepcopy(seq[(j + k) % P]) for j in range(P)]

    e = copy.deepcopy(d)
    e.pop("scores", None)
    for key in ("stages", "slots", "plates"):
        e[key] = rot(d[key])
    e["zones"]["side"] = rot(d["zones"]["side"])
    e["zones"]["personal"] = rot(d["zones"]["personal"])
    e["current_player"] = (d["current_player"] - k) % P
    if d["end_triggered_by"] is not None:
        e["end_triggered_by"] = (d["end_triggered_by"] - k) % P
    return e


def zone_counts(text: str) -> list[int]:
    return [text.count(c) for c in COLOURS]


def own_zone_strings(d: dict[str, Any], o: int) -> list[str]:
    """docs/rules.md §2 / §8: the observer's top, bottom, left, right zones."""
    z = d["zones"]
    if d["num_players"] == 1:
        return [z["top"], z["personal"], z["left"], z["right"]]
    P = d["num_players"]
    return [z["central"], z["personal"][o], z["side"][o], z["side"][(o - 1) % P]]


# --------------------------------------------------------------------------- size and layout
def test_layout_segments_are_contiguous_and_cover_the_observation() -> None:
    layout = observation_layout()
    assert layout[0][0] == 0
    for (_, stop, _, _), (start, _, _, _) in zip(layout, layout[1:]):
        assert start == stop
    assert layout[-1][1] == OBS_SIZE
    assert all(stop > start for start, stop, _, _ in layout)
    names = [name for _, _, name, _ in layout]
    assert len(names) == len(set(names))
    assert len(layout) == MAX_SEATS * len(SEAT_SEGMENTS) + len(GLOBAL_SEGMENTS)
    assert OBS_SIZE == MAX_SEATS * SEAT_SIZE + sum(size for _, size, _ in GLOBAL_SEGMENTS)
    assert SEGMENTS["phase"].stop - SEGMENTS["phase"].start == len(A.PHASES)
    assert all(meaning for _, _, _, meaning in layout)


@pytest.mark.parametrize(("num_players", "plate_level"), CONFIGS)
def test_shape_dtype_and_absent_seats(num_players: int, plate_level: int) -> None:
    cfg = GameConfig(num_players=num_players, plate_level=plate_level)
    rng = np.random.default_rng(num_players * 10 + plate_level)
    state = E.init(cfg, 5, seed=rng)
    for _ in range(20):
        E.step(state, policy_actions(state, rng, 0.7))
        obs = observe(state)
        assert obs.shape == (5, OBS_SIZE) and obs.dtype == np.float32
        assert np.isfinite(obs).all()
        # Relative seats that do not exist are all zero.
        assert not obs[:, num_players * SEAT_SIZE : MAX_SEATS * SEAT_SIZE].any()
        np.testing.assert_array_equal(obs[:, SEGMENTS["num_players"]], np.eye(4)[[num_players - 1] * 5])
        np.testing.assert_array_equal(obs[:, SEGMENTS["plate_level"]], np.eye(4)[[plate_level - 1] * 5])
        # The default observer is the actor.
        np.testing.assert_array_equal(obs, observe(state, seats=E.actor(state)))
        for seat in range(num_players):
            assert observe(state, seats=seat).shape == (5, OBS_SIZE)


def test_observer_seats_are_checked() -> None:
    state = E.init(GameConfig(num_players=3), 2, seed=1)
    for bad in (3, -1, [0, 3]):
        with pytest.raises(ValueError, match=r"observer seats must be in \[0, 3\)"):
            observe(state, seats=bad)


def test_observation_is_deterministic_and_does_not_touch_the_state() -> None:
    cfg = GameConfig(num_players=4, plate_level=4)
    rng = np.random.default_rng(5)
    state = E.init(cfg, 6, seed=rng)
    for _ in range(40):
        E.step(state, policy_actions(state, rng, 0.7))
    before = {name: getattr(state, name).copy() for name in E.ARRAY_FIELDS}
    seats = np.array([0, 1, 2, 3, 0, 1])
    first = observe(state, seats=seats)
    np.testing.assert_array_equal(first, observe(state, seats=seats))
    np.testing.assert_array_equal(first, observe(state.clone(), seats=seats))
    for name in E.ARRAY_FIELDS:
        np.testing.assert_array_equal(getattr(state, name), before[name], err_msg=name)
    # Each game's row depends on that game only.
    for b in range(6):
        np.testing.assert_array_equal(first[b], observe(E.take(state, [b]), seats=seats[b : b + 1])[0])
    # A different seat sees a different picture.
    assert not np.array_equal(first, observe(state, seats=(seats + 1) % 4))


# --------------------------------------------------------------------------- hidden information
@pytest.mark.parametrize(("num_players", "plate_level"), [(p, lv) for p in (1, 2, 3, 4) for lv in (1, 4)])
def test_tiles_under_the_top_are_hidden(num_players: int, plate_level: int) -> None:
    rng = np.random.default_rng(num_players + 7 * plate_level)
    hidden_checked = visible_checked = deep_checked = 0
    for d in sample_dicts(num_players, plate_level, seed=num_players * 100 + plate_level):
        d.pop("scores")
        base = observe_all_seats(d)
        unused = sorted(set(range(len(CS.tiles))) - board_tiles(d))
        assert unused, "every configuration leaves tiles in the box"
        stacks = [(p, k, stack) for p, board in enumerate(d["slots"]) for k, stack in enumerate(board) if stack]
        for p, k, stack in stacks:
            # Each tile under the top: replace it by a tile from the box, with either face.
            for j in range(len(stack) - 1):
                hidden = copy.deepcopy(d)
                hidden["slots"][p][k][j] = {"tile": int(rng.choice(unused)), "face": A.FACES[int(rng.integers(2))]}
                np.testing.assert_array_equal(observe_all_seats(hidden), base, err_msg=f"slot {p}/{k} depth {j}")
                hidden_checked += 1
                deep_checked += len(stack) > 2
            # The hidden tiles in another order: still the same picture.
            if len(stack) > 2:
                shuffled = copy.deepcopy(d)
                shuffled["slots"][p][k][:-1] = shuffled["slots"][p][k][:-1][::-1]
                np.testing.assert_array_equal(observe_all_seats(shuffled), base)
        # The visible tile: another tile, or the same tile turned over, changes every seat's view.
        # (Not in phase validate, where changing the visible figure would leave nothing to validate.)
        # Nor the tile in transit (the swap phases), still on top of the slot it was validated from.
        if d["phase"] == "validate":
            continue
        transit = d["passing"]["tile"] if d["passing"] else None
        shown = [(p, k, stack) for p, k, stack in stacks if stack[-1]["tile"] != transit]
        p, k, stack = shown[int(rng.integers(len(shown)))]
        other = copy.deepcopy(d)
        other["slots"][p][k][-1] = {"tile": int(unused[0]), "face": stack[-1]["face"]}
        flipped = copy.deepcopy(d)
        top = flipped["slots"][p][k][-1]
        top["face"] = "white" if top["face"] == "black" else "black"
        for changed in (other, flipped):
            obs = observe_all_seats(changed)
            assert all(not np.array_equal(obs[s], base[s]) for s in range(num_players))
            visible_checked += 1
    assert hidden_checked >= 50 and visible_checked >= 20
    assert deep_checked > 0 or num_players == 1


def _swap_decisions(num_players: int, seed: int) -> list[tuple[dict, dict]]:
    """``(validate state, swap state)`` pairs of seeded level-4 playouts that start close to
    the end (``late_start``), where a validation fired a swap power."""
    from umbrella_env.tools.differential import late_start

    rng = np.random.default_rng(seed)
    state = E.init(GameConfig(num_players=num_players, plate_level=4, max_turns=80), 32, seed=rng)
    for b in range(32):
        batch_io.load_dict(state, b, late_start(batch_io.to_dict(state, b), rng))
    pairs = []
    for _ in range(120):
        before = state.clone()
        done = np.flatnonzero(state.done)
        if done.size == state.batch_size:
            break
        acts = policy_actions(state, rng, 0.9)
        acts[done] = -1
        live = np.flatnonzero(~state.done)
        sub = E.take(state, live)
        E.step(sub, acts[live])
        E.put(state, live, sub)
        swap = (before.phase == A.PHASE_VALIDATE) & np.isin(state.phase, (A.PHASE_SWAP_STAGE, A.PHASE_SWAP_ZONE))
        pairs += [(batch_io.to_dict(before, int(b)), batch_io.to_dict(state, int(b))) for b in np.flatnonzero(swap)]
    return pairs


@pytest.mark.parametrize("num_players", [1, 2, 3, 4])
def test_no_observation_shows_a_tile_the_rules_still_hide(num_players: int) -> None:
    """docs/rules.md §4.2 (token -> power -> pass, decision 2) and §6: during a swap
    decision the validated tile is still on its slot, so the tiles that were hidden when
    the figure was validated are still hidden.  Changing them in the true state (other
    tiles, other faces) changes no seat's observation, in the batched and the single-game
    engine."""
    from umbrella_env.core.serialize import validate_state_dict, validated_slot
    from umbrella_env.core.single import SingleGame

    rng = np.random.default_rng(40 + num_players)
    pairs = _swap_decisions(num_players, seed=num_players)
    assert len(pairs) >= 3, "the playouts must reach swap decisions"
    changed = covered = 0
    for before, after in pairs:
        k = validated_slot(after)
        assert k is not None, "the validated tile stays on its slot during the swap decision"
        covered += len(after["slots"][after["current_player"]][k]) >= 2  # a tile lies below it
        # The tiles under the tops when the figure was validated: hidden by the rules (§6).
        hidden = [
            (p, k, j)
            for p, board in enumerate(before["slots"])
            for k, stack in enumerate(board)
            for j in range(len(stack) - 1)
        ]
        base = observe_all_seats(after)
        single = [SingleGame.from_dict(after).observe(seat) for seat in range(num_players)]
        np.testing.assert_array_equal(np.array(single), base)
        unused = [t for t in range(len(CS.tiles)) if t not in board_tiles(after)]
        pool = unused + [after["slots"][p][k][j]["tile"] for p, k, j in hidden]
        drawn = rng.permutation(pool)[: len(hidden)]
        other = copy.deepcopy(after)
        other.pop("scores")
        for (p, k, j), t in zip(hidden, drawn):
            other["slots"][p][k][j] = {"tile": int(t), "face": A.FACES[int(rng.integers(2))]}
        changed += other["slots"] != after["slots"]
        validate_state_dict(other)
        np.testing.assert_array_equal(observe_all_seats(other), base)
        for seat in range(num_players):
            np.testing.assert_array_equal(SingleGame.from_dict(other).observe(seat), base[seat])
    assert changed >= 3 and covered >= 1


# --------------------------------------------------------------------------- seat symmetry
@pytest.mark.parametrize(("num_players", "plate_level"), [(p, lv) for p in (2, 3, 4) for lv in (1, 4)])
def test_observation_is_egocentric(num_players: int, plate_level: int) -> None:
    P = num_players
    differs = 0
    states = sample_dicts(P, plate_level, seed=300 + 10 * P + plate_level)
    for d in states:
        obs = observe_all_seats(d)
        differs += not np.array_equal(obs[0], obs[1])
        default = observe(batch_io.from_dict(d))[0]
        for k in range(1, P):
            e = relabel(d, k)
            rel = observe_all_seats(e)
            for j in range(P):
                # Seat j of the relabelled game is seat j + k of the original one.
                np.testing.assert_array_equal(rel[j], obs[(j + k) % P], err_msg=f"k={k} j={j}")
            # The actor's view does not depend on the seat numbers either.
            np.testing.assert_array_equal(observe(batch_io.from_dict(e))[0], default)
    assert differs >= len(states) - 2


def test_relabel_is_a_true_relabelling() -> None:
    """Relabelling by k then by P - k gives back the original dict; and relabelling moves
    each seat's own zones with it (the helper must be right for the test above to mean much)."""
    d = sample_dicts(3, 4, seed=9, batch=2, steps=31)[-1]
    d.pop("scores")
    assert relabel(relabel(d, 1), 2) == d
    e = relabel(d, 1)
    for j in range(3):
        assert own_zone_strings(e, j) == own_zone_strings(d, (j + 1) % 3)


# --------------------------------------------------------------------------- segments
@pytest.mark.parametrize(("num_players", "plate_level"), CONFIGS)
def test_segments_match_the_state_dict(num_players: int, plate_level: int) -> None:
    P = num_players
    phases_seen = set()
    for d in sample_dicts(P, plate_level, seed=500 + 10 * P + plate_level, batch=6, steps=120):
        obs = observe_all_seats(d)
        phase = A.PHASES.index(d["phase"])
        phases_seen.add(phase)
        actor = (d["current_player"] + 1) % P if d["phase"] == "cover" else d["current_player"]
        scores = d["scores"]
        for o in range(P):
            row = obs[o]
            np.testing.assert_array_equal(row[SEGMENTS["phase"]], np.eye(len(A.PHASES))[phase])
            want_own = [n for text in own_zone_strings(d, o) for n in zone_counts(text)]
            np.testing.assert_array_equal(row[SEGMENTS["own_zones"]], want_own)
            np.testing.assert_array_equal(row[SEGMENTS["actor"]], np.eye(4)[(actor - o) % P])
            np.testing.assert_array_equal(row[SEGMENTS["current"]], np.eye(4)[(d["current_player"] - o) % P])
            assert row[SEGMENTS["supply"]][0] == d["supply"]
            assert row[SEGMENTS["passing_present"]][0] == (d["passing"] is not None)
            if P == 1:
                assert not row[SEGMENTS["all_zones"]].any()
                np.testing.assert_array_equal(row[SEGMENTS["discard"]], zone_counts(d["zones"]["discard"]))
            else:
                z = d["zones"]
                zones = [z["central"]] + [z["side"][(o + k) % P] if k < P else "" for k in range(4)]
                zones += [z["personal"][(o + k) % P] if k < P else "" for k in range(4)]
                np.testing.assert_array_equal(
                    row[SEGMENTS["all_zones"]], [n for text in zones for n in zone_counts(text)]
                )
                assert not row[SEGMENTS["discard"]].any()
            for j in range(P):
                seat = (o + j) % P
                stage = "".join(d["stages"][seat])
                want_stage = np.eye(4)[[COLOURS.index(ch) for ch in stage]].reshape(64)
                np.testing.assert_array_equal(row[SEGMENTS[f"seat{j}.stage"]], want_stage)
                heights = [len(stack) for stack in d["slots"][seat]]
                np.testing.assert_array_equal(row[SEGMENTS[f"seat{j}.slot_height"]], heights)
                np.testing.assert_array_equal(row[SEGMENTS[f"seat{j}.slot_present"]], [h > 0 for h in heights])
                tokens = [v is not None for v in d["plates"][seat]]
                np.testing.assert_array_equal(row[SEGMENTS[f"seat{j}.plate_token"]], tokens)
                assert row[SEGMENTS[f"seat{j}.tokens"]][0] == sum(tokens)
                assert row[SEGMENTS[f"seat{j}.score"]][0] == scores[seat]
    assert A.PHASE_SLIDE in phases_seen and len(phases_seen) >= (2 if P == 1 else 3)


def test_phase_segment_is_a_one_hot_of_every_phase() -> None:
    """Every phase, including game_over, sets exactly its own bit."""
    seen = set()
    for P, level in ((2, 4), (4, 4), (1, 4)):
        cfg = GameConfig(num_players=P, plate_level=level, max_turns=80)
        rng = np.random.default_rng(P)
        state = E.init(cfg, 16, seed=rng)
        if P > 1:
            batch_io.load_dict(state, 0, stress_start(batch_io.to_dict(state, 0)))
        for _ in range(400):
            obs = observe(state)
            one_hot = obs[:, SEGMENTS["phase"]]
            np.testing.assert_array_equal(one_hot.sum(axis=1), 1)
            np.testing.assert_array_equal(one_hot.argmax(axis=1), state.phase)
            seen |= set(state.phase.tolist())
            if state.done.all():
                break
            E.step(state, policy_actions(state, rng, 0.7))
    assert seen == set(range(len(A.PHASES)))


@pytest.mark.parametrize("num_players", [1, 2, 3, 4])
def test_observations_stay_within_the_declared_bounds(num_players: int) -> None:
    from umbrella_env.core.observation import observation_bounds
    from umbrella_env.tools.differential import policy_actions

    low, high = observation_bounds()
    state = E.init(GameConfig(num_players=num_players, plate_level=4, max_turns=150), 32, seed=9)
    rng = np.random.default_rng(9)
    while not state.done.all():
        for seat in range(num_players):
            obs = observe(state, seats=seat)
            assert (obs >= low).all() and (obs <= high).all()
        E.step(state, policy_actions(state, rng, greedy=0.7))
