"""One scripted test per rule of docs/rules.md, run on every rules engine.

Each test builds a position from compact ASCII with :func:`make_state`, plays named
actions (``"slide B from top col3"``) through the ``engine`` fixture and asserts the
outcome.  Stages are written row by row, top row first, rows separated by ``/``::

    "BBBG/RGYR/GYRY/YRGB"      row 0 = B B B G, ..., row 3 = Y R G B

Slots are written per player as four stacks separated by ``|``, each stack bottom -> top,
tiles as ``<id><w|b>``: ``"3w 15b|4b||"`` = slot 0 holds tile 3 (white) under tile 15
(black), slot 1 tile 4 (black), slots 2 and 3 empty.  Plates are 10 characters, ``.``
free, a colour letter for a token.

Geometry used again and again (docs/rules.md §6, one step (r, c) -> (c, 3 - r)):
tile 15 white is row 0 from slot 0, column 3 from slot 1, row 3 from slot 2, column 0
from slot 3; tile 15 black is the four corners from every slot; tile 8 white is
column 1 / row 1 / column 2 / row 2; tile 10 white is the centre 2x2 from every slot.
"""

from __future__ import annotations

import random

import pytest

from tests.engines import ADAPTERS
from tests.test_engine import BLOCKY
from umbrella_env.core.actions import (
    ADJACENT_PAIRS,
    NUM_ACTIONS,
    SWAP_STAGE_PASS,
    SWAP_ZONE_PASS,
    string_to_action,
    swap_stage_action,
    swap_zone_action,
)
from umbrella_env.core.components import (
    COLOURS,
    NUM_TILES,
    components_from_dict,
    default_components,
    rotate_cells,
)
from umbrella_env.core.config import GameConfig
from umbrella_env.core.errors import ActionError, GameOverError, IllegalActionError

CS = default_components()
INITIAL_SUPPLY = {1: CS.solo_tokens, 2: CS.supply[2], 3: CS.supply[3], 4: CS.supply[4]}
SOLO_ZONES = ("left", "right", "top", "personal", "discard")
A = string_to_action


def row0_stage(c: str) -> str:
    """A stage where ``slide <c> from top col3`` makes row 0 all ``c`` (tile 15 white on slot
    0 then shows a complete figure) and no other line of one colour: ``ccc? / RGYR / GYRY / YRGB``
    becomes ``cccc / RGY? / GYRR / YRGY``, the bottom-right B ejected."""
    x = "G" if c == "B" else "B"
    return f"{c * 3}{x}/RGYR/GYRY/YRGB"


# --------------------------------------------------------------------------- state builder
def _tile(text: str) -> dict:
    return {"tile": int(text[:-1]), "face": {"w": "white", "b": "black"}[text[-1]]}


def make_state(
    num_players: int = 2,
    *,
    level: int = 1,
    stages: list[str] | None = None,
    zones: dict[str, str] | None = None,
    fill: str | None = None,
    slots: list[str] | None = None,
    pad: tuple[int, int] | None = None,
    plates: list[str] | None = None,
    current: int = 0,
    phase: str | None = None,
    turn: int | None = None,
    max_turns: int = 400,
    supply: int | None = None,
    reserve_used: int = 0,
    end_by: int | None = None,
    passing: str | None = None,
    extra_turn: bool = False,
    last_slide: tuple[str, str] | None = None,
) -> dict:
    """A valid state dict from compact ASCII (see the module doc).

    ``zones`` uses flat names: ``central``, ``side<i>``, ``personal<i>`` (solo: ``left``,
    ``right``, ``top``, ``personal``, ``discard``); unnamed zones are empty.  The umbrellas
    needed to reach the right count per colour go to ``fill`` (default: the central zone,
    solo: the discard).  At 2-4 players, the tiles needed to reach 4P tiles in play are
    slipped, white face up, under the stack ``pad`` (default: slot 0 of the last seat).
    The phase defaults to the turn's first decision: ``fallback`` when the current
    player's four zones are empty, else ``slide``.
    """
    P = num_players
    solo = P == 1
    rows = [
        (stages[p] if stages and p < len(stages) and stages[p] else "/".join(CS.layouts["ABCD"[p]])).split("/")
        for p in range(P)
    ]
    names = (
        list(SOLO_ZONES) if solo else ["central"] + [f"side{i}" for i in range(P)] + [f"personal{i}" for i in range(P)]
    )
    z = {name: "" for name in names}
    for name, text in (zones or {}).items():
        if name not in z:
            raise ValueError(f"unknown zone {name!r}; expected one of {names}")
        z[name] = text
    fill = fill or ("discard" if solo else "central")
    target = 9 if solo else 6 * P + 1
    for colour in COLOURS:
        have = sum("".join(r).count(colour) for r in rows) + sum(t.count(colour) for t in z.values())
        if have > target:
            raise ValueError(f"{have} umbrellas of {colour}, at most {target}")
        z[fill] += colour * (target - have)

    boards = [
        [[_tile(t) for t in stack.split()] for stack in (slots[p] if slots and p < len(slots) else "|||").split("|")]
        for p in range(P)
    ]
    assert all(len(b) == 4 for b in boards), "each player has 4 slots"
    used = {e["tile"] for b in boards for s in b for e in s} | ({_tile(passing)["tile"]} if passing else set())
    if not solo and len(used) < 4 * P:
        spare = [t for t in range(24) if t not in used][: 4 * P - len(used)]
        pp, pk = pad or (P - 1, 0)
        # A seat without tiles would have triggered the end (§5.1): it gets one spare on slot 3.
        for p in range(P):
            if end_by is None and p != pp and not any(boards[p]) and len(spare) > 1:
                boards[p][3] = [_tile(f"{spare.pop()}w")]
        boards[pp][pk][:0] = [_tile(f"{t}w") for t in spare]

    plate_rows = [
        [None if ch == "." else ch for ch in (plates[p] if plates and p < len(plates) else "." * 10)] for p in range(P)
    ]
    tokens = sum(s is not None for row in plate_rows for s in row)
    if supply is None:
        supply = INITIAL_SUPPLY[P] - tokens + reserve_used
    if solo:
        zone_dict: dict = dict(z)
    else:
        zone_dict = {
            "central": z["central"],
            "side": [z[f"side{i}"] for i in range(P)],
            "personal": [z[f"personal{i}"] for i in range(P)],
        }
    if phase is None:
        own = (
            [z["top"], z["personal"], z["left"], z["right"]]
            if solo
            else [z["central"], z[f"personal{current}"], z[f"side{current}"], z[f"side{(current - 1) % P}"]]
        )
        phase = "slide" if any(own) or solo else "fallback"
    if turn is None:  # the fewest turns that explain the position (docs/state.md checks it)
        mid = phase in ("swap_stage", "swap_zone", "give_face", "cover")
        if solo:
            returned = level == 4 and plate_rows[0][0] is not None and plate_rows[0][1] is not None
            turn = len(z["discard"]) + returned - (phase in ("validate", "swap_stage", "swap_zone", "cover"))
        else:
            turn = max(tokens - mid, 1 if current else 0)
    return {
        "num_players": P,
        "plate_level": level,
        "max_turns": max_turns,
        "current_player": current,
        "phase": phase,
        "turn": turn,
        "stages": rows,
        "zones": zone_dict,
        "slots": boards,
        "plates": plate_rows,
        "supply": supply,
        "reserve_used": reserve_used,
        "end_triggered_by": end_by,
        "passing": _tile(passing) if passing else None,
        "extra_turn": extra_turn,
        "last_slide": None if last_slide is None else {"side": last_slide[0], "colour": last_slide[1]},
        "terminated": False,
        "truncated": False,
    }


# --------------------------------------------------------------------------- helpers
def play(engine, game, *actions: str) -> dict:
    """Step named actions in order; return the state dict afterwards."""
    for text in actions:
        engine.step(game, A(text))
    return engine.dump(game)


def cover_position() -> dict:
    """The state dict of a 3-player game at a cover with a choice: seat 0 validated tile 15
    and passes it to seat 1, whose four slots are full; seat 1 decides on seat 0's turn."""
    engine = ADAPTERS["reference"]
    g = engine.load(
        make_state(
            3, stages=[row0_stage("B")], zones={"central": "B"}, fill="personal1", slots=["15w|||", "3w|4w|5w|6w"]
        )
    )
    d = play(engine, g, "slide B from top col3", "validate slot0 space0")
    assert (d["phase"], d["current_player"], engine.actor(g)) == ("cover", 0, 1)
    return d


def stage(d: dict, p: int = 0) -> str:
    return "/".join(d["stages"][p])


def zone(d: dict, name: str) -> str:
    """A zone of a state dict by flat name (``central``, ``side1``, ``personal0``, solo names)."""
    z = d["zones"]
    if d["num_players"] == 1 or name == "central":
        return z[name]
    kind = "side" if name.startswith("side") else "personal"
    return z[kind][int(name[len(kind) :])]


def stacks(d: dict, p: int) -> list[str]:
    """Player p's four stacks in the ASCII form of make_state."""
    return [" ".join(f"{e['tile']}{e['face'][0]}" for e in s) for s in d["slots"][p]]


def validates(slot: int, spaces: list[int]) -> list[int]:
    return sorted(A(f"validate slot{slot} space{s}") for s in spaces)


def complete_figures(d: dict, p: int, cs=CS) -> list[int]:
    """Slots of player p whose visible figure is complete (independent of the engines)."""
    cells = "".join(d["stages"][p])
    out = []
    for k, st in enumerate(d["slots"][p]):
        if st:
            face = 0 if st[-1]["face"] == "white" else 1
            figure = rotate_cells(cs.face_cells(st[-1]["tile"], face), k)
            if len({cells[x] for x in figure}) == 1:
                out.append(k)
    return out


