"""The search agent: Monte Carlo search over determinized clones of the game.

At a decision with several legal actions the agent

1. ranks them with the heuristic agent's values and keeps the ``candidates`` best
   (every legal action in phases with few choices; every slide that scores now is kept);
2. runs simulations: each picks a candidate by UCB1, resamples the hidden tiles
   (:func:`umbrella_env.core.hidden.determinize`, a fresh sample per simulation), applies the
   candidate to that copy and plays on with a fast default policy — the heuristic agent
   at depth 2, without its covers' look-ahead, for every seat — up to a horizon: the end
   of the game in solo, ``horizon`` more whole turns at 2-4 players;
3. plays the candidate with the best mean value.

With ``common_numbers`` the simulations run in rounds instead of by UCB1: every round
draws one seed, and every candidate is simulated on the determinization and the playout
draws of that seed (common random numbers).  The candidates are then compared on the same
hidden tiles and the same tie-breaks, so the differences between their means are far less
noisy than the means themselves; the budget is spread evenly, ``simulations // candidates``
rounds (at least one).  It is not the default: in solo it has not been measured stronger
than UCB1 (docs/alphazero.md, "What limits the strength").

The value of a finished simulation is the acting seat's score in solo, and at 2-4
players its score minus the best opponent score, plus ``potential`` times the same
difference of the heuristic figure values (progress the horizon cut off).  The budget
is ``simulations`` per decision (:data:`DEFAULT_SIMULATIONS` when neither budget is given),
or ``seconds`` of wall time, or both, the search then ending at whichever comes first; at
least one simulation per candidate either way.
"""

from __future__ import annotations

import math
import time

import numpy as np

from agents.base import agent_generator
from agents.checks import MAX_SECONDS, MAX_SIMULATIONS, check_flag, check_int, check_name, check_real
from agents.common import argmax_random, figures, game_and_legal, slide_stages, stage_array
from agents.heuristic import Evaluator, HeuristicAgent
from umbrella_env.core import actions as A
from umbrella_env.core.hidden import determinize
from umbrella_env.core.single import SingleGame

#: Whole turns a 2-4 player playout runs by default (the ``search`` agent's ``horizon``).
PLAYOUT_TURNS = 6


def playout_policy(seed: int | None = None) -> HeuristicAgent:
    """The fast default policy of the playouts: the heuristic agent planning 2 own slides,
    without the covers' look-ahead (it made a solo ``search`` 31% slower for no measured gain)."""
    return HeuristicAgent(seed=seed, depth=2, look_ahead=False)


#: The simulations per decision when neither ``simulations`` nor ``seconds`` is given.
DEFAULT_SIMULATIONS = 200


