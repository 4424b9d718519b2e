"""Plain-Python reference rules engine: one game at a time, written to be read next to
``docs/rules.md`` (cited as §N; its numbered decisions as "decision N").

It favours clarity over speed and is the yardstick the batched NumPy engine
(:mod:`umbrella_env.core.engine`) is checked against.  It reads and writes the canonical
state dict of ``docs/state.md``.

Internal representation (one game)::

    stages[p][cell]       colour index 0..3 (B G R Y), cell = row * 4 + col, owner's view
    zones[name][colour]   umbrella counts; names "central", "side<i>", "personal<i>"
                          (2-4 players) or "top", "personal", "left", "right", "discard" (solo)
    slots[p][k]           stack of (tile, face) bottom -> top; face 0 white, 1 black
    plates[p][space]      colour index of the figure whose token is there, or None
    passing               (tile, face) of the validated tile, or None; during a swap
                          decision it still lies on top of its slot (decision 2)
    last_slide            (entry side, ejected colour) of this turn's slide, solo only

A turn is a sequence of decision phases (decision 1):
slide | fallback -> [validate -> [swap_stage | swap_zone] -> [give_face] -> [cover]] -> end.
"""

from __future__ import annotations

import copy
import random
from typing import Any

from umbrella_env.core.actions import (
    ADJACENT_PAIRS,
    BLACK,
    BOTTOM,
    FACES,
    LEFT,
    MAX_ZONES,
    OPPOSITE,
    RIGHT,
    SIDES,
    SWAP_STAGE_PASS,
    SWAP_ZONE_PASS,
    TOP,
    WHITE,
    action_to_string,
    check_action_id,
    cover_action,
    decode,
    fallback_action,
    give_face_action,
    slide_action,
    swap_stage_action,
    swap_zone_action,
    validate_action,
)
from umbrella_env.core.components import (
    COLOURS,
    NUM_COLOURS,
    NUM_SLOTS,
    NUM_SPACES,
    NUM_TILES,
    STAGE_SIZE,
    ComponentSet,
    PlateSpec,
    default_components,
    rotate_cells,
)
from umbrella_env.core.config import DEFAULT_MAX_TURNS, GameConfig
from umbrella_env.core.errors import ConfigError, GameOverError, IllegalActionError
from umbrella_env.core.serialize import validate_state_dict

__all__ = [
    "ReferenceGame",
    "compute_ranks",
    "figure_colour",
    "line_cells",
    "player_score",
    "push",
    "solo_score",
    "zone_counts",
    "zone_text",
]

Tile = tuple[int, int]  # (tile id, face)

#: The four solo zones by stage side (§8), plus the discard of ejected umbrellas.
SOLO_SIDE_ZONES: tuple[str, ...] = ("top", "personal", "left", "right")  # indexed by TOP BOTTOM LEFT RIGHT
SOLO_ZONE_KEYS: tuple[str, ...] = ("left", "right", "top", "personal", "discard")


# --------------------------------------------------------------------------- geometry
def line_cells(side: int, line: int) -> tuple[int, int, int, int]:
    """Cells of one slide line, from the entry cell to the cell pushed off (§4.1).

    top col c:    (0,c) (1,c) (2,c) (3,c)      bottom col c: (3,c) (2,c) (1,c) (0,c)
    left row r:   (r,0) (r,1) (r,2) (r,3)      right row r:  (r,3) (r,2) (r,1) (r,0)
    """
    n = STAGE_SIZE
    if side == TOP:
        cells = [r * n + line for r in range(n)]
    elif side == BOTTOM:
        cells = [r * n + line for r in reversed(range(n))]
    elif side == LEFT:
        cells = [line * n + c for c in range(n)]
    else:
        cells = [line * n + c for c in reversed(range(n))]
    return tuple(cells)  # type: ignore[return-value]


def push(stage: list[int], side: int, line: int, colour: int) -> int:
    """Push ``colour`` into ``stage`` from ``side`` along ``line``; return the ejected colour."""
    cells = line_cells(side, line)
    ejected = stage[cells[-1]]
    for i in range(len(cells) - 1, 0, -1):
        stage[cells[i]] = stage[cells[i - 1]]
    stage[cells[0]] = colour
    return ejected


def figure_colour(stage: list[int], cs: ComponentSet, tile: Tile, slot: int) -> int | None:
    """Colour of the figure ``tile`` shows from ``slot`` if complete (§4.2, §6), else None."""
    cells = rotate_cells(cs.face_cells(tile[0], tile[1]), slot)
    colours = {stage[x] for x in cells}
    return colours.pop() if len(colours) == 1 else None


