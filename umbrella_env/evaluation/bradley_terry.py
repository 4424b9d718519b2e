"""Bradley–Terry ratings on the Elo scale, with bootstrapped 95% intervals over games.

    ratings = bradley_terry([((0, 1), (0, 1)), ((1, 2, 0), (0, 0, 1)), ...], num_agents=3)
    ratings[0].elo, ratings[0].low, ratings[0].high

The model: agent ``i`` has a strength ``gamma_i`` and beats agent ``j`` with probability
``gamma_i / (gamma_i + gamma_j)``.  A game of 2-4 players counts as one result for every
pair of seats held by different agents (the better rank wins; equal ranks give each half
a win), so a 4-player game gives 6 results.  Those results are not independent, which is
why the intervals come from resampling whole games, not from the likelihood.

Strengths are fitted by maximum likelihood with the MM algorithm of Hunter (2004), "MM
algorithms for generalized Bradley-Terry models", Annals of Statistics 32(1), all agents
updated at once (each step raises the likelihood).  ``prior`` virtual drawn games between
every pair of agents keep the fit finite when an agent won (or lost) every game, and tie
together agents that never met; with hundreds of games per pair their pull is a few Elo.

Scale: ``elo_i = 400 * log10(gamma_i) + c``, so 400 Elo points are odds of 10 to 1 and
200 points a 76% win chance.  By default ``c`` puts the mean rating at 1500
(``anchor_elo``); with ``anchor=k`` agent ``k`` is rated exactly ``anchor_elo`` instead
and the others' intervals are relative to it (its own interval is a single point).

Intervals: the games are resampled with replacement ``bootstrap`` times (a seeded
``numpy`` Generator), each resample is refitted, and ``low``/``high`` are the 2.5th and
97.5th percentiles of an agent's rating.  An agent that won every comparison or lost
every one (or whose rating every resample repeats, e.g. one result repeated) gets no
interval (nan): resampling its games cannot vary its record, and the percentiles would
be the prior's doing (a 20-0 record gave a zero-width interval).  The resampling draws how often each distinct
game outcome appears (multinomial counts), which is the same distribution as drawing
the games one by one, at a cost independent of the number of games.

Pure NumPy; it imports nothing from the rest of the project.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["Rating", "bradley_terry", "ELO_PER_NEPER"]

#: Elo points per natural-log unit of strength: ``400 / ln(10)``.
ELO_PER_NEPER = 400.0 / math.log(10.0)

_TOL = 1e-10  # convergence: largest change of a log-strength in one MM step
_MAX_ITER = 100_000


@dataclass(frozen=True)
class Rating:
    """An agent's Bradley–Terry rating on the Elo scale and its 95% bootstrap interval.

    ``low`` and ``high`` are nan when no bootstrap was asked for (``bootstrap=0``) and for
    an agent whose record resampling cannot vary (module doc).
    """

    elo: float
    low: float
    high: float


Game = tuple[Sequence[int], Sequence[float]]


def bradley_terry(
    games: Sequence[Game],
    num_agents: int,
    *,
    bootstrap: int = 1000,
    seed: int | None = 0,
    anchor: int | None = None,
    anchor_elo: float = 1500.0,
    prior: float = 1.0,
) -> list[Rating]:
    """Bradley–Terry ratings of agents ``0 .. num_agents-1`` from multi-player games.

    ``games``: one ``(agents, ranks)`` pair per game, both by seat: ``agents[s]`` the id of
    the agent in seat ``s``, ``ranks[s]`` its finishing rank (lower is better, 0 the winner;
    equal ranks tie).  Games have 2 or more seats; one agent may hold several seats (those
    seats are not compared with each other).  Every agent must meet another agent in at
    least one game.

    ``bootstrap``: number of resamples of the games for the intervals (0: no intervals);
    ``seed``: seed of the resampling; ``anchor``/``anchor_elo``: the mean rating is
    ``anchor_elo`` (default), or agent ``anchor`` is (an agent that won or lost every
    comparison has a rating set by the prior, which moves the mean: compare the others by
    their differences, or anchor on one of them); ``prior``: virtual drawn games
    between every pair of agents (> 0).

    Returns one :class:`Rating` per agent, in id order.  Raises ``ValueError`` naming the
    first problem found in the input; nothing is computed before the input is checked.
    """
    games = list(games)
    num_agents, bootstrap, anchor = _check_options(games, num_agents, bootstrap, seed, anchor, anchor_elo, prior)
    types, counts = _outcome_types(games, num_agents)
    _check_everyone_played(types, num_agents)

    # Wins of i over j for each distinct game outcome: [U, K, K].
    K = num_agents
    wins_by_type = np.zeros((len(types), K, K))
    for u, pairs in enumerate(types):
        for i, j, half_wins in pairs:  # half_wins of i over j in {0, 1, 2}
            wins_by_type[u, i, j] += half_wins / 2
            wins_by_type[u, j, i] += (2 - half_wins) / 2

    n_games = int(counts.sum())
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n_games, counts / n_games, size=bootstrap) if bootstrap else np.zeros((0, len(types)))
    weights = np.vstack([counts[None, :], draws]).astype(float)  # row 0: the games as played
    wins = np.einsum("ru,uij->rij", weights, wins_by_type)
    wins += (prior / 2) * (1.0 - np.eye(K))  # prior: virtual draws between every pair

    theta = _fit(wins)  # [R, K] natural-log strengths, mean 0 in each row
    elo = ELO_PER_NEPER * theta
    # The mean includes an agent that won (or lost) every comparison, whose rating the prior
    # and the game count alone set: the others' absolute ratings move with it, their
    # differences hardly do (leaving it out made them jump at its first win instead).
    elo += anchor_elo - (elo.mean(axis=1, keepdims=True) if anchor is None else elo[:, anchor : anchor + 1])

    if bootstrap:
        low, high = np.percentile(elo[1:], [2.5, 97.5], axis=0)
        # Resampling cannot vary a record that never varies: an agent that won (or lost)
        # every comparison is held near the prior in every resample, and when every resample
        # gives an agent the same rating its interval says nothing.  No interval for them.
        played = np.einsum("u,uij->ij", counts, wins_by_type)
        undetermined = (played.sum(axis=1) == 0) | (played.sum(axis=0) == 0) | (high - low < 1e-9)
        if anchor is not None:
            undetermined[anchor] = False  # a single point by definition
        low[undetermined] = high[undetermined] = math.nan
    else:
        low = high = np.full(K, math.nan)
    return [Rating(float(elo[0, k]), float(low[k]), float(high[k])) for k in range(K)]


def _fit(wins: NDArray[np.float64]) -> NDArray[np.float64]:
    """MM fit of every row of ``wins[R, K, K]`` at once; log-strengths ``[R, K]``, mean 0.

    Update (Hunter 2004): ``gamma_i <- W_i / sum_j N_ij / (gamma_i + gamma_j)``,
    ``W_i`` the wins of ``i``, ``N_ij`` the games between ``i`` and ``j``; then rescale to
    geometric mean 1 (the likelihood depends only on ratios).
    """
    games = wins + np.swapaxes(wins, 1, 2)
    total_wins = wins.sum(axis=2)
    theta = np.zeros(total_wins.shape)
    active = np.arange(len(theta))  # rows not yet converged
    for _ in range(_MAX_ITER):
        gamma = np.exp(theta[active])
        denom = (games[active] / (gamma[:, :, None] + gamma[:, None, :])).sum(axis=2)
        new = np.log(total_wins[active] / denom)
        new -= new.mean(axis=1, keepdims=True)
        change = np.abs(new - theta[active]).max(axis=1)
        theta[active] = new
        active = active[change > _TOL]
        if not active.size:
            return theta
    raise RuntimeError(f"Bradley-Terry fit did not converge in {_MAX_ITER} iterations")  # pragma: no cover


def _check_options(
    games: list[Game],
    num_agents: object,
    bootstrap: object,
    seed: object,
    anchor: object,
    anchor_elo: object,
    prior: object,
) -> tuple[int, int, int | None]:
    k = _integer(num_agents)
    if k is None or k < 2:
        raise ValueError(f"num_agents must be an integer >= 2, got {num_agents!r}")
    b = _integer(bootstrap)
    if b is None or b < 0:
        raise ValueError(f"bootstrap must be a non-negative integer (0: no intervals), got {bootstrap!r}")
    seed_int = _integer(seed)
    if seed is not None and (seed_int is None or seed_int < 0):
        raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")
    a = _integer(anchor)
    if anchor is not None and (a is None or not 0 <= a < k):
        raise ValueError(f"anchor must be None or an agent id in 0..{k - 1}, got {anchor!r}")
    if _real(anchor_elo) is None:
        raise ValueError(f"anchor_elo must be a finite number, got {anchor_elo!r}")
    p = _real(prior)
    if p is None or p <= 0:
        raise ValueError(f"prior must be a positive finite number of virtual games, got {prior!r}")
    if not games:
        raise ValueError("games is empty: Bradley-Terry ratings need at least one game")
    return k, b, a


def _integer(value: object) -> int | None:
    """``value`` as an int if it is an integer (Python or NumPy, not a bool), else None."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        return None
    return int(value)


