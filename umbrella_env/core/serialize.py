"""The JSON state dict: validation, canonical form and JSON text (docs/state.md).

Both engines read and write one game as a plain, JSON-able dict.  :func:`validate_state_dict`
is the single gate for such dicts: it checks types, shapes and the consistency rules of
``docs/state.md``, and returns a *canonical deep copy*:

* exactly the keys of :data:`STATE_KEYS`, in that order, optional keys filled in;
* lists (never tuples), plain ``int`` / ``bool`` (NumPy scalars are converted);
* zone strings sorted ``B G R Y`` (see :func:`zone_string` / :func:`zone_counts`);
* ``scores`` recomputed from the position (docs/rules.md §5, §8); a given ``scores`` must match.

A bad dict raises :class:`~umbrella_env.core.errors.StateError` whose message starts with
the path of the offending field (``zones.side[1]``, ``slots[0][1][2].face``, ...) and says
what was expected.

:func:`encode_state` is the other direction, shared by the engines: it writes the dict of
a game given in the engines' integer encoding (colour indices, tile codes, zone counts by
absolute zone).
"""

from __future__ import annotations

import json
import reprlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn

import numpy as np

from umbrella_env.core import facts as F
from umbrella_env.core.actions import FACES, PHASE_COVER, PHASES, SIDES
from umbrella_env.core.components import (
    COLOURS,
    NUM_COLOURS,
    NUM_SLOTS,
    NUM_SPACES,
    NUM_TILES,
    STAGE_SIZE,
    ComponentSet,
    default_components,
    rotate_cells,
)
from umbrella_env.core.config import DEFAULT_MAX_TURNS, MAX_TURNS_LIMIT
from umbrella_env.core.errors import StateError
from umbrella_env.core.jsonio import parse_json

__all__ = [
    "MULTI_ZONE_KEYS",
    "OPTIONAL_DEFAULTS",
    "PASSING_PHASES",
    "SOLO_ZONE_KEYS",
    "STATE_KEYS",
    "SWAP_PHASES",
    "encode_state",
    "state_from_json",
    "state_to_json",
    "tile_code",
    "tile_entry",
    "validate_state_dict",
    "validated_slot",
    "zone_counts",
    "zone_count_rows",
    "zone_string",
    "zones_entry",
]

#: Keys of a canonical state dict, in canonical order.
STATE_KEYS: tuple[str, ...] = (
    "num_players",
    "plate_level",
    "max_turns",
    "current_player",
    "phase",
    "turn",
    "stages",
    "zones",
    "slots",
    "plates",
    "supply",
    "reserve_used",
    "end_triggered_by",
    "passing",
    "extra_turn",
    "last_slide",
    "terminated",
    "truncated",
    "scores",
)
#: Keys that may be left out on input, with their default (``scores`` is recomputed).
OPTIONAL_DEFAULTS: Mapping[str, Any] = {
    "max_turns": DEFAULT_MAX_TURNS,
    "passing": None,
    "extra_turn": False,
    "last_slide": None,
    "terminated": False,
    "truncated": False,
}
_OPTIONAL_KEYS = frozenset(OPTIONAL_DEFAULTS) | {"scores"}
_REQUIRED_KEYS = tuple(k for k in STATE_KEYS if k not in _OPTIONAL_KEYS)

#: Zone keys: 2-4 players, solo.
MULTI_ZONE_KEYS: tuple[str, ...] = ("central", "side", "personal")
SOLO_ZONE_KEYS: tuple[str, ...] = ("left", "right", "top", "personal", "discard")
#: Phases in which ``passing`` names the validated tile (set exactly there): still on its
#: slot during a swap decision (docs/rules.md decision 2), then in transit.
PASSING_PHASES: frozenset[str] = frozenset({"swap_stage", "swap_zone", "give_face", "cover"})
#: Phases of a swap decision: the validated tile (``passing``) still lies on its slot.
SWAP_PHASES: frozenset[str] = frozenset({"swap_stage", "swap_zone"})

_repr = reprlib.Repr()
_repr.maxstring = 60
_repr.maxother = 60
_repr.maxlist = _repr.maxtuple = 8
_repr.maxdict = 6
_LETTERS = ", ".join(COLOURS)