# --------------------------------------------------------------------------- zone text
def zone_text(counts: list[int]) -> str:
    """Counts per colour -> canonical zone string, letters in B G R Y order."""
    return "".join(COLOURS[c] * n for c, n in enumerate(counts))


def zone_counts(text: str) -> list[int]:
    return [text.count(letter) for letter in COLOURS]


# --------------------------------------------------------------------------- scoring
def player_score(plate: PlateSpec, occupied: list[bool], personal: int) -> int:
    """§5: +2 per token, +2 for an empty personal zone or -1 per umbrella in it, plate bonus."""
    return 2 * sum(occupied) + (2 if personal == 0 else -personal) + plate.bonus(occupied)


def solo_score(plate: PlateSpec, occupied: list[bool], zone_umbrellas: int, solo_tokens: int) -> int:
    """§8: +2 per token, plate bonus, +1 per umbrella left in the four zones once all tokens are placed."""
    tokens = sum(occupied)
    return 2 * tokens + plate.bonus(occupied) + (zone_umbrellas if tokens >= solo_tokens else 0)


def compute_ranks(scores: list[int], personal: list[int]) -> list[int]:
    """Decision 13: rank = number of players strictly better (higher score, or equal score and
    fewer personal umbrellas).  Equal rank 0 is a shared victory.  Solo: [0]."""
    if len(scores) == 1:
        return [0]
    return [
        sum(1 for q in range(len(scores)) if (scores[q], -personal[q]) > (scores[p], -personal[p]))
        for p in range(len(scores))
    ]