def _real(value: object) -> float | None:
    """``value`` as a float if it is a finite real number (not a bool), else None."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return None
    x = float(value)
    return x if math.isfinite(x) else None


_Pairs = tuple[tuple[int, int, int], ...]


def _outcome_types(games: list[Game], num_agents: int) -> tuple[list[_Pairs], NDArray[np.float64]]:
    """Check every game and group the games by outcome.

    A game's outcome is its sorted pairwise results ``(i, j, half-wins of i over j)`` with
    ``i < j``, so seat order does not matter.  Returns the distinct outcomes (sorted, so
    the result does not depend on the order of the games) and how many games had each.
    """
    tally: dict[_Pairs, int] = {}
    for g, game in enumerate(games):
        agents, ranks = _check_game(g, game, num_agents)
        pairs = []
        n = len(agents)
        for s in range(n):
            for t in range(s + 1, n):
                a, b = int(agents[s]), int(agents[t])
                if a == b:
                    continue
                half = 2 if ranks[s] < ranks[t] else 0 if ranks[s] > ranks[t] else 1  # of a over b
                pairs.append((a, b, half) if a < b else (b, a, 2 - half))
        key = tuple(sorted(pairs))
        tally[key] = tally.get(key, 0) + 1
    types = sorted(tally)
    return types, np.array([tally[t] for t in types], dtype=float)


def _check_game(g: int, game: object, num_agents: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    if not isinstance(game, (tuple, list)) or len(game) != 2:
        raise ValueError(f"games[{g}] must be a pair (agents by seat, ranks by seat), got {game!r}")
    agents = np.asarray(game[0])
    ranks = np.asarray(game[1])
    if agents.ndim != 1 or agents.size < 2:
        raise ValueError(f"games[{g}]: agents must be a flat sequence of 2 or more agent ids, got {game[0]!r}")
    if agents.dtype == bool or not np.issubdtype(agents.dtype, np.integer):
        raise ValueError(f"games[{g}]: agent ids must be integers, got {game[0]!r}")
    if ranks.ndim != 1 or ranks.shape != agents.shape:
        raise ValueError(
            f"games[{g}]: {agents.size} agents but ranks {game[1]!r}: expected one rank per seat ({agents.size})"
        )
    if ranks.dtype == bool or not np.issubdtype(ranks.dtype, np.number) or not np.isfinite(ranks).all():
        raise ValueError(f"games[{g}]: ranks must be finite numbers (lower is better), got {game[1]!r}")
    bad = agents[(agents < 0) | (agents >= num_agents)]
    if bad.size:
        raise ValueError(f"games[{g}]: agent id {int(bad[0])} out of range 0..{num_agents - 1}")
    return agents.astype(np.int64), ranks.astype(float)


def _check_everyone_played(types: list[_Pairs], num_agents: int) -> None:
    met = np.zeros(num_agents, dtype=bool)
    for pairs in types:
        for i, j, _ in pairs:
            met[i] = met[j] = True
    if not met.all():
        missing = np.flatnonzero(~met).tolist()
        raise ValueError(
            f"agents {missing} met no other agent in any game: their rating would come from the prior alone"
        )
