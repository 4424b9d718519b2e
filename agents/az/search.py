"""Gumbel search over determinized games, batched across many trees.

Gumbel AlphaZero (Danihelka, Guez, Schrittwieser, Silver, ICLR 2022) at the root:

1. draw a Gumbel variable ``g(a)`` for every legal action; the search considers the
   ``k = min(max_considered, legal)`` actions with the largest ``g(a) + logit(a)``;
2. **sequential halving** spreads the ``simulations`` over them: every round gives each
   remaining action the same number of visits, then keeps the better half by
   ``g(a) + logit(a) + sigma(q(a))``; the action left is played (it is a sample of the
   improved policy, so self-play needs no other exploration noise);
3. the **policy target** is the improved policy ``softmax(logit + sigma(completed q))``,
   where unvisited actions get the mixed value estimate ``v_mix``.

Inside the tree a node picks the action maximising ``improved(a) - N(a) / (1 + sum N)``
(the paper's deterministic selection).  ``sigma(q) = (c_visit + max N) * c_scale * q``
on Q values min-max rescaled to [0, 1] (the defaults of DeepMind's ``mctx``).

Hidden information: every simulation starts from a fresh :func:`umbrella_env.core.hidden.determinize`
copy of the root game from the **root actor's** point of view (the tiles under the stacks
resampled from the tiles that seat cannot see), so the true hidden tiles are never read.
The tree is keyed by action ids; after a validation the revealed tile differs between
determinizations, so a node reached with a legal action set other than the one it was
expanded with is evaluated as a leaf for that simulation and not expanded.

Values are vectors over absolute seats (one entry in solo); a node's Q is the entry of the
seat deciding there.  The network (see :mod:`agents.az.net`) answers in observer-relative
order, rotated here by the observer's seat.

Leaf values: the value network's, or (``rollout_weight`` lambda > 0, AlphaGo's mixing)
``(1 - lambda) * v_net + lambda * v_rollout``, where ``v_rollout`` comes from a playout of
the leaf's determinized game by the heuristic agent at every seat, as the ``search`` agent
plays them (:class:`HeuristicRollout`): to the end in solo, ``rollout_turns`` whole turns at
2-4 players.  The playouts are sequential Python, so they cost far more than a leaf of the
batched network (see ``docs/alphazero.md``); they make the search's Q values much less
noisy.

Batching: :meth:`GumbelSearch.run` searches many root games at once; every simulation
step descends one path in every tree and evaluates all the new leaves in **one** call of
``evaluate`` (one forward pass), so self-play never evaluates a batch of one per leaf.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from agents.az.net import SOLO_SCALE, HeuristicInputs
from agents.checks import MAX_C_SCALE, MAX_SIMULATIONS, check_flag, check_int, check_real
from agents.search import PLAYOUT_TURNS, figure_value, playout, playout_policy
from umbrella_env.core.hidden import determinize
from umbrella_env.core.single import SingleGame

#: sigma's ``c_scale`` (mctx's default); a smaller value trusts noisy Q values less.
DEFAULT_C_SCALE = 0.1
#: ``evaluate(observations [B, 899], heuristic inputs [B, 968] or None) -> (logits [B, 968],
#: observer-relative values [B, V])`` (the heuristic inputs of a network that reads them).
Evaluator = Callable[[np.ndarray, "np.ndarray | None"], tuple[np.ndarray, np.ndarray]]


# --------------------------------------------------------------------------- values
def outcome_values(game: SingleGame, margin_weight: float = 0.5, margin_scale: float = 10.0) -> np.ndarray:
    """float64 [V] the value of a finished (or truncated) game for every absolute seat.

    Solo: the final score / :data:`agents.az.net.SOLO_SCALE`.  2-4 players: a blend of the
    result, ``2 * credit - 1`` (+1 sole win, -1 loss, a shared win split: ``2/k - 1``; a
    truncated game is a draw, credit ``1/P``), and the score margin against the best other
    seat, ``clip(margin / margin_scale, -1, 1)``, weighted ``1 - margin_weight`` and
    ``margin_weight``.  The margin makes a narrow loss better than a rout, which the short
    training runs learn from much faster than from the result alone.
    """
    scores = np.asarray(game.scores(), dtype=np.float64)
    P = scores.size
    if P == 1:
        return scores / SOLO_SCALE
    ranks = game.ranks()
    if game.truncated:
        credit = np.full(P, 1.0 / P)
    else:
        winners = [r == 0 for r in ranks]
        credit = np.array(winners, dtype=np.float64) / max(1, sum(winners))
    best_other = np.array([max(scores[q] for q in range(P) if q != p) for p in range(P)])
    margin = np.clip((scores - best_other) / margin_scale, -1.0, 1.0)
    return (1.0 - margin_weight) * (2.0 * credit - 1.0) + margin_weight * margin


#: _ROTATE[P][observer]: index array turning observer-relative values into absolute ones.
_ROTATE = {P: [np.array([(p - o) % P for p in range(P)]) for o in range(P)] for P in range(1, 5)}


def to_absolute(values: np.ndarray, observer: int) -> np.ndarray:
    """Observer-relative values [V] (index j = seat observer + j) -> absolute seat order."""
    return values[_ROTATE[values.size][observer]] if values.size > 1 else values


def to_relative(values: np.ndarray, observer: int) -> np.ndarray:
    """Absolute seat order -> observer-relative (the network's and the value targets' order)."""
    return values[_ROTATE[values.size][-observer % values.size]] if values.size > 1 else values


class HeuristicRollout:
    """Leaf values from a playout by the heuristic agent (``depth=2`` at every seat, the
    ``search`` agent's default policy; :func:`agents.search.playout`).

    The playout runs on the leaf's game, a determinized copy, in place.  A finished game is
    valued by :func:`outcome_values`.  A playout cut off after ``turns`` whole turns (2-4
    players) is valued on scores adjusted by ``potential`` times the heuristic value of each
    seat's visible figures (as the ``search`` agent does): with ``m`` a seat's adjusted
    margin over the best other seat, ``(1 - margin_weight) * tanh(m / result_scale) +
    margin_weight * clip(m / margin_scale, -1, 1)``, the smooth counterpart of the result
    term of :func:`outcome_values`.
    """

    def __init__(
        self,
        turns: int = PLAYOUT_TURNS,
        potential: float = 0.3,
        margin_weight: float = 0.5,
        margin_scale: float = 10.0,
        result_scale: float = 5.0,
    ) -> None:
        self.turns = check_int("rollout_turns", turns)
        self.potential = potential
        self.margin_weight = margin_weight
        self.margin_scale = margin_scale
        self.result_scale = result_scale
        self.policy = playout_policy()

    def __call__(self, game: SingleGame, rng: np.random.Generator) -> np.ndarray:
        """float64 [V] the playout's value for every absolute seat; plays ``game`` on.

        Every random choice of the playout (ties, the heuristic's own) comes from ``rng``, so a
        search depends only on the generators it is given, not on earlier playouts."""
        self.policy.use_generator(rng)
        solo = game.tables.solo
        playout(self.policy, game, None if solo else self.turns, rng)
        if game.done:
            return outcome_values(game, self.margin_weight, self.margin_scale)
        P = game.tables.num_players
        scores = np.asarray(game.scores(), dtype=np.float64)
        adjusted = scores + self.potential * np.array([figure_value(self.policy, game, p) for p in range(P)])
        best_other = np.array([max(adjusted[q] for q in range(P) if q != p) for p in range(P)])
        m = adjusted - best_other
        w = self.margin_weight
        return (1.0 - w) * np.tanh(m / self.result_scale) + w * np.clip(m / self.margin_scale, -1.0, 1.0)


# --------------------------------------------------------------------------- schedule
@lru_cache(maxsize=256)
def considered_visits(max_considered: int, simulations: int) -> tuple[int, ...]:
    """Sequential halving as a schedule: the visit count an action must have to be
    simulated at each simulation index (``mctx.get_sequence_of_considered_visits``)."""
    if max_considered <= 1:
        return tuple(range(simulations))
    log2max = int(math.ceil(math.log2(max_considered)))
    sequence: list[int] = []
    visits = [0] * max_considered
    considered = max_considered
    while len(sequence) < simulations:
        extra = max(1, int(simulations / (log2max * considered)))
        for _ in range(extra):
            sequence.extend(visits[:considered])
            for i in range(considered):
                visits[i] += 1
        considered = max(2, considered // 2)
    return tuple(sequence[:simulations])


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    return e / e.sum()


# --------------------------------------------------------------------------- tree
class Node:
    """A decision in the tree: the actions legal when it was expanded, the network's
    logits and value there, and per action the visit count and the value sum (per seat)."""

    __slots__ = ("seat", "actions", "logits", "prior", "value", "N", "W", "children")

    def __init__(self, seat: int, actions: list[int], logits: np.ndarray, value: np.ndarray) -> None:
        n = len(actions)
        self.seat = seat
        self.actions = actions
        self.logits = logits
        self.prior = _softmax(self.logits)
        self.value = value
        self.N = np.zeros(n, dtype=np.int64)
        self.W = np.zeros((n, value.size), dtype=np.float64)
        self.children: list[Node | None] = [None] * n

    def q(self) -> np.ndarray:
        """Mean value of each action for this node's seat (0 where unvisited)."""
        return self.W[:, self.seat] / np.maximum(self.N, 1)

    def sigma(self, c_visit: float, c_scale: float) -> np.ndarray:
        """sigma(completed Q), Q rescaled to [0, 1] (``mctx.qtransform_completed_by_mix_value``)."""
        N = self.N
        total = N.sum()
        q = self.q()
        visited = N > 0
        if total > 0:
            weight = self.prior[visited].sum()
            mixed = (self.value[self.seat] + total * (self.prior[visited] @ q[visited]) / weight) / (1 + total)
        else:
            mixed = self.value[self.seat]
        completed = np.where(visited, q, mixed)
        lo, hi = completed.min(), completed.max()
        completed = (completed - lo) / max(hi - lo, 1e-8)
        return (c_visit + N.max()) * c_scale * completed

    def improved_policy(self, c_visit: float, c_scale: float) -> np.ndarray:
        return _softmax(self.logits + self.sigma(c_visit, c_scale))

    def select(self, c_visit: float, c_scale: float) -> int:
        """Interior selection: argmax of improved policy minus the visit share."""
        score = self.improved_policy(c_visit, c_scale) - self.N / (1 + self.N.sum())
        return int(np.argmax(score))


@dataclass
class SearchResult:
    """The search's answer at one root."""

    action: int  # the action to play
    actions: list[int]  # the legal actions of the root
    policy: np.ndarray  # float64 [len(actions)] improved policy (the policy target)
    value: np.ndarray  # float64 [V] root value estimate, absolute seats
    visits: np.ndarray  # int64 [len(actions)]
    inputs: np.ndarray | None = None  # float32 [968] the root's heuristic inputs (a network that reads them)


class GumbelSearch:
    """Gumbel search with sequential halving at the root (module doc).

    Args:
        evaluate: the network, batched (see :data:`Evaluator`).
        simulations: simulations per decision (>= 1).
        max_considered: actions considered at the root (``k`` of Gumbel-top-k).
        gumbel_scale: 1 for self-play; 0 plays the best action without root noise.
        c_visit, c_scale: the sigma transform's constants.
        margin_weight: blend of the multiplayer outcome values (:func:`outcome_values`).
        rollout_weight: lambda in [0, 1], the weight of heuristic playouts in leaf values
            (0: the value network alone, 1: the playouts alone).
        rollout_turns: whole turns a playout runs at 2-4 players (solo: to the end).
        heuristic_inputs: the network reads the heuristic's action values
            (:class:`~agents.az.net.HeuristicInputs`, computed for every node it evaluates).
        recall: the determinizations keep the hidden tiles that were tops once
            (:func:`~umbrella_env.core.hidden.determinize`); False forgets them.
    """

    def __init__(
        self,
        evaluate: Evaluator,
        simulations: int = 32,
        max_considered: int = 16,
        gumbel_scale: float = 1.0,
        c_visit: float = 50.0,
        c_scale: float = DEFAULT_C_SCALE,
        margin_weight: float = 0.5,
        rollout_weight: float = 0.0,
        rollout_turns: int = PLAYOUT_TURNS,
        heuristic_inputs: bool = False,
        recall: bool = False,
    ) -> None:
        rollout_weight = check_real("rollout_weight", rollout_weight, minimum=0.0, maximum=1.0)
        self.evaluate = evaluate
        self.simulations = check_int("simulations", simulations, maximum=MAX_SIMULATIONS)
        self.max_considered = check_int("max_considered", max_considered, minimum=2)
        self.gumbel_scale = float(gumbel_scale)
        self.c_visit = c_visit
        self.c_scale = check_real("c_scale", c_scale, positive=True, maximum=MAX_C_SCALE)
        self.margin_weight = margin_weight
        self.rollout_weight = float(rollout_weight)
        self.rollout = HeuristicRollout(rollout_turns, margin_weight=margin_weight) if rollout_weight > 0 else None
        self.inputs = HeuristicInputs() if heuristic_inputs else None
        self.recall = check_flag("recall", recall)
        #: Counters for the benchmark: simulations run, leaves sent to the network, seconds
        #: in the engine (determinize, step, legal actions, observe), in the playouts and in
        #: the heuristic inputs.
        self.stats: dict[str, float] = {
            "simulations": 0,
            "leaves": 0,
            "engine_s": 0.0,
            "rollout_s": 0.0,
            "inputs_s": 0.0,
        }

    def _expand(self, games: Sequence[SingleGame], legal: Sequence[list[int]]) -> tuple[list[Node], np.ndarray | None]:
        """New nodes for ``games`` (not done) from one batched network call, and the heuristic
        inputs it was given (None for a network without them)."""
        t0 = time.perf_counter()
        seats = [g.actor for g in games]
        obs = np.stack([g.observe(s) for g, s in zip(games, seats)])
        t1 = time.perf_counter()
        heur = None if self.inputs is None else np.stack([self.inputs(g, acts) for g, acts in zip(games, legal)])
        self.stats["engine_s"] += t1 - t0
        self.stats["inputs_s"] += time.perf_counter() - t1
        logits, values = self.evaluate(obs, heur)
        logits, values = logits.astype(np.float64), values.astype(np.float64)
        self.stats["leaves"] += len(games)
        nodes = [
            Node(s, acts, logits[i, acts], to_absolute(values[i], s)) for i, (s, acts) in enumerate(zip(seats, legal))
        ]
        return nodes, heur

    def run(
        self, games: Sequence[SingleGame], rngs: Sequence[np.random.Generator], simulations: int | None = None
    ) -> list[SearchResult]:
        """Search every game of ``games`` (not done; each with its generator) at once.

        ``simulations`` overrides the budget for this call (e.g. the seconds-budget agent
        runs the search in slices).  A root with one legal action gets no simulation.
        """
        sims = self.simulations if simulations is None else int(simulations)
        stats = self.stats
        legal = [g.legal_actions() for g in games]
        roots, root_inputs = self._expand(games, legal)
        gumbels = [self.gumbel_scale * rng.gumbel(size=len(acts)) for rng, acts in zip(rngs, legal)]
        active = [i for i, acts in enumerate(legal) if len(acts) > 1]
        schedules = {i: considered_visits(min(self.max_considered, len(legal[i])), sims) for i in active}
        cv, cs = self.c_visit, self.c_scale
        for sim in range(sims if active else 0):
            leaves: list[tuple[int, list[tuple[Node, int]], SingleGame, bool]] = []
            for i in active:
                root, game = roots[i], games[i]
                # root: the considered action with the scheduled visit count and the best score
                score = gumbels[i] + root.logits + root.sigma(cv, cs)
                score = np.where(root.N == schedules[i][sim], score, -np.inf)
                a = int(np.argmax(score))
                clock = time.perf_counter
                t0 = clock()
                g = determinize(game, root.seat, rngs[i], recall=self.recall)
                g.step(root.actions[a])
                engine = clock() - t0
                path = [(root, a)]
                node = root.children[a]
                expand = True
                while node is not None and not g.done:
                    t0 = clock()
                    same = g.legal_actions() == node.actions
                    engine += clock() - t0
                    if not same:  # another determinization revealed another tile
                        expand = False
                        break
                    b = node.select(cv, cs)
                    path.append((node, b))
                    t0 = clock()
                    g.step(node.actions[b])
                    engine += clock() - t0
                    node = node.children[b]
                stats["engine_s"] += engine
                if g.done:
                    self._backup(path, outcome_values(g, self.margin_weight))
                else:
                    leaves.append((i, path, g, expand))
            stats["simulations"] += len(active)
            if leaves:
                t0 = time.perf_counter()
                leaf_legal = [g.legal_actions() for _, _, g, _ in leaves]
                stats["engine_s"] += time.perf_counter() - t0
                new, _ = self._expand([g for _, _, g, _ in leaves], leaf_legal)
                lam = self.rollout_weight
                for (i, path, g, expand), node in zip(leaves, new):
                    if self.rollout is not None:  # after the expansion: the playout plays g on
                        t0 = time.perf_counter()
                        node.value = (1.0 - lam) * node.value + lam * self.rollout(g, rngs[i])
                        stats["rollout_s"] += time.perf_counter() - t0
                    if expand:
                        parent, a = path[-1]
                        parent.children[a] = node
                    self._backup(path, node.value)
        return [
            self._result(roots[i], gumbels[i], None if root_inputs is None else root_inputs[i])
            for i in range(len(games))
        ]

    @staticmethod
    def _backup(path: list[tuple[Node, int]], value: np.ndarray) -> None:
        for node, a in path:
            node.N[a] += 1
            node.W[a] += value

    def _result(self, root: Node, gumbel: np.ndarray, inputs: np.ndarray | None) -> SearchResult:
        if len(root.actions) == 1:
            return SearchResult(root.actions[0], root.actions, np.ones(1), root.value, root.N.copy(), inputs)
        sigma = root.sigma(self.c_visit, self.c_scale)
        score = np.where(root.N == root.N.max(), gumbel + root.logits + sigma, -np.inf)
        a = int(np.argmax(score))
        total = root.N.sum()
        value = (root.value + root.W.sum(axis=0)) / (1 + total)
        policy = _softmax(root.logits + sigma)
        return SearchResult(root.actions[a], root.actions, policy, value, root.N.copy(), inputs)