# --------------------------------------------------------------------------- zone strings
def zone_string(counts: Sequence[int]) -> str:
    """Umbrella counts per colour (``B G R Y``) -> the canonical zone string, e.g. ``[2, 0, 1, 0] -> "BBR"``."""
    if isinstance(counts, str) or len(counts) != NUM_COLOURS:
        raise StateError(f"zone counts: expected {NUM_COLOURS} counts (B, G, R, Y), got {_repr.repr(counts)}")
    return "".join(letter * _int(n, f"zone counts[{i}]", lo=0) for i, (letter, n) in enumerate(zip(COLOURS, counts)))


def zone_counts(s: str) -> list[int]:
    """A zone string (letters in any order) -> umbrella counts per colour, e.g. ``"RBB" -> [2, 0, 1, 0]``."""
    return [_letters(s, "zone").count(c) for c in COLOURS]


def zones_entry(num_players: int, counts: Sequence[Sequence[int]], discard: Sequence[int]) -> dict[str, Any]:
    """The ``zones`` entry of a state dict from the counts per colour of every absolute zone
    (:func:`facts.zone_keys <umbrella_env.core.facts.zone_keys>`) and the solo discard."""
    out: dict[str, Any] = {}
    for (key, index), row in zip(F.zone_keys(num_players), counts):
        if index is None:
            out[key] = zone_string(row)
        else:
            out.setdefault(key, []).append(zone_string(row))
    if num_players == 1:
        out["discard"] = zone_string(discard)
    return out


def zone_count_rows(num_players: int, zones: Mapping[str, Any]) -> tuple[list[list[int]], list[int]]:
    """Inverse of :func:`zones_entry`: (counts per colour of every absolute zone, solo
    discard counts, zero at 2-4 players) of a validated ``zones`` entry."""
    rows = [zone_counts(zones[key] if index is None else zones[key][index]) for key, index in F.zone_keys(num_players)]
    discard = zone_counts(zones["discard"]) if num_players == 1 else [0] * NUM_COLOURS
    return rows, discard


def tile_entry(code: int) -> dict[str, Any]:
    """Tile code (``tile * 2 + face``) -> the state dict's ``{"tile", "face"}``."""
    return {"tile": int(code) >> 1, "face": FACES[int(code) & 1]}


def tile_code(entry: Mapping[str, Any]) -> int:
    """Inverse of :func:`tile_entry` (of a validated entry)."""
    return int(entry["tile"]) * 2 + FACES.index(entry["face"])


def encode_state(
    *,
    num_players: int,
    plate_level: int,
    max_turns: int,
    current_player: int,
    phase: int,
    turn: int,
    stages: Sequence[Sequence[int]],
    zone_rows: Sequence[Sequence[int]],
    discard: Sequence[int],
    stacks: Sequence[Sequence[int]],
    plates: Sequence[Sequence[int]],
    supply: int,
    reserve_used: int,
    end_triggered_by: int,
    passing: int,
    extra_turn: bool,
    last_side: int,
    last_colour: int,
    terminated: bool,
    truncated: bool,
    scores: Sequence[int],
) -> dict[str, Any]:
    """The canonical state dict of a game given in the engines' encoding (not validated).

    ``stages[seat]`` 16 colour indices (cell = row * 4 + col); ``zone_rows[zone]`` counts per
    colour by absolute zone; ``stacks[seat * 4 + slot]`` tile codes bottom to top;
    ``plates[seat]`` 10 colour indices, -1 free; ``end_triggered_by``, ``passing``,
    ``last_side`` and ``last_colour`` are -1 when unset; ``phase`` an index of ``PHASES``.
    """
    last = None
    if last_side >= 0:
        last = {"side": SIDES[last_side], "colour": COLOURS[last_colour]}
    P = num_players
    return {
        "num_players": P,
        "plate_level": plate_level,
        "max_turns": max_turns,
        "current_player": int(current_player),
        "phase": PHASES[phase],
        "turn": int(turn),
        "stages": [["".join([COLOURS[c] for c in s[r * 4 : r * 4 + 4]]) for r in range(4)] for s in stages],
        "zones": zones_entry(P, zone_rows, discard),
        "slots": [[[tile_entry(c) for c in stacks[p * 4 + k]] for k in range(NUM_SLOTS)] for p in range(P)],
        "plates": [[None if c < 0 else COLOURS[c] for c in plate] for plate in plates],
        "supply": int(supply),
        "reserve_used": int(reserve_used),
        "end_triggered_by": None if end_triggered_by < 0 else int(end_triggered_by),
        "passing": None if passing < 0 else tile_entry(passing),
        "extra_turn": bool(extra_turn),
        "last_slide": last,
        "terminated": bool(terminated),
        "truncated": bool(truncated),
        "scores": [int(x) for x in scores],
    }


