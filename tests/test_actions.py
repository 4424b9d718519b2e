"""The flat action codec (docs/rules.md §9, umbrella_env/core/actions.py): id ranges, encode/decode,
readable strings and the errors on bad input."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from umbrella_env.core import actions as A
from umbrella_env.core import engine as E
from umbrella_env.core.actions import (
    ACTION_PHASE,
    ACTION_STRINGS,
    ADJACENT_PAIRS,
    NUM_ACTIONS,
    PHASE_RANGES,
    PHASES,
    action_to_string,
    check_action_id,
    decode,
    phase_of_action,
    string_to_action,
)
from umbrella_env.core.config import GameConfig
from umbrella_env.core.errors import ActionError
from umbrella_env.core.single import SingleGame

ALL_IDS = range(NUM_ACTIONS)


def encode(phase: int, fields: tuple[int, ...]) -> int:
    """The encoder of ``phase`` applied to decoded fields."""
    if phase == A.PHASE_SLIDE:
        return A.slide_action(*fields)
    if phase == A.PHASE_FALLBACK:
        return A.fallback_action(*fields)
    if phase == A.PHASE_VALIDATE:
        return A.validate_action(*fields)
    if phase == A.PHASE_SWAP_STAGE:
        return A.swap_stage_action(fields[0] if fields else None)
    if phase == A.PHASE_SWAP_ZONE:
        return A.swap_zone_action(*fields) if fields else A.swap_zone_action(None)
    if phase == A.PHASE_GIVE_FACE:
        return A.give_face_action(*fields)
    assert phase == A.PHASE_COVER
    return A.cover_action(*fields)


# --------------------------------------------------------------------------- id layout
def test_ranges_are_contiguous_and_cover_every_id() -> None:
    expected_start = 0
    for phase, start, count in PHASE_RANGES:
        assert start == expected_start, PHASES[phase]
        assert count > 0
        expected_start += count
    assert expected_start == NUM_ACTIONS == 968
    assert [PHASES[p] for p, _, _ in PHASE_RANGES] == list(PHASES[:-1])  # every phase but game_over


def test_action_phase_table_matches_ranges() -> None:
    assert ACTION_PHASE.shape == (NUM_ACTIONS,)
    for phase, start, count in PHASE_RANGES:
        assert (ACTION_PHASE[start : start + count] == phase).all()


def test_range_sizes_follow_the_documented_layout() -> None:
    sizes = {PHASES[p]: n for p, _, n in PHASE_RANGES}
    assert sizes == {
        "slide": 4 * 4 * 4,
        "fallback": A.MAX_ZONES * 4 * 4 * 4,
        "validate": 4 * 10,
        "swap_stage": len(ADJACENT_PAIRS) + 1,
        "swap_zone": 16 * 4 * 4 + 1,
        "give_face": 2,
        "cover": 4,
    }


def test_module_docstring_table_matches_the_constants() -> None:
    # "Docs that drift from code": the id table in the module docstring must hold.
    rows = re.findall(r"^\s{4}(\w+)\s+(\d+)\s+(\d+)\s", A.__doc__ or "", flags=re.M)
    assert [(name, int(first), int(count)) for name, first, count in rows] == [
        (PHASES[p], start, count) for p, start, count in PHASE_RANGES
    ]


def test_adjacent_pairs_are_distinct_orthogonal_neighbours() -> None:
    assert len(set(ADJACENT_PAIRS)) == 24
    for x, y in ADJACENT_PAIRS:
        (rx, cx), (ry, cy) = divmod(x, 4), divmod(y, 4)
        assert x < y and abs(rx - ry) + abs(cx - cy) == 1
    assert len({frozenset(p) for p in ADJACENT_PAIRS}) == 24


# --------------------------------------------------------------------------- encode / decode
def test_decode_then_encode_is_the_identity_for_every_id() -> None:
    for a in ALL_IDS:
        phase, fields = decode(a)
        assert phase == ACTION_PHASE[a]
        assert encode(phase, fields) == a


FIELD_RANGES = {
    A.PHASE_SLIDE: (4, 4, 4),
    A.PHASE_FALLBACK: (A.MAX_ZONES, 4, 4, 4),
    A.PHASE_VALIDATE: (4, 10),
    A.PHASE_SWAP_STAGE: (24,),
    A.PHASE_SWAP_ZONE: (16, 4, 4),
    A.PHASE_GIVE_FACE: (2,),
    A.PHASE_COVER: (4,),
}


def test_encode_then_decode_is_the_identity_for_every_field_tuple() -> None:
    seen = set()
    for phase, sizes in FIELD_RANGES.items():
        for flat in range(int(np.prod(sizes))):
            fields = tuple(int(v) for v in np.unravel_index(flat, sizes))
            a = encode(phase, fields)
            assert decode(a) == (phase, fields)
            seen.add(a)
    seen |= {A.SWAP_STAGE_PASS, A.SWAP_ZONE_PASS}
    assert decode(A.SWAP_STAGE_PASS) == (A.PHASE_SWAP_STAGE, ())
    assert decode(A.SWAP_ZONE_PASS) == (A.PHASE_SWAP_ZONE, ())
    assert seen == set(ALL_IDS)


def test_decode_accepts_numpy_integers() -> None:
    assert decode(np.int64(A.cover_action(2))) == (A.PHASE_COVER, (2,))
    assert action_to_string(np.int32(0)) == "slide B from top col0"


# --------------------------------------------------------------------------- phase_of_action
def test_phase_of_action_for_every_id() -> None:
    for a in ALL_IDS:
        assert phase_of_action(a) == PHASES[decode(a)[0]]
    assert phase_of_action(0) == "slide"
    assert phase_of_action(A.FALLBACK_START) == "fallback"
    assert phase_of_action(A.SWAP_STAGE_PASS) == "swap_stage"
    assert phase_of_action(A.SWAP_ZONE_PASS) == "swap_zone"
    assert phase_of_action(NUM_ACTIONS - 1) == "cover"


# --------------------------------------------------------------------------- strings
def test_every_id_round_trips_through_its_string() -> None:
    assert len(set(ACTION_STRINGS)) == NUM_ACTIONS
    for a in ALL_IDS:
        text = action_to_string(a)
        assert text.isascii() and text == text.strip()
        assert string_to_action(text) == a


@pytest.mark.parametrize(
    ("action", "text"),
    [
        (A.slide_action(A.TOP, 0, 2), "slide B from top col2"),
        (A.slide_action(A.LEFT, 3, 1), "slide Y from left row1"),
        (A.fallback_action(6, 2, A.LEFT, 0), "fallback R of personal+1 from left row0"),
        (A.fallback_action(0, 1, A.BOTTOM, 3), "fallback G of central from bottom col3"),
        (A.fallback_action(1, 0, A.RIGHT, 2), "fallback B of side+0 from right row2"),
        (A.validate_action(0, 3), "validate slot0 space3"),
        (A.swap_stage_action(0), "swap-stage r0c0 r0c1"),
        (A.swap_stage_action(12), "swap-stage r0c0 r1c0"),
        (A.swap_stage_action(None), "swap-stage pass"),
        (A.swap_zone_action(6, A.BOTTOM, 3), "swap-zone r1c2 with Y of bottom"),
        (A.swap_zone_action(None), "swap-zone pass"),
        (A.give_face_action(A.WHITE), "give white"),
        (A.give_face_action(A.BLACK), "give black"),
        (A.cover_action(2), "cover slot2"),
    ],
)
def test_action_strings(action: int, text: str) -> None:
    assert action_to_string(action) == text
    assert string_to_action(text) == action


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("SLIDE b FROM Top COL2", "slide B from top col2"),
        ("  slide   b from top col2  ", "slide B from top col2"),
        ("slide\tb\nfrom top col2", "slide B from top col2"),
        ("Fallback r OF Personal+1 from LEFT Row0", "fallback R of personal+1 from left row0"),
        ("Swap-Stage PASS", "swap-stage pass"),
        ("swap-zone R1C2 with y of Bottom", "swap-zone r1c2 with Y of bottom"),
        ("GIVE White", "give white"),
        (" cover SLOT2 ", "cover slot2"),
    ],
)
def test_string_parsing_ignores_case_and_whitespace(text: str, canonical: str) -> None:
    assert string_to_action(text) == string_to_action(canonical)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "jump",
        "slide X from top col2",
        "slide B from top col4",
        "slide B from top row2",  # a slide from the top enters a column
        "slide B from middle col2",
        "slide B top col2",
        "fallback B of side+4 from top col0",
        "validate slot4 space0",
        "validate slot0 space10",
        "swap-stage r0c0 r1c1",  # not adjacent
        "swap-stage r0c1 r0c0",  # pairs are written in order
        "swap-zone pass now",
        "give grey",
        "cover slot4",
        "cover slot 2",
    ],
)
def test_unknown_strings_raise_action_error(text: str) -> None:
    with pytest.raises(ActionError, match="unknown action"):
        string_to_action(text)


@pytest.mark.parametrize("value", [3, None, b"cover slot2", ["cover slot2"]])
def test_string_to_action_needs_a_string(value: object) -> None:
    with pytest.raises(ActionError, match="expected an action string"):
        string_to_action(value)  # type: ignore[arg-type]


def test_examples_in_the_error_message_are_valid_actions() -> None:
    with pytest.raises(ActionError) as info:
        string_to_action("nonsense")
    examples = re.findall(r"'([^']+)'", str(info.value).split("examples of valid actions:", 1)[1])
    assert len(examples) >= 5
    for example in examples:
        string_to_action(example)


# --------------------------------------------------------------------------- bad ids
@pytest.mark.parametrize("bad", [-1, -NUM_ACTIONS, NUM_ACTIONS, NUM_ACTIONS + 1, 10**12, np.int64(-3)])
def test_out_of_range_ids_raise(bad: int) -> None:
    for fn in (check_action_id, decode, action_to_string, phase_of_action):
        with pytest.raises(ActionError, match=rf"out of range.*\[0, {NUM_ACTIONS}\)"):
            fn(bad)


@pytest.mark.parametrize("bad", [3.0, 0.5, float("nan"), True, False, np.bool_(True), "3", None, [3], np.float32(1.0)])
def test_non_integer_ids_raise(bad: object) -> None:
    for fn in (check_action_id, decode, action_to_string, phase_of_action):
        with pytest.raises(ActionError, match=f"action must be an integer id.*of type {type(bad).__name__}"):
            fn(bad)  # type: ignore[arg-type]


def test_a_0d_integer_array_is_an_id_and_other_arrays_are_named_with_their_dtype() -> None:
    """Every env's step took ``np.array(5)`` and SingleGame.step_checked refused it; a 0-d
    float array was reported as a float, not as the array it was (env API audit, 2026-12-07)."""
    assert check_action_id(np.array(5)) == 5 and type(check_action_id(np.array(5, dtype=np.uint16))) is int
    for bad, dtype in [(np.array(5.0), "float64"), (np.array(True), "bool"), (np.array([5]), "int64")]:
        with pytest.raises(ActionError, match=re.escape(f"got a {dtype} array of shape {bad.shape}")):
            check_action_id(bad)
    game = SingleGame.new(GameConfig(num_players=2), 0)
    game.step_checked(np.array(game.legal_actions()[0]))

    class Tensor:  # another library's 0-d array (a torch tensor): the batched steps took theirs
        def __init__(self, value: Any) -> None:
            self.value = value

        def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
            return np.asarray(self.value, dtype=dtype)

    assert check_action_id(Tensor(np.int64(7))) == 7
    with pytest.raises(ActionError, match=re.escape("got a float32 array of shape ()")):
        check_action_id(Tensor(np.float32(7)))
    with pytest.raises(ActionError, match=r"an integer array of shape \(2,\), got int 5$"):
        E.check_action_batch(5, 2)


def test_action_error_is_a_value_error() -> None:
    assert issubclass(ActionError, ValueError)
    assert check_action_id(np.uint8(5)) == 5 and type(check_action_id(np.uint8(5))) is int
