"""Bradley–Terry ratings (umbrella_env.evaluation.bradley_terry): fit, scale, intervals, input checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from umbrella_env.evaluation.bradley_terry import ELO_PER_NEPER, Rating, bradley_terry

TRUE_ELO = np.array([200.0, 0.0, -200.0])


def simulate(n: int, seed: int, true_elo: np.ndarray = TRUE_ELO) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """``n`` 2-player games between random pairs of distinct agents, won as the BT model says."""
    rng = np.random.default_rng(seed)
    k = len(true_elo)
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k  # a different agent
    p_a = 1.0 / (1.0 + 10.0 ** ((true_elo[b] - true_elo[a]) / 400.0))
    a_wins = rng.random(n) < p_a
    return [((int(x), int(y)), (0, 1) if w else (1, 0)) for x, y, w in zip(a, b, a_wins, strict=True)]


def elos(ratings: list[Rating]) -> np.ndarray:
    return np.array([r.elo for r in ratings])


def test_recovers_known_strengths() -> None:
    ratings = bradley_terry(simulate(3000, seed=1), 3, bootstrap=200)
    fitted = elos(ratings)
    assert fitted.mean() == pytest.approx(1500.0)  # default scale: mean rating 1500
    np.testing.assert_allclose(fitted - 1500.0, TRUE_ELO, atol=40)
    for r in ratings:
        assert r.low < r.elo < r.high
        assert r.high - r.low < 80  # about +-2 standard errors of ~10 Elo


def test_two_agents_match_the_closed_form() -> None:
    # With two agents the maximum-likelihood log-odds are log(wins / losses), prior included.
    games = [((0, 1), (0, 1))] * 7 + [((1, 0), (0, 1))] * 3 + [((0, 1), (0, 0))] * 2
    prior = 1.0
    wins, losses = 7 + 1 + prior / 2, 3 + 1 + prior / 2  # a draw is half a win each
    ratings = bradley_terry(games, 2, bootstrap=0, prior=prior)
    assert ratings[0].elo - ratings[1].elo == pytest.approx(400 * math.log10(wins / losses), abs=1e-6)
    assert ratings[0].elo + ratings[1].elo == pytest.approx(3000.0)


def test_fit_solves_the_likelihood_equations_for_multiplayer_games() -> None:
    # At the maximum, each agent's wins equal its expected wins: W_i = sum_j N_ij P(i beats j).
    rng = np.random.default_rng(7)
    games = []
    for _ in range(300):
        n = int(rng.integers(2, 5))
        agents = rng.choice(5, size=n, replace=False)
        ranks = rng.integers(0, n, size=n) + (agents == 0)  # ties happen; agent 0 a bit worse
        games.append((agents.tolist(), ranks.tolist()))
    prior = 0.5
    ratings = bradley_terry(games, 5, bootstrap=0, prior=prior)
    wins = np.full((5, 5), prior / 2) * (1 - np.eye(5))
    for agents, ranks in games:
        for s in range(len(agents)):
            for t in range(len(agents)):
                if s != t:
                    wins[agents[s], agents[t]] += 1.0 if ranks[s] < ranks[t] else 0.5 if ranks[s] == ranks[t] else 0.0
    theta = elos(ratings) / ELO_PER_NEPER
    p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))  # p[i, j] = P(i beats j)
    expected = ((wins + wins.T) * p * (1 - np.eye(5))).sum(axis=1)
    np.testing.assert_allclose(expected, wins.sum(axis=1), rtol=1e-7)
    assert ratings[0].elo == min(r.elo for r in ratings)


def test_seat_order_and_game_order_do_not_matter() -> None:
    rng = np.random.default_rng(3)
    games = [(rng.permutation(4).tolist(), rng.integers(0, 3, 4).tolist()) for _ in range(200)]
    swapped = []
    for agents, ranks in games:
        seats = rng.permutation(4)
        swapped.append(([agents[s] for s in seats], [ranks[s] for s in seats]))
    order = rng.permutation(len(swapped))
    shuffled = [swapped[i] for i in order]
    assert bradley_terry(shuffled, 4, bootstrap=300, seed=5) == bradley_terry(games, 4, bootstrap=300, seed=5)


def test_relabelling_agents_relabels_the_ratings() -> None:
    games = simulate(500, seed=4)
    relabel = [2, 0, 1]  # old id -> new id
    renamed = [(tuple(relabel[a] for a in agents), ranks) for agents, ranks in games]
    old = elos(bradley_terry(games, 3, bootstrap=0))
    new = elos(bradley_terry(renamed, 3, bootstrap=0))
    np.testing.assert_allclose(new[relabel], old, atol=1e-6)


def test_an_agent_holding_two_seats_is_not_compared_with_itself() -> None:
    one_game = [((0, 0, 1), (0, 2, 1))]  # agent 0 first and last, agent 1 second
    two_games = [((0, 1), (0, 1)), ((1, 0), (0, 1))]
    once = elos(bradley_terry(one_game, 2, bootstrap=0))
    assert once == pytest.approx(elos(bradley_terry(two_games, 2, bootstrap=0)))
    assert once == pytest.approx([1500.0, 1500.0])  # one win each


def test_undefeated_agent_gets_a_finite_rating() -> None:
    games = [((0, 1), (0, 1))] * 20 + [((2, 0), (1, 0))] * 20 + [((1, 2), (0, 1)), ((2, 1), (0, 1))] * 5
    ratings = bradley_terry(games, 3, bootstrap=200)
    assert all(math.isfinite(r.elo) for r in ratings)
    assert ratings[0].elo > max(ratings[1].elo, ratings[2].elo) + 400
    # Resampling cannot vary an unbeaten record: no interval for it, the others keep theirs.
    assert math.isnan(ratings[0].low) and math.isnan(ratings[0].high)
    assert all(r.low < r.elo < r.high for r in ratings[1:])
    # A smaller prior lets the unbeaten agent float higher, still finite.
    sharper = bradley_terry(games, 3, bootstrap=0, prior=0.01)
    assert ratings[0].elo < sharper[0].elo < math.inf


def test_a_record_resampling_cannot_vary_gets_no_interval() -> None:
    """20 wins out of 20 gave both agents a zero-width interval ([1823, 1823])."""
    for games in ([((0, 1), (0, 1))] * 20, [((0, 1), (0, 0))] * 20):  # 20-0; 20 draws
        ratings = bradley_terry(games, 2, bootstrap=100)
        assert all(math.isnan(r.low) and math.isnan(r.high) for r in ratings)
    mixed = bradley_terry([((0, 1), (0, 1))] * 15 + [((1, 0), (0, 1))] * 5, 2, bootstrap=100)
    assert all(r.low < r.elo < r.high for r in mixed)


def test_intervals_contain_the_estimate_and_shrink_with_more_games() -> None:
    games = simulate(3000, seed=2)
    small = bradley_terry(games[:300], 3, bootstrap=300, seed=0)
    large = bradley_terry(games, 3, bootstrap=300, seed=0)
    for s, b in zip(small, large, strict=True):
        assert s.low <= s.elo <= s.high
        assert b.low <= b.elo <= b.high
        assert b.high - b.low < 0.6 * (s.high - s.low)  # ~ sqrt(10) times narrower


def test_deterministic_for_a_seed() -> None:
    games = simulate(400, seed=6)
    first = bradley_terry(games, 3, bootstrap=200, seed=11)
    assert bradley_terry(games, 3, bootstrap=200, seed=11) == first
    other = bradley_terry(games, 3, bootstrap=200, seed=12)
    assert elos(other) == pytest.approx(elos(first), abs=1e-9)  # the estimate does not depend on the seed
    assert [r.low for r in other] != [r.low for r in first]  # the resamples do


def test_anchor_fixes_one_agent_and_keeps_the_differences() -> None:
    games = simulate(600, seed=8)
    mean_scale = bradley_terry(games, 3, bootstrap=100)
    anchored = bradley_terry(games, 3, bootstrap=100, anchor=1, anchor_elo=1000.0)
    assert anchored[1] == Rating(1000.0, 1000.0, 1000.0)
    np.testing.assert_allclose(elos(anchored) - 1000.0, elos(mean_scale) - mean_scale[1].elo, atol=1e-9)
    assert anchored[0].low < anchored[0].elo < anchored[0].high


def test_no_bootstrap_gives_nan_intervals_and_the_same_estimate() -> None:
    games = simulate(200, seed=9)
    plain = bradley_terry(games, 3, bootstrap=0)
    assert all(math.isnan(r.low) and math.isnan(r.high) for r in plain)
    assert elos(plain) == pytest.approx(elos(bradley_terry(games, 3, bootstrap=50)), abs=1e-9)


GOOD = [((0, 1), (0, 1)), ((1, 2), (1, 0))]


@pytest.mark.parametrize(
    ("games", "kwargs", "message"),
    [
        ([((0, 3), (0, 1))], {}, r"games\[0\]: agent id 3 out of range 0\.\.2"),
        ([*GOOD, ((0, -1), (0, 1))], {}, r"games\[2\]: agent id -1 out of range"),
        ([((0, 1, 2), (0, 1))], {}, r"games\[0\]: 3 agents but ranks .*one rank per seat \(3\)"),
        ([((0,), (0,))], {}, r"games\[0\]: agents must be a flat sequence of 2 or more"),
        ([((0.0, 1.0), (0, 1))], {}, r"games\[0\]: agent ids must be integers"),
        ([((True, False), (0, 1))], {}, r"games\[0\]: agent ids must be integers"),
        ([((0, 1), (0, float("nan")))], {}, r"games\[0\]: ranks must be finite numbers"),
        ([((0, 1), ("a", "b"))], {}, r"games\[0\]: ranks must be finite numbers"),
        ([((0, 1), (0, 1), (1, 0))], {}, r"games\[0\] must be a pair \(agents by seat, ranks by seat\)"),
        ([*GOOD, 5], {}, r"games\[2\] must be a pair"),
        ([], {}, r"games is empty"),
        ([((0, 1), (0, 1))], {}, r"agents \[2\] met no other agent"),
        (GOOD, {"bootstrap": -1}, r"bootstrap must be a non-negative integer.*got -1"),
        (GOOD, {"bootstrap": 2.5}, r"bootstrap must be a non-negative integer"),
        (GOOD, {"num_agents": 1}, r"num_agents must be an integer >= 2, got 1"),
        (GOOD, {"anchor": 3}, r"anchor must be None or an agent id in 0\.\.2, got 3"),
        (GOOD, {"anchor_elo": math.inf}, r"anchor_elo must be a finite number"),
        (GOOD, {"prior": 0}, r"prior must be a positive finite number"),
        (GOOD, {"seed": -2}, r"seed must be a non-negative integer or None"),
    ],
)
def test_bad_input_is_refused_with_the_problem_named(games: list, kwargs: dict, message: str) -> None:
    args = {"num_agents": 3, **kwargs}
    with pytest.raises(ValueError, match=message):
        bradley_terry(games, **args)


def test_the_interval_is_a_95_percent_one() -> None:
    """Two agents, 4,000 games, 60% won: the bootstrap interval of the rating difference is the
    normal 95% interval of its asymptotic standard error (a 90% one would be 16% narrower), and
    the rating is the log-odds of the win rate."""
    n, won = 4000, 2400
    games = [((0, 1), (0, 1))] * won + [((0, 1), (1, 0))] * (n - won)
    rating = bradley_terry(games, 2, bootstrap=4000, seed=0, anchor=1, anchor_elo=0.0)[0]
    p = won / n
    se = ELO_PER_NEPER / math.sqrt(n * p * (1 - p))
    assert rating.elo == pytest.approx(ELO_PER_NEPER * math.log(p / (1 - p)), abs=0.5)  # the prior's 1 draw
    assert 0.94 < (rating.high - rating.low) / (2 * 1.959964 * se) < 1.06


def test_an_agent_that_lost_every_game_gets_no_interval_and_leaves_the_others_differences() -> None:
    """Its rating is set by the prior and the game count alone (only a bound): no interval;
    it moves the mean, so the others' absolute ratings move with the game count, but their
    differences stay those of equal agents."""
    for per_pair in (20, 1000):
        games = []
        for i in range(3):
            for j in range(i + 1, 3):
                games += [((i, j), (0, 1)), ((i, j), (1, 0))] * (per_pair // 2)
            games += [((i, 3), (0, 1))] * per_pair
        ratings = bradley_terry(games, 4, bootstrap=50, seed=0)
        assert max(r.elo for r in ratings[:3]) - min(r.elo for r in ratings[:3]) < 1
        assert all(r.low < r.elo < r.high for r in ratings[:3])
        assert ratings[3].elo < ratings[0].elo - 400 and math.isnan(ratings[3].low)