class SearchAgent:
    """Flat Monte Carlo search with UCB1 at the root and heuristic rollouts (module doc).

    Args:
        simulations: simulations per decision (default :data:`DEFAULT_SIMULATIONS`, or no
            count when only ``seconds`` is given).
        seconds: wall-time budget per decision; with ``simulations`` too, the search ends
            at whichever budget is reached first.
        seed: seeds determinization, UCB ties and the rollout policy.
        candidates: root actions kept after the heuristic ranking.
        horizon: whole turns simulated after the decision at 2-4 players.
        exploration: the UCB1 constant, in points of score.
        potential: weight of the heuristic figure values at a 2-4 player horizon.
        common_numbers: simulate the candidates in rounds on common random numbers
            (module doc) instead of by UCB1.
        recall: the determinizations keep the hidden tiles that were tops once
            (:func:`~umbrella_env.core.hidden.determinize`); False forgets them.
    """

    needs_game = True

    def __init__(
        self,
        simulations: int | None = None,
        seconds: float | None = None,
        seed: int | None = None,
        name: str = "search",
        candidates: int = 8,
        horizon: int = PLAYOUT_TURNS,
        exploration: float = 3.0,
        potential: float = 0.3,
        common_numbers: bool = False,
        recall: bool = False,
    ) -> None:
        if simulations is not None:
            simulations = check_int("simulations", simulations, maximum=MAX_SIMULATIONS)
        if seconds is not None:
            seconds = check_real("seconds", seconds, positive=True, maximum=MAX_SECONDS)
        elif simulations is None:
            simulations = DEFAULT_SIMULATIONS
        candidates = check_int("candidates", candidates)
        horizon = check_int("horizon", horizon)
        exploration = check_real("exploration", exploration, minimum=0.0)
        potential = check_real("potential", potential)
        common_numbers = check_flag("common_numbers", common_numbers)
        recall = check_flag("recall", recall)
        name = check_name(name)
        self.name = name
        #: the simulation budget per decision; None: only ``seconds`` bounds the search
        self.simulations: int | None = simulations
        self.seconds = seconds
        self.candidates = candidates
        self.horizon = horizon
        self.exploration = exploration
        self.potential = potential
        self.common_numbers = common_numbers
        self.recall = recall
        self._seed(seed)

    def _seed(self, seed: int | None) -> None:
        self._rng = agent_generator(seed)
        child = None if seed is None else int(self._rng.integers(2**63))
        self.policy = playout_policy(child)
        self.ranker = HeuristicAgent(seed=child, depth=3)  # ranks the root actions

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._seed(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, game: SingleGame | None = None) -> int:
        game, legal = game_and_legal(self.name, action_mask, game)
        if legal.size == 1:
            return int(legal[0])
        prior = self.ranker.action_values(game, legal)
        cands = self._candidates(game, legal, prior)
        if cands.size == 1:
            return int(legal[cands[0]])
        means = self.search(game, legal[cands])
        # ties (e.g. identical outcomes) go to the heuristic's favourite
        return int(legal[cands[argmax_random(means + 1e-6 * (prior[cands] == prior[cands].max()), self._rng)]])

    def _candidates(self, game: SingleGame, legal: np.ndarray, prior: np.ndarray) -> np.ndarray:
        """Indices into ``legal`` of the root actions to simulate."""
        order = np.argsort(-prior, kind="stable")
        keep = list(order[: self.candidates])
        if game.phase == A.PHASE_SLIDE:  # every slide that scores now
            p = game.current
            figs = figures(game, p)
            if len(figs):
                ev = Evaluator(self.ranker, game, p, figs)
                _, complete = ev(slide_stages(stage_array(game, p, np.float32))[legal])
                keep += [i for i in np.flatnonzero(complete) if i not in keep]
        return np.array(keep, dtype=np.intp)

    # ------------------------------------------------------------------- simulations
    def search(self, game: SingleGame, actions: np.ndarray) -> np.ndarray:
        """Mean simulated value of each of ``actions`` (legal in ``game``)."""
        if self.common_numbers:
            return self._search_common(game, actions)
        n = len(actions)
        seat = game.actor
        visits = np.zeros(n)
        totals = np.zeros(n)
        deadline = None if self.seconds is None else time.perf_counter() + self.seconds
        budget = None if self.simulations is None else max(self.simulations, n)
        done = 0
        while True:
            if budget is not None and done >= budget:
                break
            if deadline is not None and done >= n and time.perf_counter() >= deadline:
                break
            if done < n:
                i = done
            else:
                means = totals / visits
                ucb = means + self.exploration * np.sqrt(math.log(done) / visits)
                i = argmax_random(ucb, self._rng)
            totals[i] += self.simulate(game, int(actions[i]), seat)
            visits[i] += 1
            done += 1
        return totals / np.maximum(visits, 1)

    def _search_common(self, game: SingleGame, actions: np.ndarray) -> np.ndarray:
        """Mean value of each of ``actions`` over rounds of common random numbers."""
        seat = game.actor
        totals = np.zeros(len(actions))
        deadline = None if self.seconds is None else time.perf_counter() + self.seconds
        budget = None if self.simulations is None else max(1, self.simulations // len(actions))
        rounds = 0
        while True:
            if budget is not None and rounds >= budget:
                break
            if deadline is not None and rounds >= 1 and time.perf_counter() >= deadline:
                break
            seed = int(self._rng.integers(2**63))
            for i, action in enumerate(actions):
                totals[i] += self.simulate(game, int(action), seat, np.random.default_rng(seed))
            rounds += 1
        return totals / rounds

    def simulate(self, game: SingleGame, action: int, seat: int, rng: np.random.Generator | None = None) -> float:
        """One determinized playout of ``action`` from ``seat``'s point of view; with ``rng``,
        every draw of it (the hidden tiles, the playout's ties) comes from ``rng``."""
        if rng is not None:
            self.policy.use_generator(rng)
        rng = self._rng if rng is None else rng
        g = determinize(game, seat, rng, recall=self.recall)
        g.step(action)
        playout(self.policy, g, None if g.tables.solo else self.horizon, rng)
        return self.evaluate(g, seat)

    def evaluate(self, g: SingleGame, seat: int) -> float:
        scores = g.scores()
        if g.tables.solo:
            return float(scores[0])
        P = g.tables.num_players
        best_other = max(range(P), key=lambda q: (scores[q], -q) if q != seat else (-(10**9), 0))
        value = float(scores[seat] - scores[best_other])
        if self.potential and not g.done:
            value += self.potential * (self._figure_value(g, seat) - self._figure_value(g, best_other))
        return value

    def _figure_value(self, g: SingleGame, seat: int) -> float:
        return figure_value(self.policy, g, seat)


def playout(policy: HeuristicAgent, g: SingleGame, turns: int | None, rng: np.random.Generator) -> None:
    """Play ``g`` on in place, ``policy`` choosing for every seat (ties broken by ``rng``):
    to the end of the game, or until ``turns`` more whole turns have begun."""
    stop = None if turns is None else g.turn + turns
    while not g.done and (stop is None or g.turn < stop):
        legal = g.legal_actions()
        if len(legal) == 1:
            g.step(legal[0])
            continue
        legal_arr = np.array(legal)
        g.step(int(legal_arr[argmax_random(policy.action_values(g, legal_arr), rng)]))


def figure_value(policy: HeuristicAgent, g: SingleGame, seat: int) -> float:
    """The heuristic value of ``seat``'s visible figures (progress a cut-off playout left)."""
    figs = figures(g, seat)
    return float(Evaluator(policy, g, seat, figs)(stage_array(g, seat, np.float32))[0])