# =========================================================================== §3 setup
@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_setup_multiplayer(engine, num_players):
    """docs/rules.md §3.1-§3.5: distinct layouts, one umbrella of each colour per zone, two
    stacks of 2 random-faced tiles, no complete figure (decision 9), supply, seat 0 first."""
    P = num_players
    faces_seen = set()
    for seed in range(20):
        d = engine.dump(engine.new(GameConfig(num_players=P), seed))
        # §3.1: each stage is a printed layout, all different.
        layouts = {"/".join(rows) for rows in CS.layouts.values()}
        assert all(stage(d, p) in layouts for p in range(P))
        assert len({stage(d, p) for p in range(P)}) == P
        # §3.2: every zone starts with one umbrella of each colour.
        assert d["zones"] == {"central": "BGRY", "side": ["BGRY"] * P, "personal": ["BGRY"] * P}
        # §3.3: 4 distinct tiles per player as two stacks of 2 on slots 0 and 1.
        assert all([len(s) for s in d["slots"][p]] == [2, 2, 0, 0] for p in range(P))
        tiles = [e["tile"] for b in d["slots"] for s in b for e in s]
        assert len(set(tiles)) == 4 * P
        assert all(complete_figures(d, p) == [] for p in range(P))
        # §3.4-5 (the config gives no plate level: the default, 1)
        assert d["plate_level"] == 1 and GameConfig().plate_level == 1
        assert d["supply"] == INITIAL_SUPPLY[P] and d["reserve_used"] == 0
        assert d["plates"] == [[None] * 10] * P
        assert (d["current_player"], d["phase"], d["turn"]) == (0, "slide", 0)
        assert d["end_triggered_by"] is None and d["passing"] is None and d["last_slide"] is None
        assert not d["terminated"] and not d["truncated"] and not d["extra_turn"]
        assert d["scores"] == [-4] * P  # no token, 4 umbrellas in each personal zone
        faces_seen |= {e["face"] for b in d["slots"] for s in b for e in s}
    assert faces_seen == {"white", "black"}  # random faces


def test_setup_solo(engine):
    """docs/rules.md §8.1: one layout (decision 10), 5 umbrellas per zone, two stacks of 3 black
    tiles, no complete figure, 6 tokens."""
    faces_seen = set()
    for seed in range(20):
        d = engine.dump(engine.new(GameConfig(num_players=1), seed))
        assert stage(d, 0) in {"/".join(rows) for rows in CS.layouts.values()}
        # §8: 20 umbrellas, 5 per colour, 5 in each of the four zones, empty discard.
        assert [len(d["zones"][z]) for z in ("left", "right", "top", "personal")] == [5, 5, 5, 5]
        assert d["zones"]["discard"] == ""
        letters = "".join(d["zones"][z] for z in ("left", "right", "top", "personal"))
        assert all(letters.count(c) == 5 for c in COLOURS)
        # 6 tiles, black face up, 2 stacks of 3.
        assert [len(s) for s in d["slots"][0]] == [3, 3, 0, 0]
        faces_seen |= {e["face"] for s in d["slots"][0] for e in s}
        assert len({e["tile"] for s in d["slots"][0] for e in s}) == 6
        assert complete_figures(d, 0) == []
        assert d["supply"] == 6 and d["phase"] == "slide" and d["end_triggered_by"] is None
    assert faces_seen == {"black"}


@pytest.mark.parametrize("num_players", [1, 2, 4])
def test_setup_tiles_faces_and_solo_umbrellas_are_dealt_at_random(engine, num_players):
    """docs/rules.md §3.3 (each player gets 4 random tiles, each with a random face up) and
    §8.1 (the 20 solo umbrellas shuffled, then dealt 5 to each zone): over 80 seeds every
    tile reaches seat 0, its tile sets differ, a seat's faces are drawn tile by tile, and a
    solo zone holds mixed colours.  A deal of tiles 0-3 to seat 0 and 4-7 to seat 1, one
    face for a seat's four tiles, and unshuffled solo zones (BBBBB, GGGGG, ...) each passed
    every rule test (rules audit, 2026-12-07)."""
    cfg = GameConfig(num_players=num_players)
    deals = [engine.dump(engine.new(cfg, seed)) for seed in range(80)]
    held = [[e for s in d["slots"][0] for e in s] for d in deals]
    assert {e["tile"] for h in held for e in h} == set(range(NUM_TILES))
    assert len({frozenset(e["tile"] for e in h) for h in held}) > 70
    if num_players == 1:
        zones = [d["zones"][z] for d in deals for z in ("left", "right", "top", "personal")]
        assert sum(len(set(z)) > 1 for z in zones) > 0.9 * len(zones) and len(set(zones)) > 30  # of 56 multisets
    else:  # faces one by one: a seat's four tiles show both faces in 7 deals of 8
        mixed = [len({e["face"] for s in d["slots"][p] for e in s}) == 2 for d in deals for p in range(num_players)]
        assert sum(mixed) > 0.6 * len(mixed)


@pytest.mark.parametrize("num_players", [1, 2])
def test_setup_layouts_are_drawn_at_random(engine, num_players):
    """docs/rules.md §3.1 (the layouts assigned at random) and decision 10 (solo: one layout,
    chosen at random): over 40 seeds every layout is dealt to seat 0, and at 2 players the
    pairs differ."""
    cfg = GameConfig(num_players=num_players)
    deals = [tuple(stage(engine.dump(engine.new(cfg, seed)), p) for p in range(num_players)) for seed in range(40)]
    assert {d[0] for d in deals} == {"/".join(rows) for rows in CS.layouts.values()}
    if num_players > 1:
        assert len(set(deals)) > len(CS.layouts)


@pytest.mark.parametrize("num_players", [1, 4])
def test_setup_picks_among_more_than_four_layouts(engine, num_players):
    """docs/rules.md §6.2: a component set may hold more than four layouts, and setup picks
    among all of them (a fifth, E, is dealt too)."""
    fifth = {"E": ["BGRB", "GYYR", "RYYG", "BGRB"]}
    cs = components_from_dict({"layouts": {**{k: list(v) for k, v in CS.layouts.items()}, **fifth}})
    cfg = GameConfig(num_players=num_players, components=cs)
    dealt = {stage(engine.dump(engine.new(cfg, seed)), p) for seed in range(40) for p in range(num_players)}
    assert dealt == {"/".join(rows) for rows in cs.layouts.values()} and "/".join(fifth["E"]) in dealt


@pytest.mark.parametrize("num_players", [1, 2])
def test_setup_redraw_leaves_no_complete_figure(engine, num_players):
    """docs/rules.md §3.3, decision 9: a player whose setup shows a complete figure redraws,
    on every engine (with test_engine's layouts, where complete setups are common)."""
    cfg = GameConfig(num_players=num_players, components=BLOCKY)
    per = 3 if num_players == 1 else 2
    for seed in range(150):
        d = engine.dump(engine.new(cfg, seed))
        for p in range(num_players):
            assert complete_figures(d, p, BLOCKY) == [], (seed, p)
            assert [len(s) for s in d["slots"][p]] == [per, per, 0, 0]
        tiles = [e["tile"] for b in d["slots"] for s in b for e in s]
        assert len(set(tiles)) == len(tiles)


def _seeded_random_game(engine, cfg: GameConfig, seed: int):
    """A game of seeded uniformly random legal actions, played to its end (the same game on
    every engine and for every turn limit it reaches)."""
    rng = random.Random(seed)
    g = engine.new(cfg, seed)
    while engine.legal(g):
        engine.step(g, rng.choice(engine.legal(g)))
    return engine.dump(g)


@pytest.mark.parametrize("num_players", [1, 2])
def test_a_game_that_ends_on_its_limit_turn_is_terminated(engine, num_players):
    """docs/rules.md §5.4, decision 12: only a limit turn that does not end the game by the
    rules truncates it; the same game with the limit one turn earlier is truncated."""
    free = _seeded_random_game(engine, GameConfig(num_players=num_players), 3)
    assert free["terminated"] and not free["truncated"]
    last = free["turn"]
    on_limit = _seeded_random_game(engine, GameConfig(num_players=num_players, max_turns=last), 3)
    assert on_limit["terminated"] and not on_limit["truncated"] and on_limit["turn"] == last
    assert on_limit["scores"] == free["scores"]
    early = _seeded_random_game(engine, GameConfig(num_players=num_players, max_turns=last - 1), 3)
    assert early["truncated"] and not early["terminated"] and early["turn"] == last - 1


def test_scores_exist_at_every_moment(engine):
    """docs/rules.md decision 14: a score (the end-of-game formula applied now) can be read
    after every decision, it is the one the state dict reports, and another engine loading
    that position (without its scores) computes the same."""
    other = ADAPTERS["batched" if engine is ADAPTERS["reference"] else "reference"]
    g = engine.new(GameConfig(num_players=2), 5)
    seen = 0
    while engine.legal(g) and seen < 200:
        scores = engine.scores(g)
        d = engine.dump(g)
        assert len(scores) == 2 and scores == d["scores"]
        d.pop("scores")
        assert other.scores(other.load(d)) == scores
        engine.step(g, engine.legal(g)[-1])
        seen += 1
    assert seen == 200 or engine.dump(g)["terminated"]


def test_setup_is_deterministic_by_seed(engine):
    """docs/rules.md §3: a setup is reproducible from its seed, and seeds differ."""
    cfg = GameConfig(num_players=3)
    assert engine.dump(engine.new(cfg, 7)) == engine.dump(engine.new(cfg, 7))
    assert len({str(engine.dump(engine.new(cfg, s))["slots"]) for s in range(5)}) > 1


# =========================================================================== §4.1 slide
# Player 0 of 3, layout A "BGRY/RYBG/GBYR/YRGB", pushes G into line 1 from each side.
SLIDES = {
    # side: (action, stage after, zone taken from, zone receiving the ejected umbrella, ejected)
    "top": ("slide G from top col1", "BGRY/RGBG/GYYR/YBGB", "central", "personal0", "R"),
    "bottom": ("slide G from bottom col1", "BYRY/RBBG/GRYR/YGGB", "personal0", "central", "G"),
    "left": ("slide G from left row1", "BGRY/GRYB/GBYR/YRGB", "side0", "side2", "G"),
    "right": ("slide G from right row1", "BGRY/YBGG/GBYR/YRGB", "side2", "side0", "R"),
}