# --------------------------------------------------------------------------- JSON text
def state_to_json(d: Mapping[str, Any], *, indent: int | None = None, components: ComponentSet | None = None) -> str:
    """Validate ``d`` (a game of ``components``, default the built-in set) and write its
    canonical form as JSON text."""
    return json.dumps(validate_state_dict(d, components=components), indent=indent)


def state_from_json(s: str | bytes, *, components: ComponentSet | None = None) -> dict[str, Any]:
    """Parse JSON text and return the validated canonical state dict."""
    try:
        data = parse_json(s)
    except (ValueError, TypeError) as exc:
        said = str(exc)  # parse_json's own refusals already say "not valid JSON"
        raise StateError(
            f"state: {said}" if said.startswith("not valid JSON") else f"state: not valid JSON ({said})"
        ) from None
    return validate_state_dict(data, components=components)


# --------------------------------------------------------------------------- validation
def validate_state_dict(d: Mapping[str, Any], *, components: ComponentSet | None = None) -> dict[str, Any]:
    """Check a state dict and return its canonical deep copy; raise :class:`StateError` if bad.

    ``components`` is the component set the game uses (default: the built-in one); it gives
    the initial supply, the reserve and the plate bonuses.
    """
    cs = default_components() if components is None else components
    _check_keys(d, "state", required=_REQUIRED_KEYS, optional=_OPTIONAL_KEYS)
    get = {**OPTIONAL_DEFAULTS, **d}.__getitem__

    num_players = _int(get("num_players"), "num_players", 1, 4)
    out: dict[str, Any] = {
        "num_players": num_players,
        "plate_level": _int(get("plate_level"), "plate_level", 1, 4),
        "max_turns": _int(get("max_turns"), "max_turns", lo=1, hi=MAX_TURNS_LIMIT),
        "current_player": _int(get("current_player"), "current_player", 0, num_players - 1),
        "phase": _choice(get("phase"), "phase", PHASES),
        "turn": _int(get("turn"), "turn", lo=0),
        "stages": [_stage(s, f"stages[{p}]") for p, s in enumerate(_list(get("stages"), "stages", num_players))],
        "zones": _zones(get("zones"), num_players),
        "slots": [
            [
                [_tile(e, f"slots[{p}][{k}][{j}]") for j, e in enumerate(_list(stack, f"slots[{p}][{k}]"))]
                for k, stack in enumerate(_list(board, f"slots[{p}]", NUM_SLOTS))
            ]
            for p, board in enumerate(_list(get("slots"), "slots", num_players))
        ],
        "plates": [
            [_plate_space(v, f"plates[{p}][{s}]") for s, v in enumerate(_list(plate, f"plates[{p}]", NUM_SPACES))]
            for p, plate in enumerate(_list(get("plates"), "plates", num_players))
        ],
        "supply": _int(get("supply"), "supply", lo=0),
        "reserve_used": _int(get("reserve_used"), "reserve_used", 0, cs.reserve),
        "end_triggered_by": _optional(
            get("end_triggered_by"), lambda v: _int(v, "end_triggered_by", 0, num_players - 1)
        ),
        "passing": _optional(get("passing"), lambda v: _tile(v, "passing")),
        "extra_turn": _bool(get("extra_turn"), "extra_turn"),
        "last_slide": _optional(get("last_slide"), _last_slide),
        "terminated": _bool(get("terminated"), "terminated"),
        "truncated": _bool(get("truncated"), "truncated"),
    }
    _check_umbrellas(out)
    _check_tiles(out)
    _check_plates(out, cs)
    _check_tokens(out, cs)
    _check_phase(out, cs)
    _check_powers(out, cs)
    _check_turn(out, cs)
    _check_end(out, cs)
    _check_decision(out, cs)
    out["scores"] = _scores(out, cs)
    if "scores" in d:
        given = [_int(v, f"scores[{p}]") for p, v in enumerate(_list(d["scores"], "scores", num_players))]
        if given != out["scores"]:
            raise StateError(f"scores: expected {out['scores']} (recomputed from the position), got {given}")
    assert tuple(out) == STATE_KEYS
    return out


