"""Tournament statistics: win rates with Wilson intervals, mean scores, OpenSkill
ratings, Bradley-Terry (Elo) ratings with bootstrapped intervals, head-to-head rates,
solo merit bands (:func:`summarise`, the report's numbers).

Win credits and merit bands are defined once, in :mod:`umbrella_env.match`.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from umbrella_env.core.facts import MERIT_BANDS, merit_band
from umbrella_env.evaluation.bradley_terry import Rating, bradley_terry
from umbrella_env.evaluation.tournament import TournamentResult
from umbrella_env.match import outcome_ranks, win_credits

Z95 = 1.959963984540054  # two-sided 95% quantile of the standard normal


def wilson_interval(successes: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion (fractional successes allowed; ``n`` may be an
    effective sample size, :func:`by_deal`)."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # Clamped to contain p exactly (rounding at p = 0 or 1).
    return (max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half)))


#: Two-sided 95% quantiles of Student's t with 1 to 9 degrees of freedom (the expansion of
#: :func:`t95` is off by up to 4e-3 there).
_T95_SMALL = (12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836, 2.446911851, 2.364624252,
              2.306004135, 2.262157163)  # fmt: skip


def t95(df: int) -> float:
    """The two-sided 95% quantile of Student's t with ``df`` >= 1 degrees of freedom: a
    table up to 9, then the Cornish-Fisher expansion of Abramowitz & Stegun 26.7.5 in
    powers of 1/df (off by less than 1e-5 from 10 on; it tends to :data:`Z95`)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if df <= len(_T95_SMALL):
        return _T95_SMALL[df - 1]
    z = Z95
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