@pytest.mark.parametrize("side", list(SLIDES))
def test_slide_from_each_side_ejects_to_opposite_zone(engine, side):
    """docs/rules.md §4.1: the pushed-in line shifts and the far umbrella lands in the opposite
    zone."""
    action, after, source, target, ejected = SLIDES[side]
    own = {"central": "G", "side0": "G", "side2": "G", "personal0": "G"}
    g = engine.load(make_state(3, zones=own, fill="personal1", slots=["15w|||"]))
    d = play(engine, g, action)
    assert stage(d, 0) == after
    assert zone(d, source) == ""
    assert zone(d, target) == "".join(sorted("G" + ejected, key=COLOURS.index))
    # every other zone of player 0 is untouched
    for name in own:
        if name not in (source, target):
            assert zone(d, name) == "G"
    assert (d["current_player"], d["phase"], d["turn"]) == (1, "slide", 1)


def test_slide_two_players_side_zones(engine):
    """docs/rules.md §2, §4.1: at 2 players seat 1's left zone is side zone 1, its right side
    zone 0."""
    # §2 at 2 players: seat 1's left zone is side zone 1, its right zone side zone 0.
    g = engine.load(
        make_state(2, current=1, zones={"side0": "R", "side1": "Y"}, fill="personal0", slots=["|||", "15w|||"])
    )
    d = play(engine, g, "slide Y from left row0")  # layout B row 0 RBGY -> YRBG, Y ejected to the right zone
    assert stage(d, 1).split("/")[0] == "YRBG"
    assert (zone(d, "side1"), zone(d, "side0")) == ("", "RY")
    g = engine.load(
        make_state(2, current=1, zones={"side0": "R", "side1": "Y"}, fill="personal0", slots=["|||", "15w|||"])
    )
    d = play(engine, g, "slide R from right row0")  # RBGY -> BGYR, R ejected to the left zone
    assert stage(d, 1).split("/")[0] == "BGYR"
    assert (zone(d, "side0"), zone(d, "side1")) == ("", "RY")


def test_slide_legal_set_is_own_nonempty_zone_colours(engine):
    """docs/rules.md §4.1: any colour present in one of the mover's four zones, into any of the
    side's lines."""
    g = engine.load(
        make_state(3, zones={"central": "BB", "side0": "", "side2": "Y", "personal0": "RG"}, fill="personal1")
    )
    expected = sorted(
        A(f"slide {c} from {side} {'col' if side in ('top', 'bottom') else 'row'}{line}")
        for side, colours in (("top", "B"), ("bottom", "GR"), ("right", "Y"))
        for c in colours
        for line in range(4)
    )
    assert engine.legal(g) == expected


def test_empty_zone_cannot_be_taken_from(engine):
    """docs/rules.md §4.1: an empty zone, or a colour a zone lacks, cannot be taken."""
    g = engine.load(
        make_state(3, zones={"central": "B", "side0": "", "side2": "Y", "personal0": "R"}, fill="personal1")
    )
    for text in (
        "slide G from left row0",
        "slide B from left row0",
        "slide G from top col0",
        "slide Y from bottom col2",
    ):
        with pytest.raises(IllegalActionError):
            engine.step(g, A(text))
    assert engine.dump(g)["phase"] == "slide"


def test_fallback_when_all_four_own_zones_are_empty(engine):
    """docs/rules.md §4.1 (fallback slide): any zone of the game, any side and line."""
    # 2 players: seat 1 takes the last umbrella of the central zone; seat 0's four zones
    # (central, side 0, side 1, personal 0) are now empty, so seat 0 takes the fallback.
    g = engine.load(make_state(2, current=1, zones={"central": "B"}, fill="personal1", slots=["15w|||"]))
    d = play(engine, g, "slide B from top col0")
    assert (d["current_player"], d["phase"]) == (0, "fallback")
    personal1 = zone(d, "personal1")
    expected = sorted(
        A(f"fallback {c} of personal+1 from {side} {'col' if side in ('top', 'bottom') else 'row'}{line}")
        for c in set(personal1)
        for side in ("top", "bottom", "left", "right")
        for line in range(4)
    )
    assert engine.legal(g) == expected
    colour = personal1[0]
    before = stage(d, 0).split("/")
    d = play(engine, g, f"fallback {colour} of personal+1 from left row2")
    # pushed in from the left: row 2 shifts right, the ejected umbrella goes to seat 0's right zone (side 1)
    assert stage(d, 0).split("/")[2] == colour + before[2][:3]
    assert zone(d, "side1") == before[2][3]
    assert len(zone(d, "personal1")) == len(personal1) - 1
    assert (d["current_player"], d["phase"]) == (1, "slide")


@pytest.mark.parametrize("seat", [0, 1])
def test_fallback_zones_are_egocentric(engine, seat):
    """docs/rules.md §4.1 (fallback slide): source zones numbered from the mover; ejection to
    the mover's opposite zone."""
    # 3 players; the seat's own zones (central, side[seat], side[seat-1], personal[seat]) are
    # empty.  Numbered from the seat: side+1 = side[seat+1], personal+k = personal[seat+k].
    P = 3
    zones = {f"side{(seat + 1) % P}": "G", f"personal{(seat + 1) % P}": "R"}
    fill = f"personal{(seat + 2) % P}"
    g = engine.load(
        make_state(P, current=seat, phase="fallback", zones=zones, fill=fill, slots=["15w|||", "3w|||", "4w|||"])
    )
    d = engine.dump(g)
    expected = sorted(
        A(f"fallback {c} of {name} from {side} {'col' if side in ('top', 'bottom') else 'row'}{line}")
        for name, colours in (("side+1", "G"), ("personal+1", "R"), ("personal+2", set(zone(d, fill))))
        for c in colours
        for side in ("top", "bottom", "left", "right")
        for line in range(4)
    )
    assert engine.legal(g) == expected
    row0 = d["stages"][seat][0]
    d = play(engine, g, "fallback G of side+1 from right row0")  # enters col 3, col 0 ejected to the LEFT zone
    assert d["stages"][seat][0] == row0[1:] + "G"
    assert zone(d, f"side{seat}") == row0[0]
    assert zone(d, f"side{(seat + 1) % P}") == ""


# =========================================================================== §4.2 / §6 figures
# After the slide, the line that tile 15 (white) shows from slot k is all blue.
ROTATION_CASES = {
    0: ("BBBG/RGYR/GYRY/YRGB", "slide B from top col3"),  # row 0
    1: ("RGYG/GRYB/YGRB/RYGB", "slide B from right row0"),  # column 3
    2: ("RGYR/YRGY/GYRG/GBBB", "slide B from bottom col0"),  # row 3
    3: ("BGRY/BRYG/BYGR/GRYG", "slide B from left row3"),  # column 0
}


@pytest.mark.parametrize("complete_slot", [0, 1, 2, 3])
def test_complete_figure_uses_slot_rotation(engine, complete_slot):
    """docs/rules.md §4.2, §6: a figure is read rotated by its slot."""
    rows, action = ROTATION_CASES[complete_slot]
    own = {"central": "B", "side0": "B", "side1": "B", "personal0": "B"}
    for slot in range(4):
        board = ["15w" if k == slot else "" for k in range(4)]
        g = engine.load(make_state(2, stages=[rows], zones=own, fill="personal1", slots=["|".join(board)]))
        d = play(engine, g, action)
        if slot == complete_slot:
            assert d["phase"] == "validate" and d["current_player"] == 0
            assert engine.legal(g) == validates(slot, [0, 4, 7])  # the blue spaces of level 1
        else:
            assert (d["phase"], d["current_player"]) == ("slide", 1), f"tile on slot {slot}"


def test_must_validate_when_a_figure_is_scorable(engine):
    """docs/rules.md §4.2: validating a scorable figure is compulsory (decision 1: no skip);
    with no power to resolve, the tile leaves its slot at once (decision 2)."""
    g = engine.load(
        make_state(
            2,
            stages=[row0_stage("B")],
            zones={"central": "B"},
            fill="personal1",
            slots=["15w|||"],
            plates=["B........."],
        )
    )
    d = play(engine, g, "slide B from top col3")
    assert d["phase"] == "validate"
    assert engine.legal(g) == validates(0, [4, 7])  # space 0 is taken; no way to skip
    for text in ("slide B from top col0", "give white", "validate slot0 space0", "validate slot0 space1"):
        with pytest.raises(IllegalActionError):
            engine.step(g, A(text))
    d = play(engine, g, "validate slot0 space7")
    assert d["plates"][0][7] == "B" and d["supply"] == INITIAL_SUPPLY[2] - 2
    assert d["slots"][0][0] == [] and d["passing"] == {"tile": 15, "face": "white"}


def test_turn_ends_after_slide_when_nothing_is_scorable(engine):
    """docs/rules.md §4.2: a complete figure no free space accepts is not validated; the turn
    ends with the slide."""
    # The blue figure is complete but all blue spaces (0, 4, 7) are taken.
    g = engine.load(
        make_state(
            2,
            stages=[row0_stage("B")],
            zones={"central": "B"},
            fill="personal1",
            slots=["15w|||"],
            plates=["B...B..B.."],
        )
    )
    t0 = engine.dump(g)["turn"]  # turns before this position (make_state counts them)
    d = play(engine, g, "slide B from top col3")
    assert stage(d, 0).startswith("BBBB")
    assert (d["phase"], d["current_player"], d["turn"] - t0) == ("slide", 1, 1)
    assert d["slots"][0][0] == [{"tile": 15, "face": "white"}]


