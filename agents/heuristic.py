"""The heuristic agent: short plans over its own slides, plate- and endgame-aware.

Only a seat's own slides (and level-4 swaps) change its stage, so a plan of own slides
stays valid while the opponents play; only the zones it takes from may change.  The
agent therefore ignores the opponents when planning and values a stage by its visible
figures:

    F(stage) = sum over visible figures of max over colours c of W[cells of c] * m(slot, c)

where ``m(slot, c)`` is what a token of colour ``c`` from that slot is worth to the plate
(0 when no free space accepts it, so such a figure is worth nothing): 1 plus ``kappa``
times the change of the expected final plate bonus, :func:`agents.common.plate_expectation`.
A slide ``a1`` that makes a figure scorable is worth a completion bonus plus the value of
its best validation; any other slide is valued by a short plan of own slides,

    V1(s) = alpha * F(s) + (1 - alpha) * gamma * max over legal next slides of F
    V2(s) = alpha * F(s) + (1 - alpha) * gamma * max over legal next slides of V1

(``depth=2`` uses V1 after every legal first slide; ``depth=3`` V2 for the ``top_k`` best
of them; a stage with a complete figure, scored at that slide, keeps F).  All 64 x 64
two-slide stages are one NumPy gather (:mod:`agents.common`).  On top of that:

* **personal zone** (2-4 players): the score change of the slide's effect on the personal
  zone, weighted up as the supply runs low; once the end is triggered it is the seat's
  last turn and only the immediate score counts;
* **solo discard**: a penalty for discarding the umbrella that makes a still-useful colour
  impossible to complete (more than 5 of its 9 umbrellas discarded).

Validations maximise the token plus ``validation_bonus`` times the change of the expected
final bonus, plus the value of the figures left (solo: the flipped tile on its new slot;
the tile revealed under the validated one is hidden information and left out), minus how
complete the passed tile would be for the receiver.  At 2 players the face given is the one
least complete for the receiver; a cover keeps the better figure, plus ``cover_lookahead``
times the value of the coverer's best next decision (solo: its next slide, with the plan
above; the cover a validation's value assumes leaves this term out, which would cost a
slide plan per cover at every completing slide); swaps are taken when they raise the
planning value of the stage.

The constants (``W``, ``alpha``, ``gamma``, ``kappa``, ...) are a :class:`HeuristicWeights`:
:data:`MULTIPLAYER_WEIGHTS` at 2-4 players, :data:`SOLO_WEIGHTS`, tuned for tempo and the
plate, in solo.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from numbers import Integral
from typing import Any

import numpy as np

from agents.base import SeededAgent
from agents.checks import check_flag, check_int, check_real
from agents.common import (
    COLOUR_COUNTS,
    NUM_SLIDES,
    SLIDE_EJECT,
    SLIDE_EJECT_SIDE,
    SLIDE_ENTRY_SIDE,
    SLIDE_SRC,
    Figures,
    after,
    argmax_random,
    expected_tokens_left,
    figures,
    game_and_legal,
    gift_progress,
    own_zone_counts,
    personal_count,
    personal_score,
    plate_expectation,
    slide_legal,
    slide_stages,
    slide_stages2,
    space_flexibility,
    stage_array,
    tile_figures,
    zones_after_slides,
)
from umbrella_env.core import actions as A
from umbrella_env.core import facts as F
from umbrella_env.core.single import SingleGame

_PASSES = (A.SWAP_STAGE_PASS, A.SWAP_ZONE_PASS)


@dataclass(frozen=True)
class HeuristicWeights:
    """Tunable constants of :class:`HeuristicAgent`."""

    #: value of a visible figure with 0..4 cells of one colour
    figure: tuple[float, ...] = (0.0, 0.0, 0.6, 2.5, 8.0)
    #: weight of the position after a slide vs the best position after the next one
    alpha: float = 0.35
    gamma: float = 0.9
    #: bonus of a slide that makes a figure scorable now (on top of the validation value)
    completion: float = 12.0
    #: colour multiplier slope per point of expected plate bonus
    kappa: float = 0.25
    #: weight of the change of the expected final plate bonus in a validation's value
    validation_bonus: float = 1.0
    #: colours the seat is assumed to choose from per token (plate_expectation's ``choice``)
    choice: int = 2
    #: penalty per figure-value unit of the tile passed to the receiver
    gift: float = 0.5
    #: personal-zone weight at the start and once the supply is spent
    personal_early: float = 0.3
    personal_late: float = 1.2
    #: solo: penalty for discarding the umbrella that kills a still-scorable colour
    dead_colour: float = 4.0
    #: weight of the coverer's best next decision after a cover, added to the cover's value
    cover_lookahead: float = 0.0

    def __post_init__(self) -> None:
        """Refuse a weight the agent could not use (it would crash or misplay mid-game)."""
        if not isinstance(self.figure, (tuple, list)) or len(self.figure) != 5:
            raise ValueError(f"figure must be 5 values (a figure with 0..4 cells of a colour), got {self.figure!r}")
        object.__setattr__(self, "figure", tuple(check_real("figure values", v) for v in self.figure))
        for name in ("alpha", "gamma"):
            object.__setattr__(self, name, check_real(name, getattr(self, name), minimum=0.0, maximum=1.0))
        object.__setattr__(self, "choice", check_int("choice", self.choice))
        for name in (
            "completion", "kappa", "validation_bonus", "gift", "personal_early", "personal_late", "dead_colour",
            "cover_lookahead",
        ):  # fmt: skip
            object.__setattr__(self, name, check_real(name, getattr(self, name)))


#: The weights of 2-4 player games (set by hand).
MULTIPLAYER_WEIGHTS = HeuristicWeights()
#: The weights of solo games: a coordinate search over the weights of solo level-1 games
#: (:mod:`umbrella_env.evaluation.tune_heuristic`; README, "Results").  A solo game rewards
#: tempo (every umbrella left in the zones is a point), hence the shorter horizon
#: (``gamma``), and the plate bonus is most of what separates two solo games, hence the
#: larger ``kappa`` and ``validation_bonus``: a token's change of the expected bonus
#: counts four times in a validation (and so in a slide that completes a figure), and the
#: agent passes up a completion that would spend a token on a poor plate space.  A cover
#: also counts the best slide that follows it (``cover_lookahead``): valued by the figures
#: left on the stage alone, covers were chosen little better than at random
#: (docs/alphazero.md, "What limits the strength").
SOLO_WEIGHTS = HeuristicWeights(
    figure=(0.0, 0.0, 0.4, 1.25, 8.0), gamma=0.7, kappa=0.45, validation_bonus=4.0, cover_lookahead=1.0
)


#: Stage cells (stages x 16) from which :class:`Evaluator` computes figure codes by gathers.
_GATHER_SIZE = 1024
_COLOURS16 = np.arange(4, dtype=np.int16)


def _base4(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> np.ndarray:
    """intp: the base-4 figure code of cell colours ``a b c d`` (small ints; ``Figures.matrix``'s weights)."""
    return (((a * 4 + b) * 4 + c) * 4 + d).astype(np.intp)


#: Marker added to a figure's value table for a scorable complete figure (values stay far below).
_SCORABLE = 1e6


class Evaluator:
    """F of one seat's figures (see the module doc), for float32 stages of any batch shape.

    Each figure's value is a lookup in a 256-entry table indexed by the base-4 code of its
    four cells; scorable complete figures carry a large marker, so one sum gives both F and
    whether some figure is scorable.
    """

    def __init__(self, agent: HeuristicAgent, game: SingleGame, seat: int, figs: Figures) -> None:
        self.n = len(figs)
        mult = agent.colour_multipliers(game, seat, figs)  # [nf, 4], 0 = not allowed
        self.codes_of = figs.codes_of
        self.cells = figs.cells.T  # [4, nf]
        self.tables = [agent.value_table(mult[i]) for i in range(self.n)]

    def __call__(self, stages: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(F, some figure scorable) of float32 stages [..., 16]."""
        if not self.n:
            shape = stages.shape[:-1]
            return np.zeros(shape), np.zeros(shape, bool)
        if stages.size < _GATHER_SIZE:
            codes = self.codes_of(stages)
        else:  # the same codes: four gathers of int16 cells beat a thin matrix product on large batches
            x = stages.astype(np.int16)
            codes = _base4(*(x[..., cell] for cell in self.cells))
        return self._values(codes)

    def after_slides(self, stages: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(F, some figure scorable) [n, 64] of stages [n, 16] after each slide: the values of
        ``slide_stages2(stages)`` without building those stages (the codes gather the cells
        from the stage extended by the four colours)."""
        n = len(stages)
        if not self.n:
            return np.zeros((n, NUM_SLIDES)), np.zeros((n, NUM_SLIDES), bool)
        x = np.concatenate([stages.astype(np.int16), np.broadcast_to(_COLOURS16, (n, 4))], axis=1)
        sources = self.slide_sources
        return self._values(_base4(*(x[:, sources[:, j]] for j in range(4))))

    @cached_property
    def slide_sources(self) -> np.ndarray:
        """intp [64, 4, nf]: where each figure cell comes from after each slide (built on the
        first :meth:`after_slides` call, which most evaluators never make, then reused)."""
        return SLIDE_SRC[:, self.cells]

    def _values(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        total = self.tables[0][codes[..., 0]]
        for i in range(1, self.n):
            total = total + self.tables[i][codes[..., i]]
        marks = np.floor(total / _SCORABLE)
        return total - marks * _SCORABLE, marks > 0


class HeuristicAgent(SeededAgent):
    """Plans two or three own slides ahead toward its visible figures (see the module doc)."""

    def __init__(
        self,
        seed: int | None = None,
        name: str = "heuristic",
        weights: HeuristicWeights | None = None,
        depth: int = 3,
        top_k: int = 8,
        look_ahead: bool = True,
    ) -> None:
        """``weights``: the same weights in every game; by default :data:`SOLO_WEIGHTS` in
        solo games and :data:`MULTIPLAYER_WEIGHTS` in the others.  ``look_ahead=False``
        leaves out the covers' look-ahead (``cover_lookahead``), as the search's playouts do."""
        if isinstance(depth, (bool, np.bool_)) or not isinstance(depth, Integral) or depth not in (2, 3):
            raise ValueError(f"depth must be 2 or 3 own slides, got {depth!r}")
        if weights is not None and not isinstance(weights, HeuristicWeights):
            raise TypeError(f"weights must be a HeuristicWeights or None, got {type(weights).__name__}")
        top_k = check_int("top_k", top_k)
        look_ahead = check_flag("look_ahead", look_ahead)
        super().__init__(seed, name)
        self.weights: HeuristicWeights | None = weights
        self.depth: int = int(depth)
        self.top_k: int = top_k
        self.look_ahead: bool = look_ahead
        self._caches: dict[HeuristicWeights, tuple[dict[Any, Any], dict[Any, Any]]] = {}
        self._use(weights or MULTIPLAYER_WEIGHTS)

    def _use(self, w: HeuristicWeights) -> None:
        """Make ``w`` the weights of the next decision (each has its own value caches)."""
        self.w = w
        self.W = np.array(w.figure, dtype=np.float64)
        self._multipliers, self._tables = self._caches.setdefault(w, ({}, {}))

    def weights_for(self, game: SingleGame) -> HeuristicWeights:
        """The weights this agent plays ``game`` with."""
        if self.weights is not None:
            return self.weights
        return SOLO_WEIGHTS if game.tables.solo else MULTIPLAYER_WEIGHTS

    def act(self, observation: np.ndarray, action_mask: np.ndarray, game: SingleGame | None = None) -> int:
        game, legal = game_and_legal(self.name, action_mask, game)
        if legal.size == 1:
            return int(legal[0])
        values = self.action_values(game, legal)
        return int(legal[argmax_random(values, self._rng)])

    # ------------------------------------------------------------------- values
    def action_values(self, game: SingleGame, legal: np.ndarray) -> np.ndarray:
        """float [len(legal)]: the agent's value of each legal action (higher is better)."""
        w = self.weights_for(game)
        if w is not self.w:
            self._use(w)
        phase = game.phase
        if phase == A.PHASE_SLIDE:
            return self._slide_values(game, legal)
        if phase == A.PHASE_VALIDATE:
            return np.array([self.validation_value(game, int(a)) for a in legal])
        if phase == A.PHASE_GIVE_FACE:
            receiver = F.receiver(game.current, game.tables.num_players)
            tile = game.passing & ~1
            return np.array([-self._gift(game, receiver, tile | (int(a) - A.GIVE_FACE_START)) for a in legal])
        if phase == A.PHASE_COVER:
            values = self._cover_values(game, legal)
            if self.look_ahead and self.w.cover_lookahead and legal.size > 1:
                values = values + self.w.cover_lookahead * self._next_values(game, legal)
            return values
        if phase in (A.PHASE_SWAP_STAGE, A.PHASE_SWAP_ZONE):
            return self._swap_values(game, legal)
        return self._fallback_values(game, legal)

    # ------------------------------------------------------------------- plate
    def tokens_left(self, game: SingleGame, seat: int) -> int:
        return expected_tokens_left(game, seat)

    def plate_gain(self, game: SingleGame, seat: int, space: int) -> float:
        """Change of the expected final plate bonus from a token on ``space``."""
        E = plate_expectation(game, self.w.choice)
        bits = game.plate_bits(seat)
        r = self.tokens_left(game, seat)
        return E[bits | 1 << space][max(0, r - 1)] - E[bits][r]

    def colour_multipliers(self, game: SingleGame, seat: int, figs: Figures) -> np.ndarray:
        """float [nf, 4]: the worth of each figure's colours (0: no free space accepts it)."""
        bits = game.plate_bits(seat)
        r = self.tokens_left(game, seat)
        key = (game.tables, bits, r)
        table = self._multipliers.get(key)
        if table is None:
            acc = game.tables.accepting
            free = ~bits & 0x3FF
            gains = [self.plate_gain(game, seat, s) if free >> s & 1 else 0.0 for s in range(10)]
            table = np.zeros((4, 4))
            for k in range(4):
                for c in range(4):
                    spaces = acc[k][c] & free
                    if spaces:
                        best = max(gains[s] for s in range(10) if spaces >> s & 1)
                        table[k, c] = max(0.05, 1.0 + self.w.kappa * best)
            self._multipliers[key] = table
        return table[list(figs.slots)]

    def value_table(self, mult: np.ndarray) -> np.ndarray:
        """float [256]: a figure's value for each colour code of its cells, given its colour
        multipliers [4]; plus the scorable marker when a colour it may take fills all four."""
        key = mult.tobytes()
        table = self._tables.get(key)
        if table is None:
            counts = COLOUR_COUNTS  # [256, 4]
            table = (self.W[counts] * mult).max(1) + _SCORABLE * ((counts == 4) & (mult > 0)).any(1)
            self._tables[key] = table
        return table

    # ------------------------------------------------------------------- slides
    def _final_turn(self, game: SingleGame) -> bool:
        """Whether this is the seat's last turn: only the immediate score counts."""
        return not game.tables.solo and game.end_triggered_by >= 0

    def _personal_weight(self, game: SingleGame) -> float:
        if self._final_turn(game):
            return 1.0
        spent = 1.0 - game.supply / game.config.initial_supply
        late = max(spent, max(game.tokens(q) for q in range(game.tables.num_players)) / 10.0) ** 2
        return self.w.personal_early + (self.w.personal_late - self.w.personal_early) * late

    def _level(self, f: np.ndarray, done: np.ndarray, nxt_value: np.ndarray, nxt: np.ndarray) -> np.ndarray:
        """alpha * f + (1 - alpha) * gamma * (best legal next value, [..., 64]); a stage with a
        scorable figure (scored at that slide) or no legal next slide keeps f."""
        w = self.w
        best = np.where(nxt, nxt_value, -np.inf).max(-1)
        ok = np.isfinite(best)
        blended = w.alpha * f + (1 - w.alpha) * w.gamma * np.where(ok, best, 0.0)
        return np.where(done | ~ok, f, blended)

    def plan_values(self, ev: Evaluator, s1: np.ndarray, z1: np.ndarray, solo: bool) -> np.ndarray:
        """Planning value of stages s1 [n, 16] with own-zone counts z1 [n, 16]."""
        f1, c1 = ev(s1)
        f2, c2 = ev.after_slides(s1)  # [n, 64]
        v1 = self._level(f1, c1, f2, slide_legal(z1))
        if self.depth < 3 or len(s1) == 0:
            return v1
        out = np.full(len(s1), -np.inf)
        top = np.argsort(-v1, kind="stable")[: self.top_k]  # the k best first slides, all at once
        z2 = zones_after_slides(z1[top], s1[top].astype(np.int64), solo)  # [k, 64, 16]
        f3, _ = ev.after_slides(slide_stages2(s1[top]).reshape(-1, 16))  # [k * 64, 64]
        v2 = self._level(f2[top], c2[top], f3.reshape(len(top), NUM_SLIDES, NUM_SLIDES), slide_legal(z2))
        out[top] = self._level(f1[top], c1[top], v2, slide_legal(z1[top]))
        return out

    def _slide_values(self, game: SingleGame, legal: np.ndarray) -> np.ndarray:
        w = self.w
        p = game.current
        solo = game.tables.solo
        s0 = stage_array(game, p)
        figs = figures(game, p)
        ev = Evaluator(self, game, p, figs)
        s1 = slide_stages(s0.astype(np.float32))[legal]
        _, complete = ev(s1)
        values = np.zeros(legal.size)
        rest = np.flatnonzero(~complete)
        if rest.size and not self._final_turn(game):
            z1 = zones_after_slides(own_zone_counts(game, p), s0, solo)[legal[rest]]
            values[rest] = self.plan_values(ev, s1[rest], z1, solo)
        for i in np.flatnonzero(complete):
            g1 = after(game, int(legal[i]))
            values[i] = w.completion + max(self.validation_value(g1, v) for v in g1.legal_actions())
        if solo:
            values -= self._discard_penalty(game, s0, legal, figs)
        else:
            n = personal_count(game, p)
            delta = (SLIDE_EJECT_SIDE[legal] == A.BOTTOM).astype(int) - (SLIDE_ENTRY_SIDE[legal] == A.BOTTOM)
            change = personal_score(n + delta) - personal_score(n)
            values += self._personal_weight(game) * change
        return values

    def _discard_penalty(self, game: SingleGame, s0: np.ndarray, legal: np.ndarray, figs: Figures) -> np.ndarray:
        """Solo: a colour with more than 5 of its 9 umbrellas discarded cannot be completed."""
        wanted = int(np.bitwise_or.reduce(figs.masks)) if len(figs) else 0
        ejected = s0[SLIDE_EJECT[legal]]
        dead = np.array([game.discarded(c) == 5 and wanted >> c & 1 for c in ejected], dtype=bool)
        return self.w.dead_colour * dead

    # ------------------------------------------------------------------- validation and passing
    def _gift(self, game: SingleGame, receiver: int, code: int) -> float:
        return float(self.W[gift_progress(game, receiver, code)])

    def validation_value(self, game: SingleGame, action: int) -> float:
        """Value of validate ``action`` for the current player (public information only)."""
        T = game.tables
        p = game.current
        slot, space = divmod(action - A.VALIDATE_START, 10)
        value = 2.0 + self.w.validation_bonus * self.plate_gain(game, p, space) - 0.01 * space_flexibility(game)[space]
        if T.solo and game.tokens(0) + 1 == T.solo_tokens:
            return value  # the last token: the game ends now
        if self._final_turn(game):
            return value
        code = game.top_tile(p, slot)
        hidden = (1 << slot) if game.stack_height(p, slot) >= 2 else 0  # the tile under it: left out
        g = after(game, action)
        if g.phase == A.PHASE_COVER and g.actor == p:  # solo: the flipped tile covers a slot
            covers = np.arange(A.COVER_START, A.NUM_ACTIONS)
            cover = int(covers[argmax_random(self._cover_values(g, covers, hidden), self._rng)])
            g.step(cover)
            hidden &= ~(1 << (cover - A.COVER_START))  # the flipped tile now shows there
        figs = figures(g, p, ignore=hidden)
        value += float(Evaluator(self, g, p, figs)(stage_array(g, p, np.float32))[0])
        if not T.solo:
            receiver = F.receiver(p, T.num_players)
            if T.num_players == 2:
                gift = min(self._gift(game, receiver, code & ~1), self._gift(game, receiver, code | 1))
            else:
                gift = self._gift(game, receiver, code ^ 1)
            value -= self.w.gift * gift
        return value

    # ------------------------------------------------------------------- other decisions
    def _stage_values(self, game: SingleGame, seat: int, ev: Evaluator, stages: np.ndarray) -> np.ndarray:
        """Planning value of stages [n, 16] of ``seat`` before its next slide."""
        zones = np.tile(own_zone_counts(game, seat), (len(stages), 1))
        f, done = ev(stages)
        nxt, _ = ev.after_slides(stages)
        return self._level(f, np.zeros_like(done), nxt, slide_legal(zones))

    def _cover_values(self, game: SingleGame, legal: np.ndarray, hidden: int = 0) -> np.ndarray:
        """The stage's value after each cover; slots in the bit mask ``hidden`` (a tile the
        mover cannot see yet, in a validation's projection) count no figure."""
        r = game.actor
        stage = stage_array(game, r, np.float32)
        values = []
        for a in legal:
            k = int(a) - A.COVER_START
            figs = figures(game, r, ignore=hidden | 1 << k) + tile_figures(game, r, [game.passing], [k])
            values.append(self._stage_values(game, r, Evaluator(self, game, r, figs), stage[None])[0])
        return np.array(values)

    def _next_values(self, game: SingleGame, legal: np.ndarray) -> np.ndarray:
        """The value of the mover's best next decision after each action of ``legal`` (0 when
        the game ends or another seat decides next)."""
        seat = game.actor
        values = np.zeros(legal.size)
        for i, a in enumerate(legal):
            g = after(game, int(a))
            if not g.done and g.actor == seat:
                values[i] = self.action_values(g, np.array(g.legal_actions())).max()
        return values

    def _swap_values(self, game: SingleGame, legal: np.ndarray) -> np.ndarray:
        p = game.current
        ev = Evaluator(self, game, p, figures(game, p, ignore=1 << game.validated_slot()))  # it leaves (decision 2)
        stages = np.array(
            [game.stage(p) if a in _PASSES else after(game, int(a)).stage(p) for a in legal], dtype=np.float32
        )
        return self._stage_values(game, p, ev, stages) + 1e-6 * np.isin(legal, _PASSES)  # pass unless it helps

    def _fallback_values(self, game: SingleGame, legal: np.ndarray) -> np.ndarray:
        p = game.current
        ev = Evaluator(self, game, p, figures(game, p))
        base = game.scores()[p]
        final = self._final_turn(game)
        values = []
        for a in legal:
            g = after(game, int(a))
            if g.phase == A.PHASE_VALIDATE and g.current == p:
                values.append(self.w.completion + max(self.validation_value(g, v) for v in g.legal_actions()))
                continue
            v = 0.0 if final else float(ev(stage_array(g, p, np.float32))[0])
            values.append(v + self._personal_weight(game) * (g.scores()[p] - base))
        return np.array(values)