def mean_interval(values: Sequence[float], z: float | None = None) -> tuple[float, float, float]:
    """(mean, low, high): the 95% Student-t interval of the mean (nan bounds below 2
    values); given ``z``, the normal-approximation interval ``mean +- z s.e.`` instead.
    With few games the t quantile matters: 2.78 for 5 values, 2.09 for 20, 1.97 for 200."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return (math.nan, math.nan, math.nan)
    m = float(x.mean())
    if x.size < 2:
        return (m, math.nan, math.nan)
    q = t95(x.size - 1) if z is None else z
    half = q * float(x.std(ddof=1)) / math.sqrt(x.size)
    return (m, m - half, m + half)


#: The fewest players at which a report's intervals count the games of one deal as one
#: sample (:func:`by_deal`): a deal is played in every seating, 6 or 24 games at 3 or 4
#: players, which share its luck (a mean score's standard error 1.27-1.32 times the one
#: over games for the heuristic, 2,000-2,400 deals, 2026-12-07); the 2 seatings of a
#: 2-player deal do not (0.95-0.99, 1,500 deals), so 2-player intervals stay over games.
DEAL_CLUSTERED_PLAYERS = 3


def by_deal(samples: Sequence[Sequence[tuple[float, float]]]) -> tuple[tuple[float, float, float], float]:
    """The 95% interval of an agent's mean score, and the effective number of games of its
    win rate, from its games grouped by deal (``samples[d]``: its (score, credit) pairs on
    deal ``d``): a cluster-robust estimate.  The score interval is Student's t over the
    deals' means (every deal is played in every seating, so each holds as many of the
    agent's games; nan bounds below 2 deals); the effective number of games is the games
    over the design effect of the credits (their variance over deals' means relative to the
    variance over games), for the Wilson interval (the deal count below 2 deals; the games
    when the credits do not vary)."""
    games = [v for deal in samples for v in deal]
    n, k = len(games), len(samples)
    mean = float(np.mean([s for s, _ in games])) if games else math.nan
    if k < 2:
        return (mean, math.nan, math.nan), float(k)
    score_means = np.array([np.mean([s for s, _ in deal]) for deal in samples])
    half = t95(k - 1) * float(score_means.std(ddof=1)) / math.sqrt(k)
    credits = np.array([c for _, c in games])
    credit_means = np.array([np.mean([c for _, c in deal]) for deal in samples])
    naive = float(credits.var(ddof=1)) / n
    clustered = float(credit_means.var(ddof=1)) / k
    effective = float(n) if naive == 0 or clustered == 0 else n * naive / clustered
    return (mean, mean - half, mean + half), effective


#: Orderings of the games averaged by :func:`openskill_ratings` (fewer past 400,000 updates).
RATING_ORDERS = 16


def rating_orders(num_games: int) -> int:
    """How many orderings of ``num_games`` games :func:`openskill_ratings` averages."""
    return max(1, min(RATING_ORDERS, 400_000 // max(1, num_games)))


def openskill_ratings(result: TournamentResult) -> list[tuple[float, float]]:
    """(mu, sigma) per agent: OpenSkill Plackett-Luce, every game rated by its ranks
    (:func:`~umbrella_env.match.outcome_ranks`: a truncated game is a draw).

    Sequential rating depends on the order of the games (the last ones weigh most: two
    equal agents can end 5 mu apart after 40 games), and a tournament's games have no
    natural order, so mu and sigma are means over ``RATING_ORDERS`` orderings: game 0 of
    every table, then game 1, ...; and seeded shuffles.  An agent holding several seats
    of one game takes the mean of its seats' updates.
    """
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    G = result.games_per_table
    records = sorted(result.records, key=lambda r: (r.index % G, r.table))
    k = rating_orders(len(records))
    rng = np.random.default_rng(np.random.SeedSequence(result.seed, spawn_key=(2,)))
    orders = [np.arange(len(records))] + [rng.permutation(len(records)) for _ in range(k - 1)]
    totals = np.zeros((len(result.labels), 2))
    for order in orders:
        ratings = [model.rating() for _ in result.labels]
        for i in order:
            rec = records[i]
            new = model.rate([[ratings[a]] for a in rec.seats], ranks=list(outcome_ranks(rec.ranks, rec.truncated)))
            for a in set(rec.seats):
                mine = [team[0] for team, seat_agent in zip(new, rec.seats) if seat_agent == a]
                ratings[a] = (
                    mine[0]
                    if len(mine) == 1
                    else model.rating(
                        mu=sum(r.mu for r in mine) / len(mine), sigma=sum(r.sigma for r in mine) / len(mine)
                    )
                )
        totals += [(r.mu, r.sigma) for r in ratings]
    return [(float(mu), float(sigma)) for mu, sigma in totals / len(orders)]


#: Bootstrap resamples of the Bradley-Terry (Elo) fit.
ELO_BOOTSTRAP = 1000


def elo_ratings(result: TournamentResult) -> list[Rating]:
    """Bradley-Terry ratings on the Elo scale (mean 1500) with 95% intervals from
    :data:`ELO_BOOTSTRAP` resamples of the games (seeded by the tournament's seed)."""
    games = [(rec.seats, outcome_ranks(rec.ranks, rec.truncated)) for rec in result.records]
    seed = int(np.random.SeedSequence(result.seed, spawn_key=(3,)).generate_state(1)[0])
    return bradley_terry(games, len(result.labels), bootstrap=ELO_BOOTSTRAP, seed=seed)


def _ahead(x: float, y: float) -> float:
    """1 if x > y, 1/2 if equal, else 0."""
    return 1.0 if x > y else 0.5 if x == y else 0.0


def summarise(result: TournamentResult) -> dict[str, Any]:
    """The report's numbers as a JSON-able dict (see the module doc for definitions)."""
    n = len(result.labels)
    P = result.num_players
    scores: list[list[int]] = [[] for _ in range(n)]
    wins = [0.0] * n
    truncated = [0] * n
    seat_counts = [[0] * P for _ in range(n)]
    h2h_sum = np.zeros((n, n))
    h2h_n = np.zeros((n, n), dtype=np.int64)
    seat_wins = [0.0] * P
    seat_scores: list[list[int]] = [[] for _ in range(P)]
    clustered = not result.solo and P >= DEAL_CLUSTERED_PLAYERS
    deals: list[dict[tuple[int, int], list[tuple[float, float]]]] = [{} for _ in range(n)]
    for rec in result.records:
        credits = win_credits(rec.ranks, rec.truncated)
        ranks = outcome_ranks(rec.ranks, rec.truncated)  # a truncated game is a draw here too
        for s, a in enumerate(rec.seats):
            scores[a].append(rec.scores[s])
            deals[a].setdefault((rec.table, rec.key), []).append((rec.scores[s], credits[s]))
            wins[a] += credits[s]
            truncated[a] += rec.truncated
            seat_counts[a][s] += 1
            seat_wins[s] += credits[s]
            seat_scores[s].append(rec.scores[s])
            for t, b in enumerate(rec.seats):
                if a != b:
                    h2h_n[a, b] += 1
                    h2h_sum[a, b] += _ahead(-ranks[s], -ranks[t])
    if result.solo:
        # Paired by deal: game g of every agent is the same deal.
        G = result.games_per_table
        by_table = {(rec.table, rec.index % G): rec.scores[0] for rec in result.records}
        for a, b in itertools.permutations(range(n), 2):
            for g in range(G):
                sa, sb = by_table[(a, g)], by_table[(b, g)]
                h2h_n[a, b] += 1
                h2h_sum[a, b] += _ahead(sa, sb)
        # The paired difference of the mean scores: on the same deals it is far more precise
        # than two agents' separate intervals (the deal's luck cancels out).
        paired: list[list[list[float] | None]] = [[None] * n for _ in range(n)]
        for a, b in itertools.permutations(range(n), 2):
            paired[a][b] = list(mean_interval([by_table[(a, g)] - by_table[(b, g)] for g in range(G)]))
    agents: list[dict[str, Any]] = []
    ratings = None if result.solo else openskill_ratings(result)
    elo = None if result.solo else elo_ratings(result)
    for a in range(n):
        games = len(scores[a])
        mean, lo, hi = mean_interval(scores[a])
        effective: float = games
        if clustered:  # the games of one deal share its luck: intervals over deals (by_deal)
            (mean, lo, hi), effective = by_deal(list(deals[a].values()))
        entry: dict[str, Any] = {
            "label": result.labels[a],
            "spec": result.specs[a],
            "games": games,
            "mean_score": mean,
            "score_ci": [lo, hi],
            "score_sd": float(np.std(scores[a], ddof=1)) if games > 1 else math.nan,
            "truncated": truncated[a],
            "seat_games": seat_counts[a],
        }
        if result.solo:
            entry["median_score"] = float(np.median(scores[a])) if games else math.nan
            entry["min_score"] = int(min(scores[a])) if games else None
            entry["max_score"] = int(max(scores[a])) if games else None
            bands = Counter(merit_band(s) for s in scores[a])
            entry["merit_bands"] = {name: bands.get(name, 0) for _, _, name in MERIT_BANDS}
            entry["histogram"] = {str(k): v for k, v in sorted(Counter(scores[a]).items())}
        else:
            assert ratings is not None
            mu, sigma = ratings[a]
            entry["wins"] = wins[a]
            entry["win_rate"] = wins[a] / games if games else math.nan
            entry["win_ci"] = list(wilson_interval(wins[a] / games * effective, effective) if games else (0.0, 1.0))
            if clustered:
                entry.update(deals=len(deals[a]), effective_games=effective)
            entry.update(mu=mu, sigma=sigma, ordinal=mu - 3 * sigma)
            assert elo is not None
            entry.update(elo=elo[a].elo, elo_ci=[elo[a].low, elo[a].high])
        agents.append(entry)
    turns = [r.turns for r in result.records]
    out: dict[str, Any] = {
        "mode": "solo" if result.solo else "multiplayer",
        "intervals_over": "deals" if clustered else "games",
        "num_players": P,
        "plate_level": result.plate_level,
        "max_turns": result.max_turns,
        "seed": result.seed,
        "games_per_table": result.games_per_table,
        "tables": [[result.labels[a] for a in t] for t in result.tables],
        "games": len(result.records),
        "multi_seat": any(len(set(r.seats)) < len(r.seats) for r in result.records),
        "truncated_games": sum(r.truncated for r in result.records),
        "mean_turns": float(np.mean(turns)) if turns else math.nan,
        "elapsed_seconds": result.elapsed,
        "command": result.command(),
        "agents": agents,
        "head_to_head": {
            "labels": list(result.labels),
            "rate": [[float(h2h_sum[i, j] / h2h_n[i, j]) if h2h_n[i, j] else None for j in range(n)] for i in range(n)],
            "n": h2h_n.tolist(),
        },
    }
    if result.solo:
        out["paired"] = {"labels": list(result.labels), "difference": paired}
    else:
        out["rating_orders"] = rating_orders(len(result.records))
        out["seats"] = [
            {
                "seat": s,
                "games": len(seat_scores[s]),
                "win_rate": seat_wins[s] / len(seat_scores[s]) if seat_scores[s] else math.nan,
                "mean_score": float(np.mean(seat_scores[s])) if seat_scores[s] else math.nan,
            }
            for s in range(P)
        ]
    return out


def ranked(summary: dict[str, Any]) -> list[dict[str, Any]]:
    key = "mean_score" if summary["mode"] == "solo" else "ordinal"
    return sorted(summary["agents"], key=lambda e: -e[key] if not math.isnan(e[key]) else math.inf)