def test_only_one_figure_per_turn(engine):
    """docs/rules.md §4.2: one validation per turn; the other figure waits for the next own
    slide."""
    # Blue row 0 (tile 15w, slot 0) and green row 1 (tile 8w, slot 1) both complete.
    rows = "BBBG/GGGR/RYRY/YRYB"
    g = engine.load(
        make_state(2, stages=[rows], zones={"central": "B", "side0": "R"}, fill="personal1", slots=["15w|8w||"])
    )
    d = play(engine, g, "slide B from top col3")
    assert stage(d, 0) == "BBBB/GGGG/RYRR/YRYY"
    assert engine.legal(g) == sorted(validates(0, [0, 4, 7]) + validates(1, [1, 5, 9]))
    play(engine, g, "validate slot0 space0")
    assert engine.legal(g) == [A("give white"), A("give black")]  # no second validation
    d = play(engine, g, "give white")
    assert complete_figures(d, 0) == [1]  # still complete, but the turn is over
    assert (d["phase"], d["current_player"]) == ("slide", 1)
    # After seat 1's turn and seat 0's next own slide, the green figure can be validated.
    d = play(engine, g, f"slide {zone(d, 'personal1')[0]} from bottom col0")
    assert d["current_player"] == 0
    d = play(engine, g, "slide R from left row3")
    assert d["phase"] == "validate"
    assert engine.legal(g) == validates(1, [1, 5, 9])


def test_revealed_figure_waits_for_next_own_slide(engine):
    """docs/rules.md §4.2 (decision 3): a figure revealed under the validated tile waits for the
    next own slide."""
    # Tile 15w (row 0) on top of tile 10w (centre 2x2, all yellow) on slot 0.
    rows = "BBBG/RYYR/GYYR/RGRB"
    g = engine.load(
        make_state(2, stages=[rows], zones={"central": "B", "side0": "R"}, fill="personal1", slots=["10w 15w|||"])
    )
    d = play(engine, g, "slide B from top col3", "validate slot0 space0")
    assert d["slots"][0][0] == [{"tile": 10, "face": "white"}]
    assert complete_figures(d, 0) == [0]
    d = play(engine, g, "give white")
    assert (d["phase"], d["current_player"]) == ("slide", 1)  # revealed: not validated now
    d = play(engine, g, f"slide {zone(d, 'personal1')[0]} from bottom col0")
    assert d["current_player"] == 0
    d = play(engine, g, "slide R from left row0")
    assert d["phase"] == "validate"
    assert engine.legal(g) == validates(0, [3, 6])  # yellow spaces


def test_received_figure_waits_for_receivers_slide(engine):
    """docs/rules.md §4.2 (decision 3), §4.3: a received complete figure waits for the
    receiver's slide."""
    # 3 players: seat 1 receives tile 15 flipped to black (the four corners, all red on its stage).
    stages = [row0_stage("B"), "RGBR/YBGY/GYBG/RBYR"]
    g = engine.load(
        make_state(3, stages=stages, zones={"central": "B", "side1": "B"}, fill="personal2", slots=["15w|||", "3w|||"])
    )
    d = play(engine, g, "slide B from top col3", "validate slot0 space0")
    assert stacks(d, 1)[:2] == ["3w", "15b"]
    assert complete_figures(d, 1) == [1]
    assert (d["phase"], d["current_player"]) == ("slide", 1)
    d = play(engine, g, "slide B from left row1")  # corners untouched
    assert d["phase"] == "validate"
    assert engine.legal(g) == validates(1, [2, 8])  # red spaces


# =========================================================================== §4.3 pass
@pytest.mark.parametrize(("num_players", "current"), [(3, 0), (4, 0), (3, 2), (4, 3)])
def test_pass_flips_tile_to_first_empty_slot_of_left_player(engine, num_players, current):
    """docs/rules.md §4.3: at 3-4 players the tile goes flipped to the left player's first empty
    slot; the last seat's left player is seat 0."""
    left = (current + 1) % num_players
    stages, slots = [""] * num_players, ["|||"] * num_players
    stages[current], slots[current], slots[left] = row0_stage("B"), "4w 15w|||", "3w||5b|"
    g = engine.load(
        make_state(
            num_players,
            stages=stages,
            zones={"central": "B"},
            fill=f"personal{left}",
            slots=slots,
            pad=((current + 2) % num_players, 0),
            current=current,
        )
    )
    d = play(engine, g, "slide B from top col3", "validate slot0 space0")
    assert stacks(d, current) == ["4w", "", "", ""]  # the tile below is revealed
    assert stacks(d, left) == ["3w", "15b", "5b", ""]  # first empty slot, other face
    assert (d["phase"], d["current_player"], d["passing"]) == ("slide", left, None)


@pytest.mark.parametrize("face", ["white", "black"])
def test_two_player_giver_chooses_face(engine, face):
    """docs/rules.md §4.3: at 2 players the giver chooses the face the receiver sees."""
    g = engine.load(
        make_state(2, stages=[row0_stage("B")], zones={"central": "B"}, fill="personal1", slots=["15w|||", "3w|||"])
    )
    d = play(engine, g, "slide B from top col3", "validate slot0 space0")
    assert d["phase"] == "give_face"
    assert d["passing"] == {"tile": 15, "face": "white"}  # the face it was validated with
    assert engine.actor(g) == 0
    assert engine.legal(g) == [A("give white"), A("give black")]
    d = play(engine, g, f"give {face}")
    assert d["slots"][1][1] == [{"tile": 15, "face": face}]
    assert (d["phase"], d["current_player"], d["passing"]) == ("slide", 1, None)


def test_receiver_chooses_the_slot_to_cover(engine):
    """docs/rules.md §4.3, §9: with no empty slot the receiver chooses which stack to cover."""
    g = engine.load(
        make_state(
            3, stages=[row0_stage("B")], zones={"central": "B"}, fill="personal1", slots=["15w|||", "3w|4w|5w|6w"]
        )
    )
    d = play(engine, g, "slide B from top col3", "validate slot0 space0")
    assert d["phase"] == "cover"
    assert d["current_player"] == 0 and engine.actor(g) == 1
    assert d["passing"] == {"tile": 15, "face": "black"}
    assert engine.legal(g) == [A(f"cover slot{k}") for k in range(4)]
    with pytest.raises(IllegalActionError):
        engine.step(g, A("slide B from top col0"))
    d = play(engine, g, "cover slot2")
    assert stacks(d, 1) == ["3w", "4w", "5w 15b", "6w"]
    assert (d["phase"], d["current_player"], d["turn"], d["passing"]) == ("slide", 1, 1, None)


# =========================================================================== §5 end of the game
def _last_supply_token_position(engine, seat1_slots: str):
    """3 players, one token left in the supply, which seat 0 places on space 4 with row 0
    after ``slide B from top col3``; seat 1's slots are ``seat1_slots``."""
    return engine.load(
        make_state(
            3,
            stages=[row0_stage("B")],
            zones={"central": "B", "side1": "BB", "side2": "GG"},
            fill="personal0",
            slots=["15w|||", seat1_slots],
            plates=["BGRY.G....", "BGRYBG....", "BGRYB....."],
        )
    )


def test_end_trigger_last_supply_token_and_final_round(engine):
    """docs/rules.md §5.1 (decision 7): the last supply token triggers the end; the others play
    once more."""
    # 3 players, one token left in the supply.  Seat 0 places it: seats 1 and 2 play one
    # last turn each, seat 0 plays no more.
    g = _last_supply_token_position(engine, "3w|4w||")
    t0 = engine.dump(g)["turn"]  # turns before this position (make_state counts them)
    assert engine.dump(g)["supply"] == 1
    d = play(engine, g, "slide B from top col3", "validate slot0 space4")
    assert (d["supply"], d["end_triggered_by"], d["current_player"], d["phase"]) == (0, 0, 1, "slide")
    d = play(engine, g, "slide B from left row1")
    assert (d["current_player"], d["phase"], d["terminated"]) == (2, "slide", False)
    d = play(engine, g, "slide G from left row1")
    assert d["terminated"] and not d["truncated"]
    assert (d["phase"], d["current_player"], d["turn"] - t0) == ("game_over", 2, 3)
    assert engine.legal(g) == []


def test_end_check_follows_the_pass_and_the_cover(engine):
    """docs/rules.md decision 7: the end check comes after the pass and any cover: the last
    supply token's pass waits for the receiver's cover, then the final round begins with
    the left neighbour, and the trigger player plays no more."""
    g = _last_supply_token_position(engine, "3w|4w|5w|6w")  # seat 1 has no empty slot
    t0 = engine.dump(g)["turn"]
    d = play(engine, g, "slide B from top col3", "validate slot0 space4")
    assert (d["phase"], d["current_player"], engine.actor(g), d["supply"]) == ("cover", 0, 1, 0)
    assert not d["terminated"] and d["turn"] - t0 == 0  # the turn is not over before the cover
    d = play(engine, g, "cover slot3")
    assert (d["end_triggered_by"], d["current_player"], d["phase"], d["turn"] - t0) == (0, 1, "slide", 1)
    assert stacks(d, 1)[3] == "6w 15b"
    d = play(engine, g, "slide B from left row1")
    assert (d["current_player"], d["terminated"]) == (2, False)
    d = play(engine, g, "slide G from left row1")
    assert d["terminated"] and (d["phase"], d["turn"] - t0) == ("game_over", 3)


def test_final_round_tokens_come_from_the_reserve(engine):
    """docs/rules.md §5.1 (decision 8): final-round tokens come from the reserve."""
    plates = ["BGRYBG....", "BGRY.G...."]
    g = engine.load(
        make_state(
            2,
            current=1,
            end_by=0,
            stages=["", row0_stage("B")],
            zones={"central": "B"},
            fill="personal0",
            slots=["3w|||", "15w|||"],
            plates=plates,
        )
    )
    assert engine.dump(g)["supply"] == 0
    d = play(engine, g, "slide B from top col3", "validate slot0 space4")
    assert (d["supply"], d["reserve_used"], d["plates"][1][4]) == (0, 1, "B")
    d = play(engine, g, "give white")
    assert d["terminated"] and d["phase"] == "game_over" and d["current_player"] == 1


