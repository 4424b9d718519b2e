"""Component data of Umbrella, in one place, with a validator.

Everything printed on the physical components lives here: colours, the four stage
layouts, the 24 double-sided figure tiles, the four score-plate levels and the token
counts.  The values are the *reconstructed* ones of ``docs/rules.md`` (§1, §6, §7);
owners of the physical game can load the printed values from a JSON or TOML file with
:func:`load_components` without touching any rule code.

File format (JSON shown; TOML uses the same keys).  Every top-level key is optional;
a missing key keeps the default value::

    {
      "layouts": {"A": ["BGRY", "RYBG", "GBYR", "YRGB"], ...},
      "tiles":   [["..../..../.X../.XXX", "X.X./...X/.X../...."], ...],   # 24 x (white, black)
      "plates":  {"1": {"spaces": ["B", "G", "R", "Y", "B", "G", "Y", "B", "R", "G"],
                        "groups": [[[0, 5], 3], [[1, 2, 6], 5], [[3, 4, 7, 8, 9], 8]]},
                  "3": {"spaces": ["B", "G", "W0", ...], "adjacency_bonus": [3, 5, 8]},
                  "4": {..., "powers": {"extra_turn": [0, 1], "swap_stage": [3, 4],
                                        "swap_zone": [5, 6]}}},
      "supply":  {"2": 11, "3": 17, "4": 22},
      "reserve": 28,
      "solo_tokens": 6
    }

A space is a colour letter (``"B"``), two letters (``"G/Y"``: either colour) or a white
space ``"Wk"`` (any colour, validated from slot ``k``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from umbrella_env.core.errors import ArgumentTypeError, ComponentError
from umbrella_env.core.jsonio import parse_json

#: Colour letters, index 0..3 (blue, green, red, yellow).
COLOURS: tuple[str, ...] = ("B", "G", "R", "Y")
COLOUR_NAMES: tuple[str, ...] = ("blue", "green", "red", "yellow")
NUM_COLOURS = 4
STAGE_SIZE = 4
NUM_SLOTS = 4
NUM_SPACES = 10
NUM_TILES = 24
#: The most tokens a supply or a reserve may hold, and the largest plate bonus: the bounds
#: of the observation's counts and scores (core.observation) rest on it.
MAX_COUNT = 64
LEVELS: tuple[int, ...] = (1, 2, 3, 4)
POWER_NAMES: tuple[str, ...] = ("extra_turn", "swap_stage", "swap_zone")

# Plate grid (2 x 5):   0 1 2 3 4
#                       5 6 7 8 9
PLATE_ROWS, PLATE_COLS = 2, 5


class FrozenDict(dict[Any, Any]):
    """A dict that refuses changes: the tables of a :class:`ComponentSet`, which every game of
    a configuration shares (and the engine's tables are cached per set), so a change would
    reach every game unvalidated."""

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise ArgumentTypeError("a component set cannot be changed; build another with load_components")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:  # pickled (process pools) as a plain copy
        return (FrozenDict, (dict(self),))

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenDict:
        return self


@dataclass(frozen=True)
class PlateSpec:
    """One score-plate level.

    ``spaces`` has 10 entries (see module doc).  Exactly one of ``groups`` (fixed groups
    paid when full, levels 1-2) and ``adjacency_bonus`` (value of a connected set of
    2 / 3 / 4+ orthogonally adjacent tokens, levels 3-4) is set.  ``powers`` maps a
    power name to the pair of spaces it sits between.
    """

    spaces: tuple[str, ...]
    groups: tuple[tuple[tuple[int, ...], int], ...] | None = None
    adjacency_bonus: tuple[int, int, int] | None = None
    powers: Mapping[str, tuple[int, int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "powers", FrozenDict(self.powers))

    def accepts(self, space: int, colour: int, slot: int) -> bool:
        """Whether ``space`` accepts a figure of ``colour`` validated from ``slot``."""
        text = self.spaces[space]
        if text.startswith("W"):
            return int(text[1:]) == slot
        return COLOURS[colour] in text.split("/")

    def bonus(self, occupied: tuple[bool, ...] | list[bool]) -> int:
        """Plate bonus for a 10-entry occupancy pattern (docs/rules.md §7)."""
        if self.groups is not None:
            return sum(value for spaces, value in self.groups if all(occupied[s] for s in spaces))
        assert self.adjacency_bonus is not None
        total = 0
        for size in connected_group_sizes(occupied):
            if size >= 2:
                total += self.adjacency_bonus[min(size, 4) - 2]
        return total


def plate_neighbours(space: int) -> list[int]:
    """Orthogonal neighbours of a space on the 2 x 5 plate grid."""
    r, c = divmod(space, PLATE_COLS)
    out = []
    for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        rr, cc = r + dr, c + dc
        if 0 <= rr < PLATE_ROWS and 0 <= cc < PLATE_COLS:
            out.append(rr * PLATE_COLS + cc)
    return out


def connected_group_sizes(occupied: tuple[bool, ...] | list[bool]) -> list[int]:
    """Sizes of the orthogonally connected sets of occupied spaces."""
    seen: set[int] = set()
    sizes = []
    for start in range(NUM_SPACES):
        if not occupied[start] or start in seen:
            continue
        stack, size = [start], 0
        seen.add(start)
        while stack:
            s = stack.pop()
            size += 1
            for n in plate_neighbours(s):
                if occupied[n] and n not in seen:
                    seen.add(n)
                    stack.append(n)
        sizes.append(size)
    return sizes


@dataclass(frozen=True)
class ComponentSet:
    """All printed component values.  Build with :func:`default_components` or
    :func:`load_components`; both validate."""

    layouts: Mapping[str, tuple[str, str, str, str]]
    tiles: tuple[tuple[str, str], ...]
    plates: Mapping[int, PlateSpec]
    supply: Mapping[int, int]
    reserve: int
    solo_tokens: int

    def __post_init__(self) -> None:
        for name in ("layouts", "plates", "supply"):
            object.__setattr__(self, name, FrozenDict(getattr(self, name)))

    def __eq__(self, other: object) -> bool:
        """Field by field, the layouts' order included: a game's key picks layouts by their
        index, so two sets whose layouts differ only in order deal different games."""
        if not isinstance(other, ComponentSet):
            return NotImplemented
        return list(self.layouts.items()) == list(other.layouts.items()) and (
            self.tiles,
            self.plates,
            self.supply,
            self.reserve,
            self.solo_tokens,
        ) == (other.tiles, other.plates, other.supply, other.reserve, other.solo_tokens)

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled (process pools) as its dict, unpickled as the process's one set of that
        # content: the engines cache their tables per set object, so a new object per job
        # missed every cache and a pool worker kept a set of tables per job it ran.
        return (_restore_components, (self.to_dict(),))

    def __copy__(self) -> ComponentSet:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> ComponentSet:
        return self

    def face_cells(self, tile: int, face: int) -> tuple[int, ...]:
        """Cells (row * 4 + col, ascending) of a tile face, unrotated.  face 0 white, 1 black."""
        return parse_face(self.tiles[tile][face])

    def to_dict(self) -> dict[str, Any]:
        """The JSON-able form accepted by :func:`components_from_dict`."""
        plates: dict[str, Any] = {}
        for level, plate in self.plates.items():
            entry: dict[str, Any] = {"spaces": list(plate.spaces)}
            if plate.groups is not None:
                entry["groups"] = [[list(s), v] for s, v in plate.groups]
            if plate.adjacency_bonus is not None:
                entry["adjacency_bonus"] = list(plate.adjacency_bonus)
            if plate.powers:
                entry["powers"] = {k: list(v) for k, v in plate.powers.items()}
            plates[str(level)] = entry
        return {
            "layouts": {k: list(v) for k, v in self.layouts.items()},
            "tiles": [list(t) for t in self.tiles],
            "plates": plates,
            "supply": {str(k): v for k, v in self.supply.items()},
            "reserve": self.reserve,
            "solo_tokens": self.solo_tokens,
        }


# --------------------------------------------------------------------------- default data
# docs/rules.md §6: reconstructed figure catalogue, tile -> (white face, black face).
_TILES: tuple[tuple[str, str], ...] = (
    ("..../..../.X../.XXX", "X.X./...X/.X../...."),
    ("XX../XX../..../....", "...X/X.../...X/X..."),
    ("..../.X../XX../X...", "X.../..../..../XX.X"),
    (".X../XXX./..../....", "...X/.X.X/..../..X."),
    ("X.../XX../X.../....", "X.X./...X/..../...X"),
    ("..XX/...X/...X/....", ".X../..X./.X../...X"),
    ("..X./.XXX/..../....", ".X../X.X./..../X..."),
    ("..../..XX/..XX/....", ".X.X/X.../..../...X"),
    (".X../.X../.X../.X..", "X.../...X/..X./X..."),
    ("..../.X../.XX./.X..", "X.X./.X../..../.X.."),
    ("..../.XX./.XX./....", "..../..XX/..../..XX"),
    ("..X./XXX./..../....", "XXX./..../..X./...."),
    ("..../X.../XX../.X..", "X.../X.../...X/...X"),
    ("..../..X./..XX/...X", "..X./X.../...X/...X"),
    ("..../.XXX/.X../....", "..../..X./...X/.X.X"),
    ("XXXX/..../..../....", "X..X/..../..../X..X"),
    ("..../...X/..XX/..X.", ".X../..X./.X../X..."),
    ("..../..XX/...X/...X", "X.../..X./...X/..X."),
    ("..../.X../.X../XX..", "X.../.X../XX../...."),
    ("..../..X./..X./.XX.", "X..X/..X./.X../...."),
    ("..../X.../XX../X...", ".X.X/..../..X./X..."),
    ("..../..X./.XX./..X.", "..X./.X../..X./X..."),
    ("..../..XX/.XX./....", "...X/..X./.X../...X"),
    ("..X./.XX./.X../....", ".X.X/X.../..../..X."),
)

# docs/rules.md §6: reconstructed stage layouts, rows top to bottom.
_LAYOUTS: dict[str, tuple[str, str, str, str]] = {
    "A": ("BGRY", "RYBG", "GBYR", "YRGB"),
    "B": ("RBGY", "YGBR", "BRYG", "GYRB"),
    "C": ("YRBG", "BGYR", "GYRB", "RBGY"),
    "D": ("GYBR", "RBYG", "YRGB", "BGRY"),
}

_GROUPS_1_2 = (((0, 5), 3), ((1, 2, 6), 5), ((3, 4, 7, 8, 9), 8))

# docs/rules.md §7: reconstructed score plates.
_PLATES: dict[int, PlateSpec] = {
    1: PlateSpec(spaces=("B", "G", "R", "Y", "B", "G", "Y", "B", "R", "G"), groups=_GROUPS_1_2),
    2: PlateSpec(spaces=("R", "B", "G/Y", "Y", "G", "Y", "G", "R", "B/R", "B"), groups=_GROUPS_1_2),
    3: PlateSpec(spaces=("B", "G", "W0", "R", "Y", "R", "Y", "W2", "B", "G"), adjacency_bonus=(3, 5, 8)),
    4: PlateSpec(
        spaces=("G", "R", "W1", "B", "Y", "Y", "B", "W3", "G", "R"),
        adjacency_bonus=(3, 5, 8),
        powers={"extra_turn": (0, 1), "swap_stage": (3, 4), "swap_zone": (5, 6)},
    ),
}


def default_components() -> ComponentSet:
    """The reconstructed component set of docs/rules.md (validated)."""
    return _DEFAULT


# --------------------------------------------------------------------------- parsing helpers
def parse_face(text: str) -> tuple[int, ...]:
    """``"..../..../.X../.XXX"`` -> sorted cell indices ``row * 4 + col``."""
    if not isinstance(text, str):
        raise ComponentError(f"face {text!r}: expected a string of 4 rows of 4 characters separated by '/'")
    rows = text.split("/")
    if len(rows) != STAGE_SIZE or any(len(r) != STAGE_SIZE for r in rows):
        raise ComponentError(f"face {text!r}: expected 4 rows of 4 characters separated by '/'")
    cells = []
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            if ch == "X":
                cells.append(r * STAGE_SIZE + c)
            elif ch != ".":
                raise ComponentError(f"face {text!r}: character {ch!r} is neither 'X' nor '.'")
    return tuple(cells)


def rotate_cell(cell: int, quarter_turns: int) -> int:
    """Rotate a stage cell clockwise about the centre: one step is (r, c) -> (c, 3 - r)."""
    r, c = divmod(cell, STAGE_SIZE)
    for _ in range(quarter_turns % 4):
        r, c = c, STAGE_SIZE - 1 - r
    return r * STAGE_SIZE + c


def rotate_cells(cells: tuple[int, ...], quarter_turns: int) -> tuple[int, ...]:
    return tuple(sorted(rotate_cell(x, quarter_turns) for x in cells))


def parse_space(text: str) -> tuple[frozenset[int], int | None]:
    """A plate space -> (accepted colours, white slot or None)."""
    if not isinstance(text, str) or not text:
        raise ComponentError(f"plate space {text!r}: expected a colour letter, 'X/Y' or 'Wk'")
    if text[0] == "W":
        if len(text) != 2 or text[1] not in "0123":
            raise ComponentError(f"plate space {text!r}: a white space is 'W0'..'W3'")
        return frozenset(), int(text[1])
    letters = text.split("/")
    if len(letters) > 2 or any(letter not in COLOURS for letter in letters) or len(set(letters)) != len(letters):
        raise ComponentError(
            f"plate space {text!r}: expected one colour of {'/'.join(COLOURS)}, two distinct colours 'X/Y', or 'Wk'"
        )
    return frozenset(COLOURS.index(letter) for letter in letters), None


# --------------------------------------------------------------------------- validation
def validate_components(cs: ComponentSet) -> None:
    """Check the invariants of a component set; raise :class:`ComponentError` naming the entry."""
    for name, rows in cs.layouts.items():
        where = f"layouts[{name!r}]"
        if len(rows) != STAGE_SIZE or any(not isinstance(r, str) or len(r) != STAGE_SIZE for r in rows):
            raise ComponentError(f"{where}: expected 4 strings of 4 colour letters, got {rows!r}")
        letters = "".join(rows)
        bad = set(letters) - set(COLOURS)
        if bad:
            raise ComponentError(f"{where}: unknown colour letter(s) {sorted(bad)}; expected {COLOURS}")
        for col in COLOURS:
            if letters.count(col) != 4:
                raise ComponentError(f"{where}: colour {col} appears {letters.count(col)} times, expected 4")
    if len(cs.layouts) < 4:
        raise ComponentError(
            f"layouts: at least 4 stage layouts are required (one per player at 4 players), got {len(cs.layouts)}"
        )
    if len(cs.tiles) != NUM_TILES:
        raise ComponentError(f"tiles: expected {NUM_TILES} tiles, got {len(cs.tiles)}")
    for t, pair in enumerate(cs.tiles):
        if len(pair) != 2:
            raise ComponentError(f"tiles[{t}]: expected [white face, black face], got {pair!r}")
        for f, text in enumerate(pair):
            where = f"tiles[{t}].{'white' if f == 0 else 'black'}"
            try:
                cells = parse_face(text)
            except ComponentError as exc:
                raise ComponentError(f"{where}: {exc}") from None
            if len(cells) != 4:
                raise ComponentError(f"{where}: a face has exactly 4 cells, got {len(cells)} in {text!r}")
    if set(cs.plates) != set(LEVELS):
        raise ComponentError(f"plates: expected levels {list(LEVELS)}, got {sorted(cs.plates)}")
    for level, plate in cs.plates.items():
        where = f"plates[{level}]"
        if len(plate.spaces) != NUM_SPACES:
            raise ComponentError(f"{where}.spaces: expected {NUM_SPACES} spaces, got {len(plate.spaces)}")
        for s, text in enumerate(plate.spaces):
            try:
                parse_space(text)
            except ComponentError as exc:
                raise ComponentError(f"{where}.spaces[{s}]: {exc}") from None
        if (plate.groups is None) == (plate.adjacency_bonus is None):
            raise ComponentError(f"{where}: give exactly one of 'groups' or 'adjacency_bonus'")
        if plate.groups is not None:
            covered: list[int] = []
            for g, (spaces, value) in enumerate(plate.groups):
                if not spaces or any(
                    isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < NUM_SPACES for s in spaces
                ):
                    raise ComponentError(f"{where}.groups[{g}]: spaces must be integers 0..9, got {list(spaces)}")
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    raise ComponentError(f"{where}.groups[{g}]: value must be a non-negative integer, got {value!r}")
                covered.extend(spaces)
            if sorted(covered) != list(range(NUM_SPACES)):
                raise ComponentError(f"{where}.groups: groups must partition spaces 0..9, got {sorted(covered)}")
        if plate.adjacency_bonus is not None:
            if len(plate.adjacency_bonus) != 3 or any(
                isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in plate.adjacency_bonus
            ):
                raise ComponentError(
                    f"{where}.adjacency_bonus: expected 3 non-negative integers (sizes 2, 3, 4+), "
                    f"got {plate.adjacency_bonus!r}"
                )
        best = max(plate.bonus([bool(bits >> s & 1) for s in range(NUM_SPACES)]) for bits in range(1 << NUM_SPACES))
        if best > MAX_COUNT:
            raise ComponentError(
                f"{where}: the largest plate bonus is {best}; at most {MAX_COUNT} is supported "
                "(the observation's score bound)"
            )
        used: set[int] = set()
        if plate.powers and level != 4:
            raise ComponentError(f"{where}.powers: only the level-4 plate has powers (docs/rules.md §7)")
        for name, spaces_pair in plate.powers.items():
            if name not in POWER_NAMES:
                raise ComponentError(f"{where}.powers: unknown power {name!r}; expected one of {POWER_NAMES}")
            if len(spaces_pair) != 2 or any(
                isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < NUM_SPACES for s in spaces_pair
            ):
                raise ComponentError(f"{where}.powers[{name!r}]: expected two spaces 0..9, got {spaces_pair!r}")
            a, b = spaces_pair
            if b not in plate_neighbours(a):
                raise ComponentError(f"{where}.powers[{name!r}]: spaces {a} and {b} are not adjacent")
            if used & {a, b}:
                raise ComponentError(f"{where}.powers[{name!r}]: spaces overlap another power's pair")
            used |= {a, b}
    if set(cs.supply) != {2, 3, 4}:
        raise ComponentError(f"supply: expected entries for 2, 3 and 4 players, got {sorted(cs.supply)}")
    for p, n in cs.supply.items():
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_COUNT:
            raise ComponentError(f"supply[{p}]: expected an integer 1..{MAX_COUNT}, got {n!r}")
    if isinstance(cs.reserve, bool) or not isinstance(cs.reserve, int) or not 3 <= cs.reserve <= MAX_COUNT:
        raise ComponentError(
            f"reserve: expected an integer 3..{MAX_COUNT} (at least one token per final turn), got {cs.reserve!r}"
        )
    if isinstance(cs.solo_tokens, bool) or not isinstance(cs.solo_tokens, int) or not 1 <= cs.solo_tokens <= NUM_SPACES:
        raise ComponentError(f"solo_tokens: expected an integer 1..10, got {cs.solo_tokens!r}")


def components_from_dict(data: Mapping[str, Any], base: ComponentSet | None = None) -> ComponentSet:
    """Build and validate a component set from a dict; missing keys keep ``base`` values."""
    base = base or _DEFAULT
    if not isinstance(data, Mapping):
        raise ComponentError(f"components: expected a table/object at top level, got {type(data).__name__}")
    known = {"layouts", "tiles", "plates", "supply", "reserve", "solo_tokens"}
    unknown = set(data) - known
    if unknown:
        raise ComponentError(f"components: unknown key(s) {sorted(unknown)}; expected some of {sorted(known)}")
    layouts = dict(base.layouts)
    if "layouts" in data:
        if not isinstance(data["layouts"], Mapping):
            raise ComponentError("layouts: expected a table of name -> 4 row strings")
        for name, rows in data["layouts"].items():
            if not isinstance(rows, (list, tuple)):
                raise ComponentError(f"layouts[{name!r}]: expected 4 strings of 4 colour letters, got {rows!r}")
        layouts = {str(k): tuple(v) for k, v in data["layouts"].items()}
    tiles = base.tiles
    if "tiles" in data:
        if not isinstance(data["tiles"], list):
            raise ComponentError("tiles: expected a list of [white face, black face]")
        tiles = tuple(tuple(t) if isinstance(t, (list, tuple)) else (t,) for t in data["tiles"])
    plates = dict(base.plates)
    if "plates" in data:
        if not isinstance(data["plates"], Mapping):
            raise ComponentError("plates: expected a table of level -> plate")
        given: set[int] = set()
        for key, entry in data["plates"].items():
            level = _int_key(key, f"plates[{key!r}]: the key must be a level 1..4")
            if level not in LEVELS:
                raise ComponentError(f"plates[{key!r}]: the key must be a level 1..4")
            if level in given:
                raise ComponentError(f"plates[{key!r}]: level {level} is given twice")
            given.add(level)
            if not isinstance(entry, Mapping):
                raise ComponentError(f"plates[{level}]: expected a table")
            bad = set(entry) - {"spaces", "groups", "adjacency_bonus", "powers"}
            if bad:
                raise ComponentError(f"plates[{level}]: unknown key(s) {sorted(bad)}")
            if not isinstance(entry.get("spaces"), list):
                raise ComponentError(f"plates[{level}].spaces: expected a list of 10 space strings")
            try:
                groups = entry.get("groups")
                plates[level] = PlateSpec(
                    spaces=tuple(entry["spaces"]),
                    groups=None if groups is None else tuple((tuple(s), v) for s, v in groups),
                    adjacency_bonus=None if entry.get("adjacency_bonus") is None else tuple(entry["adjacency_bonus"]),
                    powers={str(k): tuple(v) for k, v in (entry.get("powers") or {}).items()},
                )
            except (AttributeError, KeyError, TypeError, ValueError) as exc:
                raise ComponentError(f"plates[{level}]: malformed entry ({exc!r})") from None
    supply = dict(base.supply)
    if "supply" in data:
        wrong = "supply: expected a table of player count (2, 3, 4) -> tokens"
        if not isinstance(data["supply"], Mapping):
            raise ComponentError(wrong)
        supply = {_int_key(k, f"{wrong}, got the key {k!r}"): v for k, v in data["supply"].items()}
        if len(supply) < len(data["supply"]):
            raise ComponentError(f"{wrong}; a player count is given twice ({list(data['supply'])})")
    cs = ComponentSet(
        layouts=layouts,
        tiles=tiles,
        plates=plates,
        supply=supply,
        reserve=data.get("reserve", base.reserve),
        solo_tokens=data.get("solo_tokens", base.solo_tokens),
    )
    validate_components(cs)
    return cs


def _int_key(key: Any, problem: str) -> int:
    """A table key naming a number: an int (not a bool) or a string of digits (the keys of
    TOML and JSON tables are strings); anything else raises ``problem``."""
    if isinstance(key, bool) or not (
        isinstance(key, int) or (isinstance(key, str) and key.isascii() and key.isdigit())
    ):
        raise ComponentError(problem)
    return int(key)


def load_components(path: str | Path) -> ComponentSet:
    """Load a component set from a ``.json`` or ``.toml`` file (missing keys keep defaults):
    the process's one set of that content (:func:`components_of`), so loading a file again
    shares the tables built for it instead of building and keeping new ones."""
    path = Path(path)
    if path.is_dir():
        raise ComponentError(f"component file {str(path)!r} is a directory: expected a .json or .toml file")
    if not path.is_file():
        raise ComponentError(f"component file {str(path)!r} does not exist")
    suffix = path.suffix.lower()
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark (Windows editors write one) is not content
        if suffix == ".json":
            data = parse_json(text)
        elif suffix == ".toml":
            try:
                import tomllib  # type: ignore[import-not-found]
            except ModuleNotFoundError:  # Python 3.10
                import tomli as tomllib
            data = tomllib.loads(text)
        else:
            raise ComponentError(f"component file {str(path)!r}: expected a .json or .toml file")
    except UnicodeDecodeError:
        raise ComponentError(f"component file {str(path)!r} is not valid UTF-8 text") from None
    except RecursionError:  # tomllib recurses into nested arrays and tables
        raise ComponentError(f"component file {str(path)!r} is not valid TOML: nested too deeply") from None
    except ValueError as exc:
        if isinstance(exc, ComponentError):
            raise
        raise ComponentError(f"component file {str(path)!r} is not valid {suffix[1:].upper()}: {exc}") from None
    try:
        return components_of(data)
    except ComponentError as exc:
        raise ComponentError(f"component file {str(path)!r}: {exc}") from None


_DEFAULT = ComponentSet(
    layouts=_LAYOUTS,
    tiles=_TILES,
    plates=_PLATES,
    supply={2: 11, 3: 17, 4: 22},
    reserve=28,
    solo_tokens=6,
)
validate_components(_DEFAULT)


def _content_key(data: dict[str, Any]) -> str:
    """The content of a set's :meth:`ComponentSet.to_dict` as text, the layouts' order
    included (it decides the deals; ``sort_keys`` alone would drop it)."""
    return json.dumps([list(data["layouts"]), data], sort_keys=True)


#: Every component set unpickled in this process, by content (the default set included):
#: unpickling returns the set already here, so pickled configurations share their tables.
_BY_CONTENT: dict[str, ComponentSet] = {_content_key(_DEFAULT.to_dict()): _DEFAULT}


def components_of(data: Mapping[str, Any]) -> ComponentSet:
    """The component set of a dict in the form of :meth:`ComponentSet.to_dict` or of a
    component file (keys left out keep the game's values; ``gymnasium``'s
    ``EnvSpec.to_json`` writes an env's set as its dataclass fields, which read the same),
    validated: the process's one set of that content, so an equal set shares its tables."""
    return _restore_components(components_from_dict(data).to_dict())


def _restore_components(data: dict[str, Any]) -> ComponentSet:
    """The component set of ``data`` (:meth:`ComponentSet.to_dict`): the one of that content
    already in this process, else a new one, validated and kept."""
    key = _content_key(data)
    found = _BY_CONTENT.get(key)
    if found is None:  # two threads building the same set keep the first one stored (atomic)
        found = _BY_CONTENT.setdefault(key, components_from_dict(data))
    return found