# --------------------------------------------------------------------------- field parsers
def _fail(path: str, expected: str, value: Any) -> NoReturn:
    raise StateError(f"{path}: expected {expected}, got {_repr.repr(value)}")


def _check_keys(d: Any, path: str, required: Sequence[str], optional: Sequence[str] | frozenset[str] = ()) -> None:
    if not isinstance(d, Mapping):
        _fail(path, "a dict (JSON object)", d)
    missing = [k for k in required if k not in d]
    if missing:
        raise StateError(f"{path}: missing key(s) {missing}")
    unknown = sorted(str(k) for k in d if k not in required and k not in optional)
    if unknown:
        allowed = list(required) + sorted(optional)
        raise StateError(f"{path}: unknown key(s) {unknown}; expected keys {allowed}")


def _int(value: Any, path: str, lo: int | None = None, hi: int | None = None) -> int:
    if lo is not None and hi is not None:
        expected = f"an int in {lo}..{hi}"
    elif lo is not None:
        expected = f"an int >= {lo}"
    else:
        expected = "an int"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        _fail(path, expected, value)
    v = int(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        _fail(path, expected, v)
    return v


def _bool(value: Any, path: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        _fail(path, "true or false", value)
    return bool(value)


def _choice(value: Any, path: str, choices: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        _fail(path, f"one of {', '.join(repr(c) for c in choices)}", value)
    return str(value)


def _list(value: Any, path: str, length: int | None = None) -> list[Any]:
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (list, tuple)):
        _fail(path, "a list" if length is None else f"a list of {length}", value)
    if length is not None and len(value) != length:
        raise StateError(f"{path}: expected a list of {length} entries, got {len(value)}")
    return list(value)


def _optional(value: Any, parse: Callable[[Any], Any]) -> Any:
    return None if value is None else parse(value)


def _letters(value: Any, path: str) -> str:
    """A multiset of umbrellas as a string -> the canonical (sorted) string."""
    if not isinstance(value, str) or set(value) - set(COLOURS):
        _fail(path, f"a string of colour letters {_LETTERS} (possibly empty)", value)
    return "".join(c * value.count(c) for c in COLOURS)


def _stage(value: Any, path: str) -> list[str]:
    rows = _list(value, path, STAGE_SIZE)
    for r, row in enumerate(rows):
        if not isinstance(row, str) or len(row) != STAGE_SIZE or set(row) - set(COLOURS):
            _fail(f"{path}[{r}]", f"a row of {STAGE_SIZE} colour letters {_LETTERS}", row)
    return [str(r) for r in rows]


def _zones(value: Any, num_players: int) -> dict[str, Any]:
    if num_players == 1:
        _check_keys(value, "zones", required=SOLO_ZONE_KEYS)
        return {k: _letters(value[k], f"zones.{k}") for k in SOLO_ZONE_KEYS}
    _check_keys(value, "zones", required=MULTI_ZONE_KEYS)
    return {
        "central": _letters(value["central"], "zones.central"),
        "side": [
            _letters(v, f"zones.side[{i}]") for i, v in enumerate(_list(value["side"], "zones.side", num_players))
        ],
        "personal": [
            _letters(v, f"zones.personal[{i}]")
            for i, v in enumerate(_list(value["personal"], "zones.personal", num_players))
        ],
    }


def _tile(value: Any, path: str) -> dict[str, Any]:
    _check_keys(value, path, required=("tile", "face"))
    return {
        "tile": _int(value["tile"], f"{path}.tile", 0, NUM_TILES - 1),
        "face": _choice(value["face"], f"{path}.face", FACES),
    }


def _plate_space(value: Any, path: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or value not in COLOURS:
        _fail(path, f"a colour letter {_LETTERS} or null", value)
    return str(value)


def _last_slide(value: Any) -> dict[str, str]:
    _check_keys(value, "last_slide", required=("side", "colour"))
    return {
        "side": _choice(value["side"], "last_slide.side", SIDES),
        "colour": _choice(value["colour"], "last_slide.colour", COLOURS),
    }


# --------------------------------------------------------------------------- consistency
def _umbrella_zone_strings(d: Mapping[str, Any]) -> list[str]:
    zones = d["zones"]
    if d["num_players"] == 1:
        return [zones[k] for k in SOLO_ZONE_KEYS]
    return [zones["central"], *zones["side"], *zones["personal"]]


def _check_umbrellas(d: Mapping[str, Any]) -> None:
    p = d["num_players"]
    expected = 9 if p == 1 else 6 * p + 1
    text = "".join(row for stage in d["stages"] for row in stage) + "".join(_umbrella_zone_strings(d))
    where = "stages + zones (incl. discard)" if p == 1 else "stages + zones"
    for c in COLOURS:
        n = text.count(c)
        if n != expected:
            rule = "9 in solo" if p == 1 else f"6P+1 = {expected} at {p} players"
            raise StateError(f"stages/zones: {n} umbrellas of colour {c} in {where}, expected {rule}")


def _check_tiles(d: Mapping[str, Any]) -> None:
    p = d["num_players"]
    seen: dict[int, str] = {}
    entries = [
        (f"slots[{i}][{k}][{j}].tile", e)
        for i, board in enumerate(d["slots"])
        for k, stack in enumerate(board)
        for j, e in enumerate(stack)
    ]
    if d["passing"] is not None and not (d["phase"] in SWAP_PHASES and validated_slot(d) is not None):
        entries.append(("passing.tile", d["passing"]))  # in transit, not (or no more) on a slot
    for path, e in entries:
        if e["tile"] in seen:
            raise StateError(f"{path}: tile {e['tile']} is already at {seen[e['tile']]}; tiles must be distinct")
        seen[e["tile"]] = path
    if p == 1 and len(seen) > 6:
        raise StateError(f"slots: {len(seen)} tiles on the board and in passing, expected at most 6 in solo")
    if p > 1 and len(seen) != 4 * p:
        raise StateError(f"slots: {len(seen)} tiles on the boards and in passing, expected 4 per player = {4 * p}")


def validated_slot(d: Mapping[str, Any]) -> int | None:
    """The slot of the current player whose top tile is ``passing`` (the validated tile,
    which stays on its slot during a swap decision, docs/rules.md decision 2), or None."""
    for k, stack in enumerate(d["slots"][d["current_player"]]):
        if stack and stack[-1] == d["passing"]:
            return k
    return None


def _check_validated_tile(d: Mapping[str, Any], cs: ComponentSet) -> None:
    """Swap phases: the validated tile still lies on top of its slot (decision 2), and its
    figure is still complete (the stage has not changed since the validation)."""
    seat, passing = d["current_player"], d["passing"]
    k = validated_slot(d)
    if k is None:
        tops = [stack[-1] for stack in d["slots"][seat] if stack]
        _fail(
            "passing",
            f"in phase {d['phase']!r} the validated tile, still on top of its slot until the swap is decided "
            f"(decision 2): one of seat {seat}'s top tiles {tops}",
            passing,
        )
    cells = rotate_cells(cs.face_cells(passing["tile"], FACES.index(passing["face"])), k)
    stage = "".join(d["stages"][seat])
    if len({stage[c] for c in cells}) != 1:
        raise StateError(
            f"passing: in phase {d['phase']!r} the validated tile's figure on slot {k} must still be complete "
            f"(the stage has not changed since the validation), but its cells hold {''.join(stage[c] for c in cells)}"
        )


def _check_plates(d: Mapping[str, Any], cs: ComponentSet) -> None:
    """Every token lies on a space that accepts its colour (docs/rules.md §7.1)."""
    plate = cs.plates[d["plate_level"]]
    for p, spaces in enumerate(d["plates"]):
        for s, v in enumerate(spaces):
            if v is not None and not any(plate.accepts(s, COLOURS.index(v), k) for k in range(NUM_SLOTS)):
                _fail(f"plates[{p}][{s}]", f"a colour that space {s} ({plate.spaces[s]}) accepts, or null", v)


def _check_tokens(d: Mapping[str, Any], cs: ComponentSet) -> None:
    p = d["num_players"]
    initial = cs.solo_tokens if p == 1 else cs.supply[p]
    placed = sum(v is not None for plate in d["plates"] for v in plate)
    total = d["supply"] + placed - d["reserve_used"]
    if total != initial:
        raise StateError(
            f"supply: supply {d['supply']} + {placed} tokens on plates - reserve_used {d['reserve_used']} = {total}, "
            f"expected the initial supply {initial}"
        )
    if d["reserve_used"]:
        if p == 1:
            _fail("reserve_used", "0 in solo (there is no reserve)", d["reserve_used"])
        if d["supply"] != 0 or d["end_triggered_by"] is None:
            raise StateError(
                "reserve_used: tokens come from the reserve only once the supply is empty and the end is "
                f"triggered, got supply {d['supply']}, end_triggered_by {d['end_triggered_by']!r}"
            )
        if d["reserve_used"] > p - 1:
            _fail(
                "reserve_used",
                f"at most {p - 1} (one token per turn of the final round, decision 8)",
                d["reserve_used"],
            )


def _check_phase(d: Mapping[str, Any], cs: ComponentSet) -> None:
    p, phase = d["num_players"], d["phase"]
    solo = p == 1
    over = d["terminated"] or d["truncated"]
    if d["terminated"] and d["truncated"]:
        raise StateError("truncated: a game cannot be both terminated and truncated")
    if (phase == "game_over") != over:
        if over:
            _fail("phase", "'game_over' since the game is terminated or truncated", phase)
        raise StateError("phase: 'game_over' requires terminated or truncated to be true")
    if d["turn"] > d["max_turns"]:
        _fail("turn", f"at most max_turns = {d['max_turns']}", d["turn"])
    if d["turn"] == d["max_turns"] and not over:
        raise StateError(
            f"turn: the turn limit {d['max_turns']} is reached, so the game must be terminated or truncated"
        )
    if d["truncated"] and d["turn"] != d["max_turns"]:
        raise StateError(
            f"truncated: a game is truncated only at turn == max_turns = {d['max_turns']}, got turn {d['turn']}"
        )
    if phase == "give_face" and p != 2:
        _fail("phase", "a phase other than 'give_face' (2 players only)", phase)
    if phase == "fallback" and solo:
        _fail("phase", "a phase other than 'fallback' (no fallback slide in solo)", phase)
    if phase in ("swap_stage", "swap_zone") and d["plate_level"] != 4:
        _fail("phase", f"a phase other than {phase!r} (swap powers exist at plate level 4 only)", phase)
    if (d["passing"] is not None) != (phase in PASSING_PHASES):
        if d["passing"] is None:
            raise StateError(f"passing: expected the tile in transit in phase {phase!r}, got null")
        where = f"null in phase {phase!r} (a tile is in transit only in {sorted(PASSING_PHASES)})"
        _fail("passing", where, d["passing"])
    if phase in SWAP_PHASES:
        _check_validated_tile(d, cs)
    if phase == "cover":
        receiver = F.actor(d["current_player"], PHASE_COVER, p)
        empty = [k for k, stack in enumerate(d["slots"][receiver]) if not stack]
        if empty:
            raise StateError(
                f"slots[{receiver}]: phase 'cover' needs the receiver's 4 slots occupied, but slot(s) {empty} are empty"
            )
    if d["extra_turn"] and (solo or d["plate_level"] != 4):
        _fail("extra_turn", "false (the extra-turn flag exists at 2-4 players, plate level 4)", True)
    if solo:
        if d["end_triggered_by"] is not None:
            _fail("end_triggered_by", "null in solo", d["end_triggered_by"])
        if phase in ("slide", "game_over") and d["last_slide"] is not None:
            _fail("last_slide", f"null in phase {phase!r} (it is kept only until the turn ends)", d["last_slide"])
        if phase in ("validate", "swap_stage", "swap_zone", "cover") and d["last_slide"] is None:
            raise StateError(f"last_slide: expected this turn's slide in phase {phase!r}, got null")
    else:
        if d["last_slide"] is not None:
            _fail("last_slide", "null at 2-4 players (solo only)", d["last_slide"])
        trigger = d["end_triggered_by"]
        if trigger is not None and not over and d["current_player"] == trigger:
            raise StateError(
                f"current_player: seat {trigger} triggered the end and plays no more, but it is the current player"
            )


def _check_powers(d: Mapping[str, Any], cs: ComponentSet) -> None:
    """A swap phase or the extra-turn flag only once the token of this turn filled the
    power's pair of spaces (docs/rules.md §7.4); they last until the turn ends."""
    powers = cs.plates[d["plate_level"]].powers
    plate = d["plates"][d["current_player"]]
    phase = d["phase"]
    for name, path, active in (
        ("swap_stage", "phase", phase == "swap_stage"),
        ("swap_zone", "phase", phase == "swap_zone"),
        ("extra_turn", "extra_turn", d["extra_turn"]),
    ):
        if not active:
            continue
        pair = powers.get(name)
        if pair is None or plate[pair[0]] is None or plate[pair[1]] is None:
            where = "" if pair is None else f" (spaces {pair[0]} and {pair[1]} of plates[{d['current_player']}])"
            raise StateError(f"{path}: the {name} power fires only when a token fills its pair of spaces{where}")
    if d["extra_turn"] and phase not in ("give_face", "cover"):
        _fail(
            "extra_turn", f"false in phase {phase!r} (the flag lasts from the validation to the end of the turn)", True
        )


def _check_turn(d: Mapping[str, Any], cs: ComponentSet) -> None:
    """The turn count allows the tokens placed (at most one per turn, docs/rules.md §4.2)
    and, in solo, the umbrellas discarded (one per slide, §8.2)."""
    placed = sum(v is not None for plate in d["plates"] for v in plate)
    this_turn = d["phase"] in PASSING_PHASES  # the current turn has placed its token
    if placed > d["turn"] + this_turn:
        _fail(
            "turn",
            f"at least {placed - this_turn}: {placed} tokens are on the plates and a turn places at most one"
            + (" (this turn's included)" if this_turn else ""),
            d["turn"],
        )
    if d["num_players"] == 1:
        slides = d["turn"] + (d["phase"] in ("validate", "swap_stage", "swap_zone", "cover"))
        pair = cs.plates[d["plate_level"]].powers.get("extra_turn")
        returned = pair is not None and all(d["plates"][0][s] is not None for s in pair)
        discarded = len(d["zones"]["discard"])
        if discarded != slides - returned:
            raise StateError(
                f"turn: in solo each slide discards one umbrella and the extra-turn power returns one (§8.2, "
                f"decision 6): turn {d['turn']} in phase {d['phase']!r} means {slides} slide(s)"
                + (" and one return" if returned else "")
                + f", so {slides - returned} umbrella(s) in zones.discard, got {discarded}"
            )


def _end_conditions(d: Mapping[str, Any], skip_seat: int | None = None) -> list[str]:
    """The end conditions of docs/rules.md §5.1 that hold (2-4 players), in words; the
    supply and the seat ``skip_seat`` are left out when given (they changed this turn)."""
    out = []
    if d["supply"] == 0 and skip_seat is None:
        out.append("the supply is empty")
    for p in range(d["num_players"]):
        if p == skip_seat:
            continue
        if not any(d["slots"][p]):
            out.append(f"seat {p} has no figure tile (slots[{p}])")
        if all(v is not None for v in d["plates"][p]):
            out.append(f"seat {p}'s plate is full (plates[{p}])")
    return out


def _solo_end(d: Mapping[str, Any], cs: ComponentSet) -> str | None:
    """The solo end condition of docs/rules.md §8.3 that holds, in words, or None."""
    plate = cs.plates[d["plate_level"]]
    spaces, slots = d["plates"][0], d["slots"][0]
    if sum(v is not None for v in spaces) >= cs.solo_tokens:
        return "the last token is placed"
    zones = "".join(F.seat_zone_strings(d, 0))
    if not zones:
        return "the four zones are empty"
    if not any(slots):
        return "no tile is left on the board (slots[0])"
    stage = "".join(d["stages"][0])
    for c in COLOURS:
        if stage.count(c) + zones.count(c) < F.FIGURE_CELLS:
            continue
        for s, v in enumerate(spaces):
            text = plate.spaces[s]
            if v is None and (slots[int(text[1:])] if text.startswith("W") else c in text.split("/")):
                return None
    return "no figure can be completed any more (no colour both scoreable and with 4 umbrellas left)"


def _check_end(d: Mapping[str, Any], cs: ComponentSet) -> None:
    """The end of the game (docs/rules.md §5.1, decision 7; solo §8.3, decision 11): the
    game is over exactly when the rules say so, and the end is triggered exactly when an
    end condition held at an end check."""
    P, phase, seat = d["num_players"], d["phase"], d["current_player"]
    if P == 1:
        reason = _solo_end(d, cs)
        if d["terminated"] and reason is None:
            _fail("terminated", "false: no solo end condition of rules.md §8.3 holds", True)
        if d["truncated"] and reason is not None:
            raise StateError(f"truncated: the game ended by the rules ({reason}), so it is terminated, not truncated")
        if phase in ("slide", "fallback") and reason is not None:
            _fail("phase", f"'game_over' with terminated true, since {reason} (rules.md §8.3)", phase)
        return
    trigger = d["end_triggered_by"]
    # Mid-turn (a tile in transit) the mover's token, plate and board may have changed
    # since the last end check; every other fact is as it was then.
    held = _end_conditions(d, skip_seat=seat if phase in PASSING_PHASES else None)
    if held and trigger is None:
        raise StateError(
            f"end_triggered_by: expected the seat whose turn triggered the end, since {held[0]} "
            "(the end check after every turn triggers it, rules.md §5.1), got null"
        )
    if trigger is not None and not d["terminated"] and not _end_conditions(d):
        _fail(
            "end_triggered_by",
            "null: no end condition of rules.md §5.1 holds (the supply is not empty, every seat has a tile "
            "and no plate is full)",
            trigger,
        )
    last = None if trigger is None else (trigger - 1) % P  # the final round's last seat
    if d["terminated"] and seat != last:
        if trigger is None:
            _fail("terminated", "false: the end was not triggered (end_triggered_by is null)", True)
        raise StateError(
            f"terminated: the game ends when the final round is over, after the turn of seat {last} (the end "
            f"was triggered by seat {trigger}), but current_player is {seat}"
        )
    if d["truncated"] and seat == last:
        raise StateError(
            f"truncated: the final round ended with seat {seat}'s turn, so the game is terminated, not truncated"
        )


# --------------------------------------------------------------------------- scores
def _scores(d: Mapping[str, Any], cs: ComponentSet) -> list[int]:
    """Scores by the end-of-game formula (facts.score) applied to the current position."""
    P = d["num_players"]
    plate = cs.plates[d["plate_level"]]
    out = []
    for p, spaces in enumerate(d["plates"]):
        occupied = [v is not None for v in spaces]
        if P == 1:  # solo: the four zones' umbrellas
            umbrellas = sum(len(s) for s in F.seat_zone_strings(d, 0))
        else:
            umbrellas = len(d["zones"]["personal"][p])
        out.append(F.score(P, sum(occupied), plate.bonus(occupied), umbrellas, cs.solo_tokens))
    return out


def _check_decision(d: Mapping[str, Any], cs: ComponentSet) -> None:
    """The phase must be the decision the position calls for, so a live game always has a move."""
    phase, seat = d["phase"], d["current_player"]
    if phase in ("slide", "fallback"):
        empty = not any(F.seat_zone_strings(d, seat))
        if phase == "slide" and empty:
            raise StateError(
                f"phase: seat {seat}'s four zones are empty, so the decision is 'fallback'"
                + (" (in solo the game is over)" if d["num_players"] == 1 else "")
                + ", not 'slide'"
            )
        if phase == "fallback" and not empty:
            raise StateError(f"phase: 'fallback' only when seat {seat}'s four zones are all empty")
    if phase == "validate":
        plate = cs.plates[d["plate_level"]]
        stage = "".join(d["stages"][seat])
        free = [s for s, v in enumerate(d["plates"][seat]) if v is None]
        for k, stack in enumerate(d["slots"][seat]):
            if not stack:
                continue
            top = stack[-1]
            cells = rotate_cells(cs.face_cells(top["tile"], FACES.index(top["face"])), k)
            colours = {stage[c] for c in cells}
            if len(colours) == 1:
                colour = COLOURS.index(colours.pop())
                if any(plate.accepts(s, colour, k) for s in free):
                    return
        raise StateError(f"phase: 'validate' but seat {seat} has no complete figure that a free plate space accepts")