def test_final_round_tokens_come_from_the_supply_while_it_has_one(engine):
    """docs/rules.md §5.1 (decision 8): the reserve is used only once the supply is empty; an
    end triggered otherwise (here: seat 0 has no tile left) keeps taking from the supply."""
    g = engine.load(
        make_state(
            2,
            current=1,
            end_by=0,
            stages=["", row0_stage("B")],
            zones={"central": "B"},
            fill="personal0",
            slots=["|||", "15w|4w||"],
        )
    )
    assert engine.dump(g)["supply"] == INITIAL_SUPPLY[2]
    d = play(engine, g, "slide B from top col3", "validate slot0 space0")
    assert (d["supply"], d["reserve_used"], d["plates"][1][0]) == (INITIAL_SUPPLY[2] - 1, 0, "B")
    d = play(engine, g, "give white")
    assert d["terminated"] and (d["phase"], d["current_player"]) == ("game_over", 1)


def test_final_round_wraps_round_the_table_from_the_triggering_seat(engine):
    """docs/rules.md §5.1 (decision 7): the final round starts with the left neighbour of the
    triggering player and goes round the table in seat order up to it."""
    # 3 players, one token left in the supply; seat 2 places it: seats 0 then 1 play once.
    plates = ["BGRYBG....", "BGRYB.....", "BGRY.G...."]
    g = engine.load(
        make_state(
            3,
            current=2,
            stages=["", "", row0_stage("B")],
            zones={"central": "B", "side0": "BB", "side1": "GG"},
            fill="personal2",
            slots=["3w|||", "4w|||", "15w|5w||"],
            plates=plates,
        )
    )
    t0 = engine.dump(g)["turn"]
    assert engine.dump(g)["supply"] == 1
    d = play(engine, g, "slide B from top col3", "validate slot0 space4")
    assert (d["supply"], d["end_triggered_by"], d["current_player"], d["phase"]) == (0, 2, 0, "slide")
    d = play(engine, g, "slide B from left row1")
    assert (d["current_player"], d["phase"], d["terminated"]) == (1, "slide", False)
    d = play(engine, g, "slide G from left row1")
    assert d["terminated"] and not d["truncated"]
    assert (d["phase"], d["current_player"], d["turn"] - t0) == ("game_over", 1, 3)


def test_end_trigger_no_tile_left(engine):
    """docs/rules.md §5.1: a player without figure tile triggers the end."""
    g = engine.load(make_state(2, stages=[row0_stage("B")], zones={"central": "B"}, fill="personal1", slots=["15w|||"]))
    d = play(engine, g, "slide B from top col3", "validate slot0 space0", "give white")
    assert stacks(d, 0) == ["", "", "", ""]
    assert (d["end_triggered_by"], d["current_player"], d["terminated"]) == (0, 1, False)
    assert d["supply"] == INITIAL_SUPPLY[2] - 1
    d = play(engine, g, f"slide {zone(d, 'personal1')[0]} from bottom col0")
    assert d["terminated"] and (d["phase"], d["current_player"]) == ("game_over", 1)


def test_end_trigger_tenth_token(engine):
    """docs/rules.md §5.1: a player's 10th token triggers the end."""
    g = engine.load(
        make_state(
            2,
            stages=[row0_stage("B")],
            zones={"central": "B"},
            fill="personal1",
            slots=["15w|3w||"],
            plates=[".GRYBGYBRG"],
        )
    )
    d = play(engine, g, "slide B from top col3", "validate slot0 space0", "give white")
    assert all(s is not None for s in d["plates"][0])
    assert (d["supply"], d["end_triggered_by"], d["current_player"]) == (1, 0, 1)


def test_no_end_trigger_without_a_condition(engine):
    """docs/rules.md §5.1: without an end condition the game goes on."""
    g = engine.load(
        make_state(2, stages=[row0_stage("B")], zones={"central": "B"}, fill="personal1", slots=["15w|3w||"])
    )
    d = play(engine, g, "slide B from top col3", "validate slot0 space0", "give white")
    assert d["end_triggered_by"] is None and d["current_player"] == 1


# =========================================================================== §5 scoring
@pytest.mark.parametrize("personal, expected", [("", 2 + 2), ("R", 2 - 1), ("BGGY", 2 - 4)])
def test_score_personal_zone_bonus_or_penalty(engine, personal, expected):
    """docs/rules.md §5.2: -1 per personal-zone umbrella, +2 for an empty personal zone."""
    g = engine.load(make_state(2, zones={"personal0": personal}, fill="personal1", plates=["B........."]))
    assert engine.scores(g)[0] == expected
    assert engine.dump(g)["scores"][0] == expected


def test_rulebook_19_point_example(engine):
    """docs/rules.md §5.2: the rulebook's example scores 19."""
    # Level 1: 6 tokens, groups {0,5} (+3) and {1,2,6} (+5) complete, 1 umbrella in the
    # personal zone: 12 + 3 + 5 - 1 = 19.
    g = engine.load(make_state(2, zones={"personal0": "Y"}, fill="personal1", plates=["BGRY.GY..."]))
    assert engine.scores(g)[0] == 19


def test_level1_group_bonus_only_when_group_full(engine):
    """docs/rules.md §7.3: a fixed group pays only when all its spaces hold tokens."""
    g = engine.load(make_state(2, zones={"personal0": "Y"}, fill="personal1", plates=["B..YB..BR."]))
    assert engine.scores(g)[0] == 2 * 5 - 1  # {3,4,7,8,9} lacks space 9, {0,5} lacks 5
    g = engine.load(make_state(2, zones={"personal0": "Y"}, fill="personal1", plates=["B..YB..BRG"]))
    assert engine.scores(g)[0] == 2 * 6 - 1 + 8


def test_ranks_tie_break_and_shared_victory(engine):
    """docs/rules.md §5.3 (decision 13): ties broken by fewer personal umbrellas, else
    shared."""
    # seat 0: 2 tokens, empty personal zone = 6; seat 1: 4 tokens, 2 umbrellas = 6; seat 2: 1 token = 4
    g = engine.load(
        make_state(3, zones={"personal1": "BG"}, fill="side0", plates=["BG........", ".G.YB..B..", "B........."])
    )
    assert engine.scores(g) == [6, 6, 4]
    assert engine.ranks(g) == [0, 1, 2]
    # equal scores and equal personal zones: shared victory
    g = engine.load(make_state(2, zones={"personal0": "R", "personal1": "G"}, plates=["BG........", ".G.Y......"]))
    assert engine.scores(g) == [3, 3]
    assert engine.ranks(g) == [0, 0]


def test_turn_limit_truncates_not_terminates(engine):
    """docs/rules.md §5.4 (decision 12): reaching max_turns truncates the game."""
    g = engine.load(make_state(2, turn=4, max_turns=5, zones={"central": "B"}, fill="personal1", slots=["15w|||"]))
    d = play(engine, g, "slide B from top col0")
    assert d["truncated"] and not d["terminated"]
    assert (d["phase"], d["current_player"], d["turn"]) == ("game_over", 0, 5)
    assert engine.legal(g) == [] and len(engine.scores(g)) == 2
    with pytest.raises(GameOverError):
        engine.step(g, A("slide B from top col0"))


def test_turn_limit_truncates_solo_games_too(engine):
    """docs/rules.md §5.4 (decision 12): the turn limit applies to solo games as well."""
    t0 = make_state(1, zones={"top": "GG"}, slots=["15w|4b||"])["turn"]
    g = engine.load(make_state(1, zones={"top": "GG"}, slots=["15w|4b||"], max_turns=t0 + 1))
    d = play(engine, g, "slide G from top col1")
    assert d["truncated"] and not d["terminated"]
    assert (d["phase"], d["turn"]) == ("game_over", t0 + 1)
    assert engine.legal(g) == [] and len(engine.scores(g)) == 1


@pytest.mark.parametrize(
    "plate, expected",
    [
        ("R....Y....", 2 * 2 + 3 - 1),  # {0, 5} full: +3
        (".BY...G...", 2 * 3 + 5 - 1),  # {1, 2, 6}, space 2 G/Y: +5
        ("...YG..RRB", 2 * 5 + 8 - 1),  # {3, 4, 7, 8, 9}, space 8 B/R: +8
        ("...YG..RR.", 2 * 4 - 1),  # space 9 missing: nothing
    ],
)
def test_level2_fixed_group_bonus(engine, plate, expected):
    """docs/rules.md §7.2, §7.3: level 2 pays the level-1 fixed groups."""
    g = engine.load(make_state(2, level=2, zones={"personal0": "Y"}, fill="personal1", plates=[plate]))
    assert engine.scores(g)[0] == expected


@pytest.mark.parametrize(
    "plate, expected",
    [
        ("GR...YB...", 2 * 4 + 8 - 1),  # 0, 1, 5, 6: one set of 4
        ("GR.BY.....", 2 * 4 + 3 + 3 - 1),  # {0, 1} and {3, 4}: +3 twice
        ("G....Y.G..", 2 * 3 + 3 - 1),  # {0, 5} and a lone 7
    ],
)
def test_level4_adjacency_bonus(engine, plate, expected):
    """docs/rules.md §7.2, §7.3: level 4 pays adjacency groups, as level 3."""
    g = engine.load(make_state(2, level=4, zones={"personal0": "Y"}, fill="personal1", plates=[plate]))
    assert engine.scores(g)[0] == expected