# --------------------------------------------------------------------------- the game
class ReferenceGame:
    """One game of Umbrella (1-4 players).  Build with :meth:`new` or :meth:`from_dict`."""

    def __init__(self, config: GameConfig) -> None:
        P = config.num_players
        self.config = config
        self.stages: list[list[int]] = [[0] * (STAGE_SIZE * STAGE_SIZE) for _ in range(P)]
        self.zones: dict[str, list[int]] = {}
        self.slots: list[list[list[Tile]]] = [[[] for _ in range(NUM_SLOTS)] for _ in range(P)]
        self.plates: list[list[int | None]] = [[None] * NUM_SPACES for _ in range(P)]
        self.supply = config.initial_supply
        self.reserve_used = 0
        self.current_player = 0
        self.phase = "slide"
        self.turn = 0
        self.end_triggered_by: int | None = None
        self.passing: Tile | None = None
        self.extra_turn = False
        self.last_slide: tuple[int, int] | None = None
        self.terminated = False
        self.truncated = False

    # ----------------------------------------------------------------------- construction
    @classmethod
    def new(cls, config: GameConfig, seed: int | None = None) -> ReferenceGame:
        """A new game set up per §3 (2-4 players) or §8 (solo), decisions 9-10; ``seed`` an
        int or None (Python's ``random.Random`` would also take floats and text)."""
        if seed is not None and (isinstance(seed, bool) or not hasattr(type(seed), "__index__")):
            raise ConfigError(f"seed must be an int or None, got {seed!r}")
        rng = random.Random(None if seed is None else seed.__index__())
        cs = config.components
        P = config.num_players
        game = cls(config)
        names = sorted(cs.layouts)
        if config.solo:
            chosen = [rng.choice(names)]  # decision 10
        else:
            rng.shuffle(names)  # §3.1: the layouts assigned at random
            chosen = [names[p % len(names)] for p in range(P)]
        game.stages = [[COLOURS.index(ch) for ch in "".join(cs.layouts[name])] for name in chosen]

        if config.solo:
            # §8: 20 umbrellas, 5 per colour, shuffled, 5 to each zone.
            pool = [c for c in range(NUM_COLOURS) for _ in range(5)]
            rng.shuffle(pool)
            for i, name in enumerate(("left", "right", "top", "personal")):
                game.zones[name] = zone_counts("".join(COLOURS[c] for c in pool[5 * i : 5 * i + 5]))
            game.zones["discard"] = [0] * NUM_COLOURS
        else:
            # §3.2: every zone starts with one umbrella of each colour.
            for name in game._zone_names():
                game.zones[name] = [1] * NUM_COLOURS

        # §3.3 / §8: tiles as two stacks on slots 0 and 1; redraw while a visible figure is
        # complete (decision 9), from the tiles no other player holds.
        per_stack = 3 if config.solo else 2
        held: set[int] = set()
        for p in range(P):
            while True:
                available = [t for t in range(NUM_TILES) if t not in held]
                drawn = rng.sample(available, 2 * per_stack)
                faces = [BLACK if config.solo else rng.randrange(2) for _ in drawn]
                tiles = list(zip(drawn, faces))
                game.slots[p] = [tiles[:per_stack], tiles[per_stack:], [], []]
                if not game._complete_figures(p):
                    break
            held.update(drawn)
        return game

    @classmethod
    def from_dict(cls, d: dict[str, Any], *, components: ComponentSet | None = None) -> ReferenceGame:
        """A game from a state dict (validated and canonicalised first; raises StateError)."""
        cs = default_components() if components is None else components
        d = validate_state_dict(d, components=cs)
        config = GameConfig(
            num_players=d["num_players"],
            plate_level=d["plate_level"],
            max_turns=d.get("max_turns", DEFAULT_MAX_TURNS),
            components=cs,
        )
        game = cls(config)
        game.stages = [[COLOURS.index(ch) for ch in "".join(rows)] for rows in d["stages"]]
        z = d["zones"]
        if config.solo:
            game.zones = {name: zone_counts(z[name]) for name in SOLO_ZONE_KEYS}
        else:
            game.zones["central"] = zone_counts(z["central"])
            for i in range(config.num_players):
                game.zones[f"side{i}"] = zone_counts(z["side"][i])
            for i in range(config.num_players):
                game.zones[f"personal{i}"] = zone_counts(z["personal"][i])
        game.slots = [[[(e["tile"], FACES.index(e["face"])) for e in stack] for stack in board] for board in d["slots"]]
        game.plates = [[None if s is None else COLOURS.index(s) for s in row] for row in d["plates"]]
        game.supply = d["supply"]
        game.reserve_used = d["reserve_used"]
        game.current_player = d["current_player"]
        game.phase = d["phase"]
        game.turn = d["turn"]
        game.end_triggered_by = d["end_triggered_by"]
        p = d["passing"]
        game.passing = None if p is None else (p["tile"], FACES.index(p["face"]))
        ls = d["last_slide"]
        game.last_slide = None if ls is None else (SIDES.index(ls["side"]), COLOURS.index(ls["colour"]))
        game.extra_turn = bool(d["extra_turn"])
        game.terminated = bool(d["terminated"])
        game.truncated = bool(d["truncated"])
        return game

    def to_dict(self) -> dict[str, Any]:
        """The canonical state dict (docs/state.md)."""
        P = self.config.num_players
        if self.config.solo:
            zones: dict[str, Any] = {name: zone_text(self.zones[name]) for name in SOLO_ZONE_KEYS}
        else:
            zones = {
                "central": zone_text(self.zones["central"]),
                "side": [zone_text(self.zones[f"side{i}"]) for i in range(P)],
                "personal": [zone_text(self.zones[f"personal{i}"]) for i in range(P)],
            }
        return {
            "num_players": P,
            "plate_level": self.config.plate_level,
            "max_turns": self.config.max_turns,
            "current_player": self.current_player,
            "phase": self.phase,
            "turn": self.turn,
            "stages": [
                ["".join(COLOURS[c] for c in stage[r * STAGE_SIZE : (r + 1) * STAGE_SIZE]) for r in range(STAGE_SIZE)]
                for stage in self.stages
            ],
            "zones": zones,
            "slots": [[[{"tile": t, "face": FACES[f]} for t, f in stack] for stack in board] for board in self.slots],
            "plates": [[None if s is None else COLOURS[s] for s in row] for row in self.plates],
            "supply": self.supply,
            "reserve_used": self.reserve_used,
            "end_triggered_by": self.end_triggered_by,
            "passing": None if self.passing is None else {"tile": self.passing[0], "face": FACES[self.passing[1]]},
            "extra_turn": self.extra_turn,
            "last_slide": (
                None
                if self.last_slide is None
                else {"side": SIDES[self.last_slide[0]], "colour": COLOURS[self.last_slide[1]]}
            ),
            "terminated": self.terminated,
            "truncated": self.truncated,
            "scores": self.scores(),
        }

    def clone(self) -> ReferenceGame:
        return copy.deepcopy(self)

    # ----------------------------------------------------------------------- public queries
    @property
    def num_players(self) -> int:
        return self.config.num_players

    @property
    def done(self) -> bool:
        """Terminated or truncated."""
        return self.terminated or self.truncated

    @property
    def actor(self) -> int:
        """The seat that decides now: the receiver in ``cover`` (§4.3), else the current player."""
        if self.phase == "cover" and not self.config.solo:
            return self._receiver()
        return self.current_player

    def scores(self) -> list[int]:
        """Current scores by the end-of-game formula (§5, §8, decision 14)."""
        cs = self.config.components
        plate = self._plate()
        occupied = [[s is not None for s in row] for row in self.plates]
        if self.config.solo:
            in_zones = sum(sum(self.zones[name]) for name in SOLO_SIDE_ZONES)
            return [solo_score(plate, occupied[0], in_zones, cs.solo_tokens)]
        return [player_score(plate, occupied[p], sum(self.zones[f"personal{p}"])) for p in range(self.num_players)]

    def ranks(self) -> list[int]:
        if self.config.solo:
            return [0]
        personal = [sum(self.zones[f"personal{p}"]) for p in range(self.num_players)]
        return compute_ranks(self.scores(), personal)

    def legal_actions(self) -> list[int]:
        """Sorted legal action ids of the current decision; empty once the game is over."""
        phase, me = self.phase, self.current_player
        out: list[int] = []
        if phase == "slide":
            # §4.1: one umbrella of any colour from one of the mover's four zones, any line.
            for side in range(4):
                zone = self.zones[self._own_zone(me, side)]
                out += [slide_action(side, c, line) for c in range(NUM_COLOURS) if zone[c] > 0 for line in range(4)]
        elif phase == "fallback":
            # §4.1 fallback: any umbrella of any zone of the game (the mover's own four are empty).
            for z in range(MAX_ZONES):
                name = self._fallback_zone(me, z)
                if name is None:
                    continue
                zone = self.zones[name]
                out += [
                    fallback_action(z, c, side, line)
                    for c in range(NUM_COLOURS)
                    if zone[c] > 0
                    for side in range(4)
                    for line in range(4)
                ]
        elif phase == "validate":
            out = [validate_action(k, s) for k, s in self._scorable(me)]
        elif phase == "swap_stage":
            # Decision 4: only swaps of two different colours, plus pass.
            stage = self.stages[me]
            out = [swap_stage_action(i) for i, (x, y) in enumerate(ADJACENT_PAIRS) if stage[x] != stage[y]]
            out.append(SWAP_STAGE_PASS)
        elif phase == "swap_zone":
            stage = self.stages[me]
            for cell in range(STAGE_SIZE * STAGE_SIZE):
                for side in range(4):
                    zone = self.zones[self._own_zone(me, side)]
                    out += [
                        swap_zone_action(cell, side, c) for c in range(NUM_COLOURS) if zone[c] > 0 and stage[cell] != c
                    ]
            out.append(SWAP_ZONE_PASS)
        elif phase == "give_face":
            out = [give_face_action(WHITE), give_face_action(BLACK)]
        elif phase == "cover":
            out = [cover_action(k) for k in range(NUM_SLOTS)]
        return sorted(out)

    # ----------------------------------------------------------------------- step
    def step(self, action: int) -> None:
        """Apply one legal action of the current decision."""
        a = check_action_id(action)
        if self.done:
            raise GameOverError(
                f"the game is over ({'terminated' if self.terminated else 'truncated'}); "
                f"action {a} ({action_to_string(a)!r}) cannot be applied"
            )
        if a not in self.legal_actions():
            raise IllegalActionError(
                f"action {a} ({action_to_string(a)!r}) is not legal in phase {self.phase!r} "
                f"(seat {self.actor} to decide)"
            )
        _, fields = decode(a)
        me = self.current_player
        if self.phase == "slide":
            side, colour, line = fields
            self._slide(self._own_zone(me, side), colour, side, line)
        elif self.phase == "fallback":
            zone, colour, side, line = fields
            name = self._fallback_zone(me, zone)
            assert name is not None
            self._slide(name, colour, side, line)
        elif self.phase == "validate":
            self._validate(*fields)
        elif self.phase == "swap_stage":
            if fields:
                x, y = ADJACENT_PAIRS[fields[0]]
                stage = self.stages[me]
                stage[x], stage[y] = stage[y], stage[x]
            self._lift_validated()
            self._pass_tile()
        elif self.phase == "swap_zone":
            if fields:
                cell, side, colour = fields
                counts = self.zones[self._own_zone(me, side)]
                stage = self.stages[me]
                counts[colour] -= 1
                counts[stage[cell]] += 1
                stage[cell] = colour
            self._lift_validated()
            self._pass_tile()
        elif self.phase == "give_face":
            # §4.3: at 2 players the giver chooses the face the receiver sees.
            assert self.passing is not None
            self.passing = (self.passing[0], fields[0])
            self._place_passing(self._receiver())
        elif self.phase == "cover":
            # §4.3: the receiver chooses the slot whose top tile is covered.
            assert self.passing is not None
            self.slots[self._receiver()][fields[0]].append(self.passing)
            self.passing = None
            self._end_turn()

    # ----------------------------------------------------------------------- turn steps
    def _slide(self, source: str, colour: int, side: int, line: int) -> None:
        """§4.1: take ``colour`` from zone ``source``, push it in from ``side`` along ``line``."""
        me = self.current_player
        self.zones[source][colour] -= 1
        ejected = push(self.stages[me], side, line, colour)
        if self.config.solo:
            self.zones["discard"][ejected] += 1  # §8: the ejected umbrella is discarded
            self.last_slide = (side, ejected)
        else:
            self.zones[self._own_zone(me, OPPOSITE[side])][ejected] += 1
        # §4.2 / decision 3: figures are looked for only right after an own slide.
        if self._scorable(me):
            self.phase = "validate"
        else:
            self._end_turn()

    def _validate(self, slot: int, space: int) -> None:
        """§4.2: token on ``space`` for the figure of ``slot``; then powers (§7); then the pass."""
        me = self.current_player
        top = self.slots[me][slot][-1]
        colour = figure_colour(self.stages[me], self.config.components, top, slot)
        assert colour is not None
        self.plates[me][space] = colour
        if self.supply > 0:
            self.supply -= 1
        else:
            self.reserve_used += 1  # decision 8: final-round tokens from the reserve
        # Decision 2: the tile stays on its slot (the one below stays hidden) until any
        # power is resolved; ``passing`` names it meanwhile.
        self.passing = top

        power = self._power_fired(me, space)
        if power == "extra_turn":
            if self.config.solo:
                self._solo_return_ejected()
            else:
                self.extra_turn = True  # decision 6: taken after the pass (end check decides)
        elif power in ("swap_stage", "swap_zone"):
            self.phase = power
            return
        self._lift_validated()
        self._pass_tile()

    def _lift_validated(self) -> None:
        """Decision 2: the validated tile (``passing``, still on top of one of the mover's
        slots) leaves its slot, revealing the tile below."""
        me = self.current_player
        for stack in self.slots[me]:
            if stack and stack[-1] == self.passing:
                stack.pop()
                return
        raise AssertionError("the validated tile is not on top of a slot of the mover")

    def _power_fired(self, seat: int, space: int) -> str | None:
        """§7 level 4: a power fires when the token fills the last free space of its pair."""
        row = self.plates[seat]
        for name, (x, y) in self._plate().powers.items():
            if space in (x, y) and row[x] is not None and row[y] is not None:
                return name
        return None

    def _solo_return_ejected(self) -> None:
        """§7 / decision 6, solo extra-turn power: the umbrella ejected this turn goes from the
        discard to the zone opposite its entry side (entry top -> personal, etc.)."""
        assert self.last_slide is not None
        side, colour = self.last_slide
        if self.zones["discard"][colour] > 0:
            self.zones["discard"][colour] -= 1
            self.zones[SOLO_SIDE_ZONES[OPPOSITE[side]]][colour] += 1

    def _pass_tile(self) -> None:
        """§4.3 (and §8 in solo): the validated tile goes on."""
        assert self.passing is not None
        tile, face = self.passing
        if self.config.solo:
            if face == WHITE:
                self.passing = None  # §8: a white tile is discarded
                self._end_turn()
                return
            self.passing = (tile, WHITE)  # §8: a black tile is flipped to white and kept
            self._place_passing(0)
        elif self.num_players == 2:
            self.phase = "give_face"
        else:
            self.passing = (tile, 1 - face)  # flipped to its other face
            self._place_passing(self._receiver())

    def _place_passing(self, receiver: int) -> None:
        """§4.3: on the receiver's first empty slot; if none, the receiver chooses a cover."""
        assert self.passing is not None
        board = self.slots[receiver]
        for stack in board:
            if not stack:
                stack.append(self.passing)
                self.passing = None
                self._end_turn()
                return
        self.phase = "cover"

    def _end_turn(self) -> None:
        """§4.4 / §5 / §8 and decisions 5-7, 11-12: end check, then the next turn."""
        self.turn += 1
        self.last_slide = None
        self.passing = None
        me = self.current_player
        next_player = me
        if self.config.solo:
            self.terminated = self._solo_ended()
        else:
            if self.end_triggered_by is None and self._end_triggered():
                self.end_triggered_by = me
            if self.end_triggered_by is not None:
                # §5: the trigger player plays no more; the others get one turn each, in
                # order; no extra turns once the end is triggered (decision 5).
                next_player = (me + 1) % self.num_players
                self.terminated = next_player == self.end_triggered_by
            elif not self.extra_turn:
                next_player = (me + 1) % self.num_players
        self.extra_turn = False
        if not self.terminated and self.turn >= self.config.max_turns:
            self.truncated = True  # §5 / decision 12
        if self.done:
            self.phase = "game_over"
            return
        self.current_player = next_player
        if not self.config.solo and all(sum(self.zones[self._own_zone(next_player, side)]) == 0 for side in range(4)):
            self.phase = "fallback"
        else:
            self.phase = "slide"

    def _end_triggered(self) -> bool:
        """§5: supply empty, a player without figure tile, or a player with a full plate."""
        if self.supply == 0:
            return True
        for p in range(self.num_players):
            if not any(self.slots[p]):
                return True
            if all(s is not None for s in self.plates[p]):
                return True
        return False

    def _solo_ended(self) -> bool:
        """§8 / decision 11: last token placed, no slide possible, or no figure completable."""
        tokens = sum(s is not None for s in self.plates[0])
        if tokens >= self.config.components.solo_tokens:
            return True
        in_zones = [sum(self.zones[name][c] for name in SOLO_SIDE_ZONES) for c in range(NUM_COLOURS)]
        if sum(in_zones) == 0:
            return True
        if not any(self.slots[0]):
            return True
        plate, row = self._plate(), self.plates[0]
        stage = self.stages[0]
        for c in range(NUM_COLOURS):
            if stage.count(c) + in_zones[c] < 4:
                continue
            for space in range(NUM_SPACES):
                if row[space] is not None:
                    continue
                text = plate.spaces[space]
                if text.startswith("W"):
                    if self.slots[0][int(text[1:])]:
                        return False
                elif COLOURS[c] in text.split("/"):
                    return False
        return True

    # ----------------------------------------------------------------------- helpers
    def _plate(self) -> PlateSpec:
        return self.config.components.plates[self.config.plate_level]

    def _receiver(self) -> int:
        """§4.3: the tile goes to the player on the left (solo: the player keeps it)."""
        return (self.current_player + 1) % self.num_players

    def _zone_names(self) -> list[str]:
        P = self.num_players
        return ["central"] + [f"side{i}" for i in range(P)] + [f"personal{i}" for i in range(P)]

    def _own_zone(self, seat: int, side: int) -> str:
        """§2: top central, bottom personal, left side zone i, right side zone i-1 (mod P)."""
        if self.config.solo:
            return SOLO_SIDE_ZONES[side]
        if side == TOP:
            return "central"
        if side == BOTTOM:
            return f"personal{seat}"
        if side == LEFT:
            return f"side{seat}"
        assert side == RIGHT
        return f"side{(seat - 1) % self.num_players}"

    def _fallback_zone(self, seat: int, zone: int) -> str | None:
        """Egocentric fallback zone number (see actions.py) -> zone name, None if absent."""
        P = self.num_players
        if self.config.solo:
            return None
        if zone == 0:
            return "central"
        k = (zone - 1) % 4
        if k >= P:
            return None
        return f"side{(seat + k) % P}" if zone <= 4 else f"personal{(seat + k) % P}"

    def _complete_figures(self, seat: int) -> list[tuple[int, int]]:
        """(slot, colour) of every complete visible figure of ``seat`` (§4.2, §6)."""
        out = []
        for k, stack in enumerate(self.slots[seat]):
            if stack:
                colour = figure_colour(self.stages[seat], self.config.components, stack[-1], k)
                if colour is not None:
                    out.append((k, colour))
        return out

    def _scorable(self, seat: int) -> list[tuple[int, int]]:
        """(slot, space) pairs that can be validated: complete figure, free accepting space (§7)."""
        plate, row = self._plate(), self.plates[seat]
        return [
            (k, s)
            for k, colour in self._complete_figures(seat)
            for s in range(NUM_SPACES)
            if row[s] is None and plate.accepts(s, colour, k)
        ]