# =========================================================================== §7 plates
@pytest.mark.parametrize("colour, spaces", [("G", [2, 4, 6]), ("Y", [2, 3, 5]), ("B", [1, 8, 9]), ("R", [0, 7, 8])])
def test_level2_two_colour_spaces(engine, colour, spaces):
    """docs/rules.md §7.1, §7.2: a two-colour space accepts either colour."""
    g = engine.load(
        make_state(
            2, level=2, stages=[row0_stage(colour)], zones={"central": colour}, fill="personal1", slots=["15w|||"]
        )
    )
    play(engine, g, f"slide {colour} from top col3")
    assert engine.legal(g) == validates(0, spaces)


def test_level3_white_space_needs_its_slot(engine):
    """docs/rules.md §7.1, §7.2: a white space Wk takes a figure of any colour from slot k
    only."""
    # Blue figure from slot 0: blue spaces 0 and 8 plus W0 (space 2), never W2 (space 7).
    g = engine.load(
        make_state(2, level=3, stages=[row0_stage("B")], zones={"central": "B"}, fill="personal1", slots=["15w|||"])
    )
    play(engine, g, "slide B from top col3")
    assert engine.legal(g) == validates(0, [0, 2, 8])
    # Same figure from slot 2 (row 3): W2 instead of W0.
    g = engine.load(
        make_state(
            2, level=3, stages=["RGYR/YRGY/GYRG/GBBB"], zones={"personal0": "B"}, fill="personal1", slots=["||15w|"]
        )
    )
    play(engine, g, "slide B from bottom col0")
    assert engine.legal(g) == validates(2, [0, 7, 8])
    # With both blue spaces taken, only the white space is left; it takes any colour.
    g = engine.load(
        make_state(
            2,
            level=3,
            stages=[row0_stage("B")],
            zones={"central": "B"},
            fill="personal1",
            slots=["15w|||"],
            plates=["B.......B."],
        )
    )
    d = play(engine, g, "slide B from top col3", "validate slot0 space2")
    assert d["plates"][0][2] == "B"


@pytest.mark.parametrize(
    "plate, bonus",
    [
        ("B.........", 0),
        ("BG........", 3),  # one group of 2
        ("BGB.......", 5),  # 3
        ("BG...RY...", 8),  # 4 (a 2x2 square)
        ("BGBRY.....", 8),  # 5 still pays 8
        ("BG.RY.....", 6),  # two groups of 2
        ("BG.RY..B..", 6),  # plus a lone token
    ],
)
def test_level3_adjacency_bonus(engine, plate, bonus):
    """docs/rules.md §7.3: connected sets of 2 / 3 / 4+ tokens pay +3 / +5 / +8."""
    g = engine.load(make_state(2, level=3, zones={"personal0": ""}, fill="personal1", plates=[plate]))
    tokens = sum(ch != "." for ch in plate)
    assert engine.scores(g)[0] == 2 * tokens + 2 + bonus


def _extra_turn_position(engine, *seat1_slots: str):
    """Token on space 1; ``slide G from top col3`` completes row 0 (tile 15 white on slot 0)
    and its token on space 0 completes the extra-turn pair 0-1.  ``seat1_slots``: seat 1's
    slots, when given."""
    return engine.load(
        make_state(
            2,
            level=4,
            stages=[row0_stage("G")],
            zones={"central": "GG", "side0": "R"},
            fill="personal1",
            slots=["15w|3w||", *seat1_slots],
            plates=[".R........"],
        )
    )


def test_level4_power_extra_turn(engine):
    """docs/rules.md §7.4 (decision 6), §4.4: the extra turn follows the pass and counts as a turn."""
    g = _extra_turn_position(engine)
    t0 = engine.dump(g)["turn"]  # turns before this position (make_state counts them)
    d = play(engine, g, "slide G from top col3", "validate slot0 space0")
    assert d["extra_turn"] and d["phase"] == "give_face"
    d = play(engine, g, "give white")
    assert (d["current_player"], d["phase"], d["turn"] - t0, d["extra_turn"]) == (0, "slide", 1, False)
    d = play(engine, g, "slide R from left row3")
    assert (d["current_player"], d["turn"] - t0) == (1, 2)


def test_level4_extra_turn_follows_the_receivers_cover(engine):
    """docs/rules.md decision 6: the extra turn comes after the pass and the cover the
    receiver chooses, and counts as a turn."""
    g = _extra_turn_position(engine, "4w|5w|6w|7w")  # seat 1 has no empty slot
    t0 = engine.dump(g)["turn"]
    d = play(engine, g, "slide G from top col3", "validate slot0 space0", "give white")
    assert d["extra_turn"] and (d["phase"], d["current_player"], engine.actor(g)) == ("cover", 0, 1)
    d = play(engine, g, "cover slot1")
    assert stacks(d, 1)[1] == "5w 15w"
    assert (d["current_player"], d["phase"], d["turn"] - t0, d["extra_turn"]) == (0, "slide", 1, False)
    d = play(engine, g, "slide R from left row3")
    assert (d["current_player"], d["turn"] - t0) == (1, 2)


def test_level4_power_fires_only_when_pair_is_full(engine):
    """docs/rules.md §7.4: a power fires only when both spaces of its pair hold tokens."""
    g = engine.load(
        make_state(2, level=4, stages=[row0_stage("G")], zones={"central": "G"}, fill="personal1", slots=["15w|3w||"])
    )
    d = play(engine, g, "slide G from top col3", "validate slot0 space0")
    assert not d["extra_turn"] and d["phase"] == "give_face"
    d = play(engine, g, "give white")
    assert d["current_player"] == 1


def test_level4_no_extra_turn_once_end_triggered(engine):
    """docs/rules.md §7.4 (decision 5), §5.1: no extra turn once the end is triggered."""
    # The same turn fires the extra turn and places the last supply token.
    plates = [".R.BYYB...", "GR.BYY...."]
    g = engine.load(
        make_state(
            2,
            level=4,
            stages=[row0_stage("G")],
            zones={"central": "G"},
            fill="personal1",
            slots=["15w|3w||"],
            plates=plates,
        )
    )
    assert engine.dump(g)["supply"] == 1
    d = play(engine, g, "slide G from top col3", "validate slot0 space0", "give white")
    assert (d["end_triggered_by"], d["current_player"], d["extra_turn"]) == (0, 1, False)
    # In the final round an extra-turn power grants nothing either.
    plates = ["GR.BYYB...", ".R.BYYB..."]
    g = engine.load(
        make_state(
            2,
            level=4,
            current=1,
            end_by=0,
            stages=["", row0_stage("G")],
            zones={"central": "G"},
            fill="personal0",
            slots=["3w|||", "15w|4w||"],
            plates=plates,
        )
    )
    d = play(engine, g, "slide G from top col3", "validate slot0 space0", "give white")
    assert d["reserve_used"] == 1
    assert d["terminated"] and (d["phase"], d["current_player"]) == ("game_over", 1)


def test_level4_power_fires_once_per_game(engine):
    """docs/rules.md §7.4 (decision 5): spaces keep their tokens, so a pair fills once and its
    power fires once: with every pair full, a validation fires nothing."""
    g = engine.load(
        make_state(
            2,
            level=4,
            stages=[row0_stage("G")],
            zones={"central": "G"},
            fill="personal1",
            slots=["15w|3w||"],
            plates=["GR.BYYB..."],
        )
    )
    d = play(engine, g, "slide G from top col3")
    assert engine.legal(g) == validates(0, [8])  # the other green space, 0, is taken for good
    d = play(engine, g, "validate slot0 space8")
    assert (d["phase"], d["extra_turn"]) == ("give_face", False)
    d = play(engine, g, "give white")
    assert d["current_player"] == 1


def test_level4_swap_power_still_fires_in_the_final_round(engine):
    """docs/rules.md §7.4 (decision 5): unlike the extra turn, a swap power fires in the final
    round."""
    g = engine.load(
        make_state(
            2,
            level=4,
            current=1,
            end_by=0,
            stages=["", row0_stage("B")],
            zones={"central": "B"},
            fill="personal0",
            slots=["3w|||", "15w|4w||"],
            plates=["GR.BYYB.G.", ".R..YYB..."],
        )
    )
    assert engine.dump(g)["supply"] == 0
    d = play(engine, g, "slide B from top col3", "validate slot0 space3")
    assert (d["phase"], d["end_triggered_by"], d["reserve_used"]) == ("swap_stage", 0, 1)
    assert engine.legal(g) == _expected_stage_swaps(d)
    d = play(engine, g, "swap-stage pass", "give white")
    assert d["terminated"] and (d["phase"], d["current_player"]) == ("game_over", 1)


def _expected_stage_swaps(d: dict) -> list[int]:
    cells = "".join(d["stages"][d["current_player"]])
    return sorted(
        [swap_stage_action(i) for i, (x, y) in enumerate(ADJACENT_PAIRS) if cells[x] != cells[y]] + [SWAP_STAGE_PASS]
    )


def _swap_stage_position(engine, rows: str, slots: str):
    """Token on space 4; the blue figure goes on space 3 and completes the pair 3-4."""
    g = engine.load(
        make_state(
            2,
            level=4,
            stages=[rows],
            zones={"central": "B"},
            fill="personal1",
            slots=[slots],
            plates=["....Y....."],
        )
    )
    return g, play(engine, g, "slide B from top col3", "validate slot0 space3")


def test_level4_power_swap_stage(engine):
    """docs/rules.md §7.4 (decision 4): stage swap of two different adjacent colours; no
    validation follows."""
    g, d = _swap_stage_position(engine, "BBBG/GGYR/RGGY/YRGB", "15w|8w||")
    assert stage(d, 0) == "BBBB/GGYG/RGGR/YRGY"
    assert d["phase"] == "swap_stage" and d["passing"] == {"tile": 15, "face": "white"}
    legal = engine.legal(g)
    assert legal == _expected_stage_swaps(d)
    assert A("swap-stage r0c0 r0c1") not in legal  # two blues: a no-op swap is not offered
    d = play(engine, g, "swap-stage r1c2 r2c2")
    assert stage(d, 0) == "BBBB/GGGG/RGYR/YRGY"
    # Row 1 (tile 8w on slot 1) is now complete, but a swap never leads to a validation.
    assert complete_figures(d, 0) == [1]
    assert d["phase"] == "give_face" and d["plates"][0][3] == "B"


def test_validated_tile_stays_on_its_slot_until_the_swap_is_decided(engine):
    """docs/rules.md §4.2 (token -> power -> pass), decision 2, §6: during the swap decision
    the validated tile still covers the tile below it, which stays hidden; it leaves when
    the pass begins."""
    g, d = _swap_stage_position(engine, row0_stage("B"), "7w 15w|3w||")
    assert d["phase"] == "swap_stage"
    assert d["slots"][0][0] == [{"tile": 7, "face": "white"}, {"tile": 15, "face": "white"}]
    assert d["passing"] == {"tile": 15, "face": "white"}
    d = play(engine, g, "swap-stage pass")
    assert d["phase"] == "give_face" and d["slots"][0][0] == [{"tile": 7, "face": "white"}]
    assert d["passing"] == {"tile": 15, "face": "white"}


def test_level4_power_swap_stage_pass(engine):
    """docs/rules.md §7.4: the stage swap may be passed."""
    g, d = _swap_stage_position(engine, row0_stage("B"), "15w|3w||")
    before = stage(d, 0)
    d = play(engine, g, "swap-stage pass")
    assert stage(d, 0) == before and d["phase"] == "give_face"


def _swap_zone_position(engine):
    """Token on space 6; the yellow figure goes on space 5 and completes the pair 5-6."""
    g = engine.load(
        make_state(
            2,
            level=4,
            stages=[row0_stage("Y")],
            zones={"central": "Y", "side0": "R"},
            fill="personal1",
            slots=["15w|3w||"],
            plates=["......B..."],
        )
    )
    return g, play(engine, g, "slide Y from top col3", "validate slot0 space5")


def test_level4_power_swap_zone(engine):
    """docs/rules.md §7.4 (decision 4): stage umbrella exchanged with a different colour of an
    own zone."""
    g, d = _swap_zone_position(engine)
    assert stage(d, 0) == "YYYY/RGYB/GYRR/YRGY"
    assert (zone(d, "central"), zone(d, "side0"), zone(d, "side1"), zone(d, "personal0")) == ("", "R", "", "B")
    assert d["phase"] == "swap_zone"
    cells = "".join(d["stages"][0])
    expected = sorted(
        [swap_zone_action(c, 2, COLOURS.index("R")) for c in range(16) if cells[c] != "R"]  # left zone: R
        + [swap_zone_action(c, 1, COLOURS.index("B")) for c in range(16) if cells[c] != "B"]  # bottom zone: B
        + [SWAP_ZONE_PASS]
    )
    assert engine.legal(g) == expected
    assert A("swap-zone r1c0 with R of left") not in expected  # same colour: no-op
    d = play(engine, g, "swap-zone r0c0 with R of left")
    assert stage(d, 0) == "RYYY/RGYB/GYRR/YRGY"
    assert zone(d, "side0") == "Y"
    assert d["phase"] == "give_face"


def test_level4_power_swap_zone_pass(engine):
    """docs/rules.md §7.4: the zone swap may be passed."""
    g, d = _swap_zone_position(engine)
    zones_before, stage_before = d["zones"], stage(d, 0)
    d = play(engine, g, "swap-zone pass")
    assert d["zones"] == zones_before and stage(d, 0) == stage_before and d["phase"] == "give_face"


# =========================================================================== §8 solo
SOLO_SLIDES = {
    "top": ("slide G from top col1", "top", "R"),
    "bottom": ("slide G from bottom col1", "personal", "G"),
    "left": ("slide G from left row1", "left", "G"),
    "right": ("slide G from right row1", "right", "R"),
}


@pytest.mark.parametrize("side", list(SOLO_SLIDES))
def test_solo_slide_discards_ejected_umbrella(engine, side):
    """docs/rules.md §8.2: in solo the pushed-off umbrella is discarded."""
    action, source, ejected = SOLO_SLIDES[side]
    g = engine.load(make_state(1, zones={"top": "G", "personal": "G", "left": "G", "right": "G"}, slots=["15w|4b||"]))
    t0 = engine.dump(g)["turn"]  # turns before this position (make_state counts them)
    discard = engine.dump(g)["zones"]["discard"]
    d = play(engine, g, action)
    assert stage(d, 0) == SLIDES[side][1]
    assert d["zones"]["discard"] == "".join(sorted(discard + ejected, key=COLOURS.index))
    for name in ("top", "personal", "left", "right"):
        assert d["zones"][name] == ("" if name == source else "G")
    assert (d["phase"], d["current_player"], d["turn"] - t0, d["last_slide"]) == ("slide", 0, 1, None)


def test_solo_no_fallback_and_last_slide_recorded(engine):
    """docs/rules.md §8.1, §8.2: no fallback in solo; the slide is remembered for the extra-turn
    power."""
    g = engine.load(make_state(1, stages=[row0_stage("B")], zones={"top": "B", "left": "R"}, slots=["15w|4b||"]))
    assert all(a < A("fallback B of central from top col0") for a in engine.legal(g))
    d = play(engine, g, "slide B from top col3")
    assert d["phase"] == "validate"
    assert d["last_slide"] == {"side": "top", "colour": "B"}


def test_solo_black_tile_flips_white_to_first_empty_slot(engine):
    """docs/rules.md §8.2: a validated black tile returns white on the first empty slot."""
    # Tile 15 black = the four corners, all blue after the slide.
    rows = "BRYG/GYRR/RGYB/BYGY"
    g = engine.load(make_state(1, stages=[rows], zones={"top": "B", "left": "R"}, slots=["3b 15b|4b||"]))
    t0 = engine.dump(g)["turn"]  # turns before this position (make_state counts them)
    d = play(engine, g, "slide B from top col3")
    assert stage(d, 0) == "BRYB/GYRG/RGYR/BYGB"
    assert engine.legal(g) == validates(0, [0, 4, 7])
    d = play(engine, g, "validate slot0 space0")
    assert stacks(d, 0) == ["3b", "4b", "15w", ""]
    assert (d["phase"], d["turn"] - t0, d["passing"], d["terminated"]) == ("slide", 1, None, False)


def test_solo_black_tile_returns_to_the_slot_it_left(engine):
    """docs/rules.md §8.2: the validated tile is taken first, so a black tile alone on its slot
    comes back white on that same slot, the first empty one."""
    rows = "BRYG/GYRR/RGYB/BYGY"
    g = engine.load(make_state(1, stages=[rows], zones={"top": "B", "left": "R"}, slots=["15b|4b||"]))
    d = play(engine, g, "slide B from top col3", "validate slot0 space0")
    assert stacks(d, 0) == ["15w", "4b", "", ""]


def test_solo_white_tile_is_discarded(engine):
    """docs/rules.md §8.2: a validated white tile is discarded."""
    g = engine.load(make_state(1, stages=[row0_stage("B")], zones={"top": "B", "left": "R"}, slots=["15w|4b||"]))
    d = play(engine, g, "slide B from top col3", "validate slot0 space0")
    assert stacks(d, 0) == ["", "4b", "", ""]
    assert d["phase"] == "slide" and not d["terminated"]


def test_solo_cover_choice(engine):
    """docs/rules.md §8.2, §9: with no empty slot the solo player chooses the stack to cover."""
    rows = "BRYG/GYRR/RGYB/BYGY"
    g = engine.load(make_state(1, stages=[rows], zones={"top": "B", "left": "R"}, slots=["3b 15b|4b|5b|6b"]))
    d = play(engine, g, "slide B from top col3", "validate slot0 space0")
    assert d["phase"] == "cover" and engine.actor(g) == 0
    assert d["passing"] == {"tile": 15, "face": "white"}
    assert engine.legal(g) == [A(f"cover slot{k}") for k in range(4)]
    d = play(engine, g, "cover slot3")
    assert stacks(d, 0) == ["3b", "4b", "5b", "6b 15w"]
    assert d["phase"] == "slide"


def test_solo_end_sixth_token_and_remaining_umbrella_bonus(engine):
    """docs/rules.md §8.3, §8.4: the sixth token ends the game and adds +1 per umbrella left in
    the zones."""
    g = engine.load(
        make_state(
            1,
            stages=[row0_stage("B")],
            zones={"top": "B", "left": "GG", "right": "R"},
            slots=["15w|4b||"],
            plates=["BGRY.G...."],
        )
    )
    assert engine.scores(g) == [2 * 5 + 3]  # {0,5} complete; no umbrella bonus before the 6th token
    d = play(engine, g, "slide B from top col3", "validate slot0 space4")
    assert d["terminated"] and d["phase"] == "game_over"
    assert engine.scores(g) == [2 * 6 + 3 + 3]  # + the 3 umbrellas left in the four zones


def test_solo_end_when_zones_are_empty(engine):
    """docs/rules.md §8.3 (decision 11): no slide possible ends the solo game."""
    g = engine.load(make_state(1, zones={"top": "G"}, slots=["15w|4b||"]))
    d = play(engine, g, "slide G from top col1")
    assert d["terminated"] and not d["truncated"] and d["phase"] == "game_over"
    assert d["plates"][0] == [None] * 10 and complete_figures(d, 0) == []


def test_solo_end_when_no_tile_left(engine):
    """docs/rules.md §8.3: no tile left ends the solo game."""
    g = engine.load(make_state(1, stages=[row0_stage("B")], zones={"top": "B", "left": "R"}, slots=["15w|||"]))
    d = play(engine, g, "slide B from top col3", "validate slot0 space0")
    assert stacks(d, 0) == ["", "", "", ""]
    assert d["terminated"] and d["phase"] == "game_over"


@pytest.mark.parametrize(
    "level, plate, zones, board, ends",
    [
        # Level 1, blue spaces all taken; the slide discards the fourth red, the last colour
        # that both has a free space and 4 umbrellas left: the game ends.
        (1, "BG..BG.B..", {"top": "BB", "left": "R"}, "8w|||", True),
        # One more green (free green space 9): still playable.
        (1, "BG..BG.B..", {"top": "BB", "left": "G"}, "8w|||", False),
        # Level 3: blue spaces 0 and 8 taken, W0 free and slot 0 holds a tile: blue can score.
        (3, "BG.R.R..B.", {"top": "BB"}, "8w|||", False),
        # ... but not when slot 0 (and slot 2) are empty: once the fourth red is discarded
        # (red space 5 free), no colour can be scored.
        (3, "BG.R....B.", {"top": "BB", "left": "R"}, "|8w||", True),
    ],
)
def test_solo_end_when_no_colour_can_be_scored(engine, level, plate, zones, board, ends):
    """docs/rules.md §8.3: the game ends when no colour that could still be scored has 4
    umbrellas."""
    rows = "BBBB/BBBG/GGRR/RYYY"
    g = engine.load(make_state(1, level=level, stages=[rows], zones=zones, slots=[board], plates=[plate]))
    d = play(engine, g, "slide B from top col0")  # pushes a red into the discard
    assert d["phase"] != "validate"
    assert d["terminated"] is ends
    assert d["phase"] == ("game_over" if ends else "slide")


@pytest.mark.parametrize(
    ("rows", "side", "line", "source", "back_to"),
    [  # each slide of a green makes row 0 all green (tile 15 white on slot 0) and ejects a blue
        (row0_stage("G"), "top", "col3", "top", "personal"),
        ("GGGB/RGYG/GYRY/YRGB", "bottom", "col3", "personal", "top"),
        ("GGGB/RGYR/GYRY/YRGB", "left", "row0", "left", "right"),
        ("BGGG/RGYR/GYRY/YRGB", "right", "row0", "right", "left"),
    ],
)
def test_solo_extra_turn_power_returns_ejected_umbrella(engine, rows, side, line, source, back_to):
    """docs/rules.md §7.4 (decision 6), §8.2: the solo extra-turn power returns the ejected
    umbrella to the zone opposite the slide's side."""
    zones = {"top": "R", "left": "R", "right": "R", "personal": "R"}
    zones[source] = "G"
    g = engine.load(make_state(1, level=4, stages=[rows], zones=zones, slots=["15w|4b||"], plates=[".R........"]))
    t0 = engine.dump(g)["turn"]  # turns before this position (make_state counts them)
    discard = engine.dump(g)["zones"]["discard"]
    d = play(engine, g, f"slide G from {side} {line}")
    assert d["last_slide"] == {"side": side, "colour": "B"}
    assert stage(d, 0).startswith("GGGG/")
    d = play(engine, g, "validate slot0 space0")
    assert sorted(d["zones"][back_to]) == sorted(zones[back_to] + "B")
    assert d["zones"]["discard"] == discard
    assert (d["extra_turn"], d["current_player"], d["turn"] - t0, d["last_slide"]) == (False, 0, 1, None)


@pytest.mark.parametrize("level", [1, 4])
def test_solo_game_lasts_at_most_21_turns(engine, level):
    """docs/rules.md decision 11: every slide takes one umbrella out of the four zones (20 at
    setup) and only the extra-turn power puts one back, at most once, so a solo game lasts at
    most 21 turns.  Over seeded games of random decisions (validations on spaces 0-1, the
    extra-turn pair, when offered), the zones never gain more than one umbrella in a game."""
    zones = ("left", "right", "top", "personal")
    for seed in range(60):
        rng = random.Random(seed)
        g = engine.new(GameConfig(num_players=1, plate_level=level), seed)
        held, gained = 20, 0
        while engine.legal(g):
            legal = engine.legal(g)
            power = [a for a in legal if a in {A(f"validate slot{k} space{s}") for k in range(4) for s in (0, 1)}]
            engine.step(g, rng.choice(power or legal))
            d = engine.dump(g)
            now = sum(len(d["zones"][z]) for z in zones)
            gained += max(0, now - held)
            held = now
        assert gained <= 1 and d["turn"] <= 20 + gained, (seed, gained, d["turn"])


def test_solo_stage_swap_as_at_2_to_4_players(engine):
    """docs/rules.md §8.2, §7.4 (decision 4): the solo stage swap offers every adjacent pair of
    two different colours and pass, swaps the pair, and no validation follows."""
    g = engine.load(
        make_state(
            1,
            level=4,
            stages=[row0_stage("B")],
            zones={"top": "B", "left": "RG"},
            slots=["15w|4b||"],
            plates=["....Y....."],
        )
    )
    d = play(engine, g, "slide B from top col3", "validate slot0 space3")
    assert stage(d, 0) == "BBBB/RGYG/GYRR/YRGY"
    assert d["phase"] == "swap_stage" and engine.legal(g) == _expected_stage_swaps(d)
    assert A("swap-stage r0c0 r0c1") not in engine.legal(g)  # two blues: no no-op swap
    t0 = d["turn"]
    d = play(engine, g, "swap-stage r1c0 r2c0")
    assert stage(d, 0) == "BBBB/GGYG/RYRR/YRGY"
    assert (d["phase"], d["turn"], d["plates"][0][3]) == ("slide", t0 + 1, "B")  # the white 15 is discarded


def test_solo_zone_swap_draws_on_the_four_solo_zones(engine):
    """docs/rules.md §7.4 (decision 4), §8: in solo the zone swap offers the umbrellas of the
    top, personal (bottom), left and right zones, never the discard."""
    g = engine.load(
        make_state(
            1,
            level=4,
            stages=[row0_stage("Y")],
            zones={"top": "YY", "personal": "B", "left": "R", "right": "G"},
            slots=["15w|4b||"],
            plates=["......B..."],
        )
    )
    d = play(engine, g, "slide Y from top col3", "validate slot0 space5")
    assert d["phase"] == "swap_zone" and d["zones"]["discard"]  # the discard holds umbrellas
    cells = "".join(d["stages"][0])
    by_side = {0: "Y", 1: "B", 2: "R", 3: "G"}  # top, bottom (personal), left, right
    expected = sorted(
        [
            swap_zone_action(c, side, COLOURS.index(colour))
            for side, colour in by_side.items()
            for c in range(16)
            if cells[c] != colour
        ]
        + [SWAP_ZONE_PASS]
    )
    assert engine.legal(g) == expected
    before = cells[0]
    engine.step(g, swap_zone_action(0, 1, COLOURS.index("B")))
    d = engine.dump(g)
    assert d["stages"][0][0][0] == "B" and d["zones"]["personal"] == before
    assert d["phase"] == "slide"


def test_solo_rank_is_always_zero(engine):
    """docs/rules.md §5.3 (decision 13), §8.4: solo rank 0; no personal-zone term in the solo
    score."""
    g = engine.load(make_state(1, zones={"top": "G"}, slots=["15w|||"], plates=["B........."]))
    assert engine.ranks(g) == [0]
    assert engine.scores(g) == [2]


# =========================================================================== errors
def test_illegal_action_raises_with_action_and_phase(engine):
    """docs/rules.md §9: an action outside the current decision is refused, naming it and the
    phase."""
    g = engine.load(make_state(2, zones={"central": "B"}, fill="personal1", slots=["15w|||"]))
    with pytest.raises(IllegalActionError) as info:
        engine.step(g, A("validate slot0 space0"))
    assert "validate slot0 space0" in str(info.value) and "slide" in str(info.value)
    assert engine.dump(g)["turn"] == 0


def test_stepping_a_finished_game_raises(engine):
    """docs/rules.md §9 (decision 1): a finished game has no legal action."""
    g = engine.load(make_state(1, zones={"top": "G"}, slots=["15w|||"]))
    play(engine, g, "slide G from top col1")
    with pytest.raises(GameOverError):
        engine.step(g, A("slide G from top col1"))


def test_the_core_never_plays_a_forced_decision_by_itself(engine):
    """docs/rules.md §9: a decision with a single legal option still waits for its action."""
    g = engine.load(
        make_state(
            1, stages=[row0_stage("B")], zones={"top": "B", "left": "R"}, slots=["15w|4b||"], plates=["....B..B.."]
        )
    )
    d = play(engine, g, "slide B from top col3")
    assert engine.legal(g) == validates(0, [0])  # blue spaces 4 and 7 are taken
    assert d["phase"] == "validate" and d["plates"][0][0] is None and stacks(d, 0)[0] == "15w"
    d = play(engine, g, "validate slot0 space0")
    assert d["plates"][0][0] == "B" and d["phase"] == "slide"


@pytest.mark.parametrize("bad", [-1, NUM_ACTIONS, 2.0, "3", None, True])
def test_bad_action_ids_raise_action_error(engine, bad):
    """docs/rules.md §9: only ids of the flat action space are actions."""
    g = engine.load(make_state(2, zones={"central": "B"}, fill="personal1", slots=["15w|||"]))
    with pytest.raises(ActionError) as info:
        engine.step(g, bad)
    assert not isinstance(info.value, IllegalActionError)


def test_solo_merit_table_is_the_rulebooks() -> None:
    """docs/rules.md §8.4: the rulebook rates a solo score below 15 "try again", 15-18 "a
    start", 19-23 "not bad", 24-26 "well played", 27-30 "impressive", 31 and more "big
    respect" (one home: umbrella_env.core.facts, used by evaluation, play and the demo)."""
    from umbrella_env.core.facts import MERIT_BANDS, merit_band

    want = {14: "try again", 15: "a start", 18: "a start", 19: "not bad", 23: "not bad", 24: "well played",
            26: "well played", 27: "impressive", 30: "impressive", 31: "big respect", 60: "big respect"}  # fmt: skip
    assert {score: merit_band(score) for score in want} == want
    assert [name for _, _, name in MERIT_BANDS] == list(dict.fromkeys(want.values()))
