"""The evaluator (umbrella_env.evaluation): schedule, statistics, seeds, report and CLI.

Tiny tournaments between agents defined here, named by ``module:factory`` specs so that
worker processes can rebuild them: uniform random play, an agent that always takes the
first legal action, and one that slides into a scorable figure whenever it can.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import re
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("openskill", reason="needs the eval extra")
pytest.importorskip("matplotlib", reason="needs the eval extra")

from umbrella_env import evaluation as ev  # noqa: E402
from umbrella_env import parallel  # noqa: E402
from umbrella_env.core import actions as A  # noqa: E402
from umbrella_env.core.config import GameConfig  # noqa: E402
from umbrella_env.evaluation import tournament  # noqa: E402
from umbrella_env.evaluation.tournament import parse_specs  # noqa: E402
from umbrella_env.match import play_game  # noqa: E402

RANDOM = "agents.base:RandomAgent"
FIRST = "tests.test_evaluate:FirstLegalAgent"
SCORER = "tests.test_evaluate:ScorerAgent"


class FirstLegalAgent:
    """Always the lowest legal action id."""

    name = "first"
    needs_game = False

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: np.ndarray, action_mask: np.ndarray, game: object = None) -> int:
        return int(np.flatnonzero(action_mask)[0])


class ScorerAgent:
    """Slides into a scorable figure when one slide does (one-step look-ahead), else random."""

    name = "scorer"
    needs_game = True

    def __init__(self, seed: int | None = None) -> None:
        self._rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        self._rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, game=None) -> int:
        legal = np.flatnonzero(action_mask)
        if game.phase in (A.PHASE_SLIDE, A.PHASE_FALLBACK):
            scoring = []
            for a in legal:
                g = game.clone()
                g.step(int(a))
                if g.phase == A.PHASE_VALIDATE:
                    scoring.append(a)
            if scoring:
                legal = np.asarray(scoring)
        return int(self._rng.choice(legal))


# --------------------------------------------------------------------------- statistics
def test_wilson_interval_contains_the_rate_and_matches_known_values():
    lo, hi = ev.wilson_interval(10, 20)
    assert lo == pytest.approx(0.2993, abs=1e-4) and hi == pytest.approx(0.7007, abs=1e-4)
    for wins, n in [(0, 10), (10, 10), (3.5, 7), (1, 100)]:
        lo, hi = ev.wilson_interval(wins, n)
        assert 0 <= lo <= wins / n <= hi <= 1
    assert ev.wilson_interval(0, 0) == (0.0, 1.0)


def test_mean_interval_and_win_credits():
    mean, lo, hi = ev.mean_interval([1, 2, 3, 4])
    assert mean == 2.5 and lo < 2.5 < hi
    # Student's t with 3 degrees of freedom (3.182), not the normal 1.96: 4 games are few
    assert hi - 2.5 == pytest.approx(3.1824463 * np.std([1, 2, 3, 4], ddof=1) / 2, rel=1e-6)
    assert ev.mean_interval([1, 2, 3, 4], z=ev.Z95)[2] - 2.5 == pytest.approx(
        1.96 * np.std([1, 2, 3, 4], ddof=1) / 2, rel=1e-3
    )
    assert math.isnan(ev.mean_interval([7])[1])
    assert ev.win_credits([0, 1, 0]) == [0.5, 0.0, 0.5]
    assert ev.win_credits([1, 0, 2, 3]) == [0.0, 1.0, 0.0, 0.0]
    assert ev.win_credits([1, 0, 2, 3], truncated=True) == [0.25] * 4 and ev.win_credits([0]) == [0.0]


@pytest.mark.parametrize(
    ("df", "quantile"),  # published two-sided 95% quantiles of Student's t
    [(1, 12.7062), (2, 4.3027), (4, 2.7764), (9, 2.2622), (10, 2.2281), (12, 2.1788), (19, 2.0930),
     (30, 2.0423), (60, 2.0003), (120, 1.9799), (10**6, 1.9600)],
)  # fmt: skip
def test_t95_is_students_quantile(df: int, quantile: float) -> None:
    assert ev.stats.t95(df) == pytest.approx(quantile, abs=1e-4)


def test_the_student_t_interval_covers_the_mean_of_few_games_95_percent_of_the_time() -> None:
    """Normal scores, 5 games: the t interval covers the true mean about 95% of the time; the
    normal one (z = 1.96) only about 88%, which is why the report's solo intervals use t."""
    rng = np.random.default_rng(0)
    samples = rng.normal(28.0, 3.0, size=(4000, 5))
    t_cover = np.mean([lo <= 28.0 <= hi for _, lo, hi in map(ev.mean_interval, samples)])
    z_cover = np.mean([lo <= 28.0 <= hi for _, lo, hi in (ev.mean_interval(x, z=ev.Z95) for x in samples)])
    assert 0.94 <= t_cover <= 0.96 and z_cover < 0.90


def test_every_unknown_agent_message_lists_the_same_specs() -> None:
    """make_agent and build_agent listed the specs in two wordings (names, suffixes)."""
    from agents import make_agent
    from umbrella_env.match import AgentSpecError, build_agent

    with pytest.raises(ValueError) as made:
        make_agent("nosuch")
    with pytest.raises(AgentSpecError) as built:
        build_agent("nosuch", GameConfig(num_players=2))
    listed = str(made.value).split("expected ", 1)[1]
    head, last = listed.rsplit(" or ", 1)  # build_agent adds a factory after the registry's specs
    assert str(built.value) == f"unknown agent 'nosuch': expected {head}, {last} or 'package.module:factory' " + (
        "(a callable building the agent)"
    )


def test_play_rotation_is_seeded_and_rotates_the_agents_seat() -> None:
    """The trainers' in-training evaluation (one loop for MaskablePPO and RLlib)."""
    from agents.base import RandomAgent
    from umbrella_env.match import play_game, play_rotation

    config = GameConfig(num_players=3)
    agent, other = RandomAgent(), RandomAgent()
    rate, mean = play_rotation(agent, other, config, 6, seed=4)
    assert (rate, mean) == play_rotation(agent, other, config, 6, seed=4) != play_rotation(agent, other, config, 6, 5)
    # game i: the agent sits at seat i % 3, the seed derived from (4, i)
    seeds = [int(np.random.SeedSequence(4, spawn_key=(i,)).generate_state(1, np.uint64)[0]) >> 1 for i in range(6)]
    games = [play_game([agent if s == i % 3 else other for s in range(3)], config, seeds[i]) for i in range(6)]
    assert mean == pytest.approx(np.mean([g.scores[i % 3] for i, g in enumerate(games)]))
    assert rate == pytest.approx(np.mean([g.credits[i % 3] for i, g in enumerate(games)]))
    assert play_rotation(agent, None, GameConfig(num_players=1), 2, seed=0)[0] == 0.0  # solo: no wins


def test_win_credits_of_a_batch_are_those_of_each_game():
    from umbrella_env.core import facts

    rng = np.random.default_rng(0)
    for players in (1, 2, 3, 4):
        scores, personal = rng.integers(0, 4, (500, players)), rng.integers(0, 3, (500, players))
        ranks, truncated = facts.ranks(scores, personal), rng.random(500) < 0.2
        batch = facts.win_credits(ranks, truncated)  # the demo's form
        assert batch.tolist() == [ev.win_credits(r, t) for r, t in zip(ranks.tolist(), truncated.tolist())]


def test_merit_bands_follow_the_rulebook():
    assert [ev.merit_band(s) for s in (0, 14, 15, 18, 19, 23, 24, 26, 27, 30, 31, 40)] == [
        "try again", "try again", "a start", "a start", "not bad", "not bad",
        "well played", "well played", "impressive", "impressive", "big respect", "big respect",
    ]  # fmt: skip
    # a mean score between two bands is in the lower one (it has not reached the next)
    assert [ev.merit_band(s) for s in (14.5, 18.99, 26.67, 30.5, 31.0)] == [
        "try again", "a start", "well played", "impressive", "big respect",
    ]  # fmt: skip
    with pytest.raises(ValueError, match="not a number"):
        ev.merit_band(float("nan"))


def test_tables_are_combinations_or_symmetric_multisets():
    assert ev.plan_tables(3, 1) == [(0,), (1,), (2,)]
    assert ev.plan_tables(3, 2) == [(0, 1), (0, 2), (1, 2)]
    assert ev.plan_tables(4, 3) == [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)]
    assert ev.plan_tables(2, 4) == [(0, 0, 0, 1), (0, 0, 1, 1), (0, 1, 1, 1)]
    assert ev.plan_tables(3, 4) == [(0, 0, 1, 2), (0, 1, 1, 2), (0, 1, 2, 2)]


def test_seeds_depend_on_base_seed_and_index_only():
    assert ev.game_seed(0, 5) == ev.game_seed(0, 5) != ev.game_seed(0, 6) != ev.game_seed(1, 6)
    assert ev.deal_key(3, 0) == ev.deal_key(3, 0) != ev.deal_key(3, 1)
    assert 0 <= ev.deal_key(3, 1) < 2**63


# --------------------------------------------------------------------------- games
def test_play_game_is_reproducible_and_replays_a_record():
    config = GameConfig(num_players=2)
    a = ev.play_specs([RANDOM, FIRST], config, seed=11)
    b = ev.play_specs([RANDOM, FIRST], config, seed=11)
    assert a == b
    assert a.turns > 0 and not a.truncated and sorted(a.ranks)[0] == 0 and len(a.scores) == 2
    assert ev.play_specs([RANDOM, FIRST], config, seed=a.seed, key=a.key) == a


def test_an_agent_that_raises_is_reported_with_where_and_the_game_to_replay_it():
    """The message named the agent and the turn only: no game to replay, no place in the code."""

    class Raising(FirstLegalAgent):
        needs_game = True

        def act(self, observation, action_mask, game=None):
            if game.turn >= 3:
                raise RuntimeError("boom inside agent")
            return super().act(observation, action_mask, game)

    config = GameConfig(num_players=2)
    with pytest.raises(ev.AgentError) as info:
        play_game([FirstLegalAgent(), Raising()], config, seed=5)
    message = str(info.value)
    assert "raised RuntimeError('boom inside agent') at turn 4 (test_evaluate.py:" in message
    seed, key = re.search(r"in the game of seed (\d+), deal key (\d+)", message).groups()
    with pytest.raises(ev.AgentError) as again:
        play_game([FirstLegalAgent(), Raising()], config, int(seed), key=int(key))
    assert str(again.value) == message


def test_an_agent_that_makes_its_mask_say_yes_is_refused_not_played() -> None:
    # The runner checked the answer against the mask it had handed over: an agent that set
    # mask[a] = True got an illegal action past the check, the unchecked step corrupted the
    # game, and another agent was blamed many turns later (an IndexError in the core).
    class Sneaky(FirstLegalAgent):
        def act(self, observation, action_mask, game=None):
            illegal = int(np.flatnonzero(~action_mask)[0])
            action_mask[illegal] = True
            return illegal

    with pytest.raises(
        ev.AgentError, match=r"agent 'sneaky' \(seat 0\) chose \d+ \('[a-z][^']+'\), not a legal action, at turn 1"
    ):
        play_game([Sneaky(), FirstLegalAgent()], GameConfig(num_players=2), seed=1, names=["sneaky", "first"])


def test_a_reset_or_an_answer_of_the_wrong_kind_is_named_with_the_agent() -> None:
    class NoSeed(FirstLegalAgent):
        def reset(self):  # the interface's reset takes the seed
            pass

    class Floating(FirstLegalAgent):
        def act(self, observation, action_mask, game=None):
            return float(super().act(observation, action_mask, game))

    class Exiting(FirstLegalAgent):
        def act(self, observation, action_mask, game=None):
            raise SystemExit(3)  # ended the whole command with status 3 and no word

    config = GameConfig(num_players=2)
    with pytest.raises(ev.AgentError) as info:
        play_game([FirstLegalAgent(), NoSeed()], config, seed=2, names=["first", "noseed"])
    assert re.match(r"agent 'noseed' raised TypeError\(.*\) in reset\(\d+\) \(match.py:\d+", str(info.value))
    assert "in the game of seed 2, deal key" in str(info.value)
    with pytest.raises(
        ev.AgentError, match=r"agent 'floating' \(seat 1\) returned \d+\.0 \(float\) at turn 2: an action is an int"
    ):
        play_game([FirstLegalAgent(), Floating()], config, seed=2, names=["first", "floating"])
    with pytest.raises(ev.AgentError, match=r"agent 'exiting' \(seat 0\) raised SystemExit\(3\) at turn 1"):
        play_game([Exiting(), FirstLegalAgent()], config, seed=2, names=["exiting", "first"])

    class Made(FirstLegalAgent):  # a user's model without a file: docs/agents.md lets it give meta alone
        meta = {"num_players": 2, "plate_level": 1}

    with pytest.raises(ev.AgentError) as info:  # it said "checkpoint '<model>' was trained for"
        play_game([Made(), FirstLegalAgent(), FirstLegalAgent()], GameConfig(num_players=3), seed=2, names=["made"])
    assert str(info.value).startswith(
        "agent 'made' cannot play this game: its model (meta) was trained for num_players=2, but this game has "
        "num_players=3; in the game of seed 2"
    )


def test_more_workers_than_cpus_is_noted(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(parallel, "local_cpus", lambda: 1)
    argv = ["--agents", RANDOM, FIRST, "--games", "2", "--workers", "2", "--no-progress"]
    assert ev.main([*argv, "--out", str(tmp_path / "r")]) == 0
    assert "note: --workers 2 on 1 CPU(s): more processes than CPUs slow the work down" in capsys.readouterr().err
    # the trainers' --torch-threads get the same note (1,000 threads on 2 CPUs: 8x as long)
    assert parallel.oversubscribed("--torch-threads", 1000, "threads") == (
        "note: --torch-threads 1000 on 1 CPU(s): more threads than CPUs slow the work down"
    )
    assert parallel.oversubscribed("--torch-threads", 1, "threads") is None
    assert parallel.oversubscribed("--torch-threads", None, "threads") is None  # the default: the CPUs


def test_progress_in_a_log_is_plain_lines(capsys, monkeypatch) -> None:
    """With stderr not a terminal (nohup, CI) the tqdm bar drew nothing for a whole run."""
    monkeypatch.setattr(parallel, "PLAIN_PROGRESS_SECONDS", 0.0)
    bar = parallel.Progress(4, True, "2 table(s)")
    for _ in range(4):
        bar.update(1)
    bar.close()
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("2 table(s): 1/4 (25%), ") and "s left" in lines[0]
    assert lines[-1].startswith("2 table(s): 4/4 (100%), ") and len(lines) == 4  # the last one once
    monkeypatch.setattr(parallel, "PLAIN_PROGRESS_SECONDS", 3600.0)  # a short run: one line, at the end
    bar = parallel.Progress(4, True, "games")
    bar.update(4)
    bar.close()
    assert [line.split(",")[0] for line in capsys.readouterr().err.splitlines()] == ["games: 4/4 (100%)"]
    quiet = parallel.Progress(4, False, "x")
    quiet.update(4)
    quiet.close()
    assert capsys.readouterr().err == ""
    monkeypatch.setattr("sys.stderr", None)  # pythonw, a daemon: it raised AttributeError ('isatty')
    none = parallel.Progress(4, True, "x")
    none.update(4)
    none.close()


def test_a_tournament_from_python_plays_in_this_process_by_default(monkeypatch, tmp_path) -> None:
    """run_tournament started a pool of every CPU by default, which imports the caller's
    script again: a script without the main guard ran its top level in every worker, then
    died with a "worker died ... out of memory?" error.  Now 1 worker unless asked (evaluate.py
    keeps every CPU), and the agents it built are not kept after it returns."""
    from umbrella_env.evaluation import cli

    def no_pool(workers: int) -> None:
        raise AssertionError("a process pool was started")

    monkeypatch.setattr(tournament, "process_pool", no_pool)
    result = ev.run_tournament([RANDOM, FIRST], 2, games=2, seed=1)
    assert result.workers == 1 and len(result.records) == 2
    assert not tournament.thread_agents()
    given = []

    def stop(*args, **kwargs):
        given.append(args[5])
        raise ev.EvaluationError("stop")

    monkeypatch.setattr(cli, "run_tournament", stop)
    monkeypatch.setattr(cli, "local_cpus", lambda: 7)
    assert ev.main(["--agents", RANDOM, FIRST, "--no-progress", "--out", str(tmp_path / "eval")]) == 2
    assert given == [7]


def test_tournaments_run_from_two_threads_each_play_their_own_agents() -> None:
    """The agents a tournament builds were one dict for the process: two tournaments in two
    threads played the same agent objects, each reseeding the other's mid-game (about 2 in 3
    records differed from the same tournaments run one after the other, without an error)."""
    specs = ["random", "greedy", "heuristic"]

    def records(seed: int, barrier: threading.Barrier | None = None) -> list[Any]:
        if barrier is not None:
            barrier.wait()
        result = ev.run_tournament(specs, 2, games=6, seed=seed)
        return [(r.seats, r.scores, r.turns) for r in result.records]

    alone = [records(1), records(2)]
    for _ in range(2):
        barrier = threading.Barrier(2)
        with ThreadPoolExecutor(2) as pool:
            together = list(pool.map(records, [1, 2], [barrier, barrier]))
        assert together == alone


def test_an_illegal_action_is_reported_with_the_agent():
    class Bad(FirstLegalAgent):
        def act(self, observation, action_mask, game=None):
            return A.NUM_ACTIONS

    config = GameConfig(num_players=2)
    agents = tournament.thread_agents()
    agents[("bad-agent", 1, 2, 1)] = Bad()
    try:
        with pytest.raises(ev.AgentError, match="bad-agent.*seat 1.*not a legal action"):
            ev.play_specs([FIRST, "bad-agent"], config, seed=0, cache=True)  # the agents of this thread
    finally:
        del agents[("bad-agent", 1, 2, 1)]


# --------------------------------------------------------------------------- tournaments
@pytest.fixture(scope="module")
def small_2p() -> ev.TournamentResult:
    return ev.run_tournament([RANDOM, FIRST], 2, plate_level=1, games=7, seed=3, workers=1)


def test_games_round_up_to_whole_rotations_on_shared_deals(small_2p):
    r = small_2p
    assert r.games_per_table == 8 and len(r.records) == 8
    assert [rec.index for rec in r.records] == list(range(8))
    for first, second in zip(r.records[::2], r.records[1::2]):
        assert first.key == second.key and first.seed != second.seed  # one deal, both rotations
        assert first.seats == second.seats[::-1]
        assert first.agents == tuple(r.labels[a] for a in first.seats)


def test_a_checkpoint_is_never_labelled_as_a_shipped_agent_it_is_not() -> None:
    specs = ["net:agents/models/az-2p.pt", "az-2p-net", "agents/models/az-solo.pt", "runs/quick/best.pt"]
    _, labels = parse_specs(specs)
    assert labels == ["net:az-2p.pt", "az-2p-net", "az-solo.pt", "best"]


def test_checkpoints_of_the_same_name_are_labelled_by_their_folders() -> None:
    """Two runs' best checkpoints were "best" and "best#2": which run was which?"""
    specs = ["runs/a/best.zip", "runs/b/best.zip", "rllib:x/a/best", "rllib:y/a/best", "net:runs/a/last.pt"]
    # each label takes as few folders as tell it apart
    assert parse_specs(specs)[1] == ["runs/a/best", "b/best", "x/a/best", "y/a/best", "last-net"]
    # the same checkpoint twice is numbered; a chosen label is kept; a lone checkpoint keeps its stem
    assert parse_specs(["runs/a/best.zip"] * 2)[1] == ["best", "best#2"]
    assert parse_specs(["mine=runs/a/best.zip", "runs/b/best.zip"])[1] == ["mine", "best"]
    assert parse_specs(["/a/best.zip", "b/best.zip", "greedy"])[1] == ["a/best", "b/best", "greedy"]
    assert parse_specs(["/a/best.zip", "./a/best.zip"])[1] == ["/a/best", "a/best"]


@pytest.mark.parametrize(
    "specs",
    [["heuristic=random", "heuristic"], ["a=random", "a=greedy"], ["greedy", "greedy=heuristic"], ["x=random"] * 2],
)
def test_a_chosen_label_that_names_another_agent_is_refused(specs: list[str]) -> None:
    """``heuristic=random heuristic`` showed random as "heuristic", the heuristic as "heuristic#2"."""
    with pytest.raises(ev.EvaluationError, match=r"agents 1 \(.*\) and 2 \(.*\) both go by .*its own label"):
        parse_specs(specs)
    assert parse_specs(["random", "random"])[1] == ["random", "random#2"]  # the same agent twice, numbered


def test_seat_rotation_is_balanced():
    r = ev.run_tournament([RANDOM, FIRST, "second=" + RANDOM], 3, games=3, seed=1, workers=1)
    assert len(r.tables) == 1 and r.labels == ["RandomAgent", "FirstLegalAgent", "second"]
    # Rounded up to 3! = 6: rotations alone kept who sits after whom (two copies of heuristic
    # beside greedy won 48.2% and 40.9% of 2,400 games); now every seating once, each
    # cyclic order on whole deals (its 3 rotations share a deal).
    assert r.games_per_table == 6 and sorted(rec.seats for rec in r.records) == sorted(itertools.permutations(range(3)))
    for deal in (r.records[:3], r.records[3:]):
        assert len({rec.key for rec in deal}) == 1
    # Fewer agents than seats: every agent still sits in every seat equally often.
    r = ev.run_tournament([RANDOM, FIRST], 3, games=3, seed=1, workers=1)
    assert r.tables == [(0, 0, 1), (0, 1, 1)]
    seats = Counter((a, s) for rec in r.records for s, a in enumerate(rec.seats))
    assert set(seats.values()) == {6} and len(seats) == 6
    summary = ev.summarise(r)
    assert [e["seat_games"] for e in summary["agents"]] == [[6, 6, 6], [6, 6, 6]]
    assert all(np.isfinite(e["mu"]) for e in summary["agents"])
    # The count is of seats, not games (it was headed "games": 9 of them in 6 games), and says so.
    assert summary["multi_seat"] and ev.standings_rows(summary)[0][1] == "seats"
    assert [e["games"] for e in summary["agents"]] == [18, 18] and summary["games"] == 12


def test_four_players_play_every_seating_of_a_table_once_per_24_games():
    from umbrella_env.evaluation.tournament import TournamentResult, _schedule, seatings

    assert [seatings(p) for p in (1, 2, 3, 4)] == [1, 2, 6, 24]
    result = TournamentResult(
        specs=["a"] * 5, labels=list("abcde"), agent_args=[], num_players=4, plate_level=1, max_turns=3000,
        games_per_table=48, seed=0, workers=1, tables=ev.plan_tables(5, 4),
    )  # fmt: skip
    tasks = _schedule(result)
    for t, table in enumerate(result.tables):
        mine = [task.seats for task in tasks if task.table == t]
        assert Counter(mine) == Counter({seating: 2 for seating in itertools.permutations(table)})


def test_the_report_states_how_many_orderings_the_ratings_average(tmp_path, monkeypatch, small_2p) -> None:
    """The report always said 16 orderings; fewer are used past 400,000 updates."""
    summary = ev.summarise(small_2p)
    assert summary["rating_orders"] == 16 and not summary["multi_seat"]
    assert ev.standings_rows(summary)[0][1] == "games"
    monkeypatch.setattr(ev.stats, "RATING_ORDERS", 5)
    fewer = ev.summarise(small_2p)
    assert fewer["rating_orders"] == 5
    text = ev.write_report(small_2p, tmp_path / "r", fewer).read_text()
    assert "mean over 5 seeded orderings" in text and "16 seeded" not in text


def test_results_are_reproducible_and_independent_of_workers(small_2p):
    again = ev.run_tournament([RANDOM, FIRST], 2, plate_level=1, games=7, seed=3, workers=2)
    assert again.records == small_2p.records
    # compared as JSON text: a missing interval is nan, and nan != nan in a dict comparison
    assert json.dumps(ev.summarise(again)["agents"]) == json.dumps(ev.summarise(small_2p)["agents"])
    other = ev.run_tournament([RANDOM, FIRST], 2, plate_level=1, games=7, seed=4, workers=1)
    assert other.records != small_2p.records


def test_summary_intervals_contain_the_observed_rates(small_2p):
    s = ev.summarise(small_2p)
    assert s["games"] == 8 and s["mode"] == "multiplayer"
    total = 0.0
    for e in s["agents"]:
        lo, hi = e["win_ci"]
        assert e["games"] == 8 and lo <= e["win_rate"] <= hi
        slo, shi = e["score_ci"]
        assert slo <= e["mean_score"] <= shi
        assert e["ordinal"] == pytest.approx(e["mu"] - 3 * e["sigma"])
        total += e["wins"]
    assert total == pytest.approx(8)  # one win per game, shared wins split
    h = s["head_to_head"]
    assert h["rate"][0][1] + h["rate"][1][0] == pytest.approx(1) and h["n"][0][1] == 8
    assert h["rate"][0][1] == pytest.approx(s["agents"][0]["win_rate"])  # 2 players: the win rate
    assert sum(seat["games"] for seat in s["seats"]) == 16


def test_a_truncated_game_is_a_draw_in_every_table_of_the_report(small_2p):
    """Standings, head-to-head and both ratings count a truncated game as a draw, whatever
    the ranks its scores give (one rule: umbrella_env.match.outcome_ranks)."""
    records = list(small_2p.records)
    decided = next(i for i, rec in enumerate(records) if rec.ranks[0] != rec.ranks[1])
    truncated = dataclasses.replace(small_2p, records=records.copy())
    truncated.records[decided] = dataclasses.replace(records[decided], truncated=True)
    drawn = dataclasses.replace(small_2p, records=records.copy())
    drawn.records[decided] = dataclasses.replace(records[decided], ranks=(0, 0))  # a shared victory
    s, d = ev.summarise(truncated), ev.summarise(drawn)
    assert s["head_to_head"]["rate"][0][1] == pytest.approx(s["agents"][0]["win_rate"])  # 2 players
    assert s["head_to_head"] == d["head_to_head"]
    for mine, shared in zip(s["agents"], d["agents"]):
        assert mine["win_rate"] == shared["win_rate"]
        assert (mine["mu"], mine["sigma"]) == pytest.approx((shared["mu"], shared["sigma"]))
        assert mine["elo"] == pytest.approx(shared["elo"])
    assert s["agents"][0]["win_rate"] != ev.summarise(small_2p)["agents"][0]["win_rate"]


def test_a_stronger_agent_gets_the_higher_rating():
    r = ev.run_tournament([RANDOM, SCORER], 2, games=8, seed=0, workers=1)
    s = {e["label"]: e for e in ev.summarise(r)["agents"]}
    assert s["ScorerAgent"]["win_rate"] > 0.75
    assert s["ScorerAgent"]["ordinal"] > s["RandomAgent"]["ordinal"]
    assert s["ScorerAgent"]["mu"] > 25 > s["RandomAgent"]["mu"]


def test_solo_scores_bands_and_paired_head_to_head():
    r = ev.run_tournament([RANDOM, SCORER], 1, games=30, seed=0, workers=1)
    assert len(r.records) == 60
    keys = [rec.key for rec in r.records]
    assert keys[:30] == keys[30:]  # both agents play the same deals
    s = ev.summarise(r)
    assert s["mode"] == "solo" and "seats" not in s
    by = {e["label"]: e for e in s["agents"]}
    for e in by.values():
        assert sum(e["merit_bands"].values()) == e["games"] == 30
        assert sum(e["histogram"].values()) == 30
        lo, hi = e["score_ci"]
        assert lo <= e["mean_score"] <= hi
    assert by["ScorerAgent"]["mean_score"] > by["RandomAgent"]["mean_score"]
    assert s["head_to_head"]["rate"][1][0] > 0.5
    # The paired difference of the means, on the same deals (evaluate.py gave only each
    # agent's own interval, which the deal's luck widens)
    (none, forward), (backward, none2) = s["paired"]["difference"]
    assert none is None and none2 is None and s["paired"]["labels"] == ["RandomAgent", "ScorerAgent"]
    gain = by["ScorerAgent"]["mean_score"] - by["RandomAgent"]["mean_score"]
    assert backward[0] == pytest.approx(gain) and forward[0] == pytest.approx(-gain)
    assert backward[1] < gain < backward[2] and backward[1] > 0
    assert forward == pytest.approx([-backward[0], -backward[2], -backward[1]])


# --------------------------------------------------------------------------- report and CLI
def test_report_and_plots_are_written(small_2p, tmp_path):
    report = ev.write_report(small_2p, tmp_path / "out")
    text = report.read_text()
    assert "## Standings" in text and "## Head to head" in text and "--seed 3" in text
    assert small_2p.command() in text
    for name in ("winrates.png", "ratings.png", "summary.json", "games.jsonl"):
        assert (tmp_path / "out" / name).stat().st_size > 0
    assert (tmp_path / "out" / "winrates.png").read_bytes()[:4] == b"\x89PNG"
    assert len((tmp_path / "out" / "games.jsonl").read_text().splitlines()) == 8
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["seed"] == 3


@pytest.mark.posix
def test_a_staging_folder_left_as_a_link_is_replaced_not_followed(small_2p, tmp_path):
    """A ``.report-partial`` that was a symbolic link survived ``rmtree(ignore_errors=True)``,
    and the report failed after its games were played (review of security)."""
    from umbrella_env.evaluation.report import STAGING

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("kept")
    out = tmp_path / "out"
    out.mkdir()
    (out / STAGING).symlink_to(elsewhere, target_is_directory=True)
    assert ev.write_report(small_2p, out).is_file()
    assert not (out / STAGING).exists() and sorted(p.name for p in elsewhere.iterdir()) == ["keep.txt"]


def test_plots_leave_the_callers_matplotlib_alone(small_2p, tmp_path):
    """write_plots switched the caller's backend to Agg (a notebook's inline one was lost)
    and a failed write left its figure open in pyplot."""
    import matplotlib
    import matplotlib.pyplot as plt

    from umbrella_env.evaluation.plots import write_plots

    previous = matplotlib.get_backend()
    matplotlib.use("svg")
    try:
        figures = plt.get_fignums()
        summary = ev.summarise(small_2p)
        assert [p.name for p in write_plots(summary, tmp_path)] == ["winrates.png", "ratings.png"]
        with pytest.raises(FileNotFoundError):
            write_plots(summary, tmp_path / "missing" / "folder")
        assert matplotlib.get_backend() == "svg" and plt.get_fignums() == figures
    finally:
        matplotlib.use(previous)


def test_cli_runs_a_solo_evaluation(tmp_path, capsys):
    out = tmp_path / "solo"
    argv = ["--agents", RANDOM, "--players", "1", "--games", "5", "--workers", "1", "--out", str(out)]
    code = ev.main([*argv, "--no-progress"])
    assert code == 0
    text = (out / "report.md").read_text()
    assert "Merit bands" in text and "--players 1" in text
    assert "Head to head" not in text and "Paired" not in text  # one agent: no table of nobody against nobody
    assert (out / "scores.png").exists() and (out / "merit.png").exists()
    printed = capsys.readouterr().out
    assert "RandomAgent" in printed and "Head to head" not in printed


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["--agents", "nosuchagent", RANDOM], ["nosuchagent", "greedy", "heuristic", ".zip"]),
        (["--agents", RANDOM, "missing/model.zip"], ["missing/model.zip"]),
        (["--agents", RANDOM, FIRST, "--players", "5"], ["--players", "1 (solo), 2, 3 or 4", "5"]),
        (["--agents", RANDOM, "--players", "2"], ["at least 2 agents", "--players 1"]),
        (["--agents", RANDOM, FIRST, "--level", "0"], ["--level", "1, 2, 3 or 4"]),
        (["--agents", RANDOM, FIRST, "--games", "0"], ["--games"]),
        (["--agents", "tests.test_evaluate:NoSuchAgent", RANDOM], ["NoSuchAgent"]),
        (["--agents", RANDOM, FIRST, "--players", "two"], ["--players", "invalid int"]),
        (["--agents", RANDOM, FIRST, "--workers", "0"], ["--workers"]),
        # used to be a ConfigError traceback from GameConfig
        (["--agents", RANDOM, FIRST, "--max-turns", "99999999999"], ["--max-turns", "[1, 2147483647]"]),
        # used to build a schedule of 10**12 games, memory growing, no output
        (["--agents", RANDOM, FIRST, "--games", "1000000000000"], ["more than 1,000,000 games", "at most 1,000,000"]),
        # the ladder's agent options: used to be called a bad label
        (["--agents", RANDOM, "search:simulations=0"], ["evaluate takes no agent options", "module:function"]),
    ],
)
def test_cli_bad_input_exits_2_with_a_message(argv, expected, tmp_path, capsys):
    code = ev.main([*argv, "--out", str(tmp_path / "never"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2
    assert "Traceback" not in err
    for part in expected:
        assert part in err
    assert not (tmp_path / "never").exists()


def test_cli_refuses_a_checkpoint_trained_for_another_game(tmp_path, capsys):
    from umbrella_env.core.observation import OBS_SIZE

    model = tmp_path / "ppo3.zip"
    model.write_bytes(b"PK")
    meta = {"num_players": 3, "plate_level": 1, "obs_size": OBS_SIZE, "num_actions": A.NUM_ACTIONS}
    model.with_suffix(".json").write_text(json.dumps(meta))
    argv = ["--agents", RANDOM, str(model), "--players", "2", "--out", str(tmp_path / "never")]
    code = ev.main([*argv, "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "ppo3.zip" in err and "num_players=3" in err


def test_summary_has_elo_ratings_with_bootstrap_intervals(small_2p) -> None:
    summary = ev.summarise(small_2p)
    elos = [e["elo"] for e in summary["agents"]]
    assert abs(sum(elos) / len(elos) - 1500) < 1e-6
    header, rows = ev.standings_rows(summary)
    assert header[-2:] == ["Elo", "Elo 95% CI"] and all(r[-2].lstrip("-").isdigit() for r in rows)
    perfect = 0
    for e, row in zip(ev.ranked(summary), rows):
        low, high = e["elo_ci"]
        if e["win_rate"] in (0.0, 1.0):  # a record resampling cannot vary: no interval
            assert math.isnan(low) and math.isnan(high) and row[-1] == "–"
            perfect += 1
        else:
            assert low <= e["elo"] <= high and row[-1].startswith("[")
    assert perfect == 2  # this fixture's random agent won every game
    mixed = ev.summarise(ev.run_tournament([RANDOM, "twin=" + RANDOM], 2, plate_level=1, games=10, seed=5, workers=1))
    for e in mixed["agents"]:  # records that resampling varies: intervals around the estimate
        low, high = e["elo_ci"]
        assert 0 < e["win_rate"] < 1 and low < e["elo"] < high


def test_cli_refuses_a_folder_holding_a_report_unless_told_to_replace_it(tmp_path, capsys):
    out = tmp_path / "eval"
    two = ["--agents", RANDOM, FIRST, "--games", "2", "--workers", "1", "--no-progress", "--out", str(out)]
    assert ev.main(two) == 0
    assert (out / "winrates.png").exists()
    capsys.readouterr()
    solo = ["--agents", RANDOM, "--players", "1", "--games", "1", "--workers", "1", "--no-progress", "--out", str(out)]
    before = (out / "summary.json").read_text()
    assert ev.main(solo) == 2
    assert "holds a previous report (report.md, summary.json" in capsys.readouterr().err
    assert (out / "summary.json").read_text() == before  # it used to be replaced, the old plots left beside it
    assert ev.main([*solo, "--overwrite"]) == 0
    assert not (out / "winrates.png").exists() and (out / "scores.png").exists()
    # one solo game: its spread is undefined, written as null (NaN is not JSON)
    summary = json.loads((out / "summary.json").read_text(), parse_constant=lambda c: pytest.fail(f"{c} in JSON"))
    assert summary["games"] == 1


@pytest.mark.train  # the networks need torch
def test_a_tournament_reloads_a_checkpoint_replaced_since_the_last_one(tmp_path):
    import shutil
    from pathlib import Path

    models = Path(__file__).resolve().parents[1] / "agents" / "models"
    model = tmp_path / "m.pt"

    def games_with(name: str) -> list:
        shutil.copy(models / f"{name}.pt", model)
        shutil.copy(models / f"{name}.json", tmp_path / "m.json")
        result = ev.run_tournament([f"net:{model}", "greedy"], 2, games=4, seed=3, workers=1)
        return [(r.scores, r.turns) for r in result.records]

    first = games_with("az-2p")
    assert games_with("az-2p-net") != first  # the cached agent of the first file used to play again
    assert games_with("az-2p") == first


@pytest.mark.posix
def test_ctrl_c_stops_a_pool_at_once_with_one_line(tmp_path):
    """Ctrl-C (SIGINT to the whole process group, as a terminal sends it) used to wait for
    the pool's remaining games, or hang in its shutdown, and end in a traceback."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    # SIGINT at its default, as in a terminal's foreground job: a job that a non-interactive
    # shell starts in the background (`pytest ... &`, a CI runner) inherits SIGINT ignored,
    # and Python keeps it ignored, so the run used to play on (the "hang" seen in CI).
    start = (
        "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "sys.argv[0] = 'evaluate.py'; runpy.run_path('evaluate.py', run_name='__main__')"
    )
    argv = [sys.executable, "-c", start, "--no-progress", "--workers", "2", "--agents", "heuristic", "greedy",
            "--games", "3000", "--out", str(tmp_path / "r")]  # fmt: skip

    def group(pgid: int) -> list[tuple[Path, str, str]]:
        """Processes of the run (parent, forkserver, workers; a process group is a session
        here): their /proc folder, name and state."""
        members = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                name, rest = stat.read_text().rsplit(")", 1)
            except OSError:
                continue
            fields = rest.split()  # after the name: state, ppid, pgrp, ...
            if int(fields[2]) == pgid:
                members.append((stat.parent, name.split("(", 1)[1], fields[0]))
        return members

    for wanted in (2, 4):  # the pool's first process starting; the two workers playing
        proc = subprocess.Popen(argv, cwd=repo, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env={**os.environ, "PYTHONFAULTHANDLER": "1"})  # fmt: skip
        deadline = time.monotonic() + 120
        while len(group(proc.pid)) < wanted and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        assert proc.poll() is None and len(group(proc.pid)) >= wanted
        os.killpg(proc.pid, signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=60)  # the whole run takes minutes
        except subprocess.TimeoutExpired:  # say where it hung, and leave no process behind
            states = []
            for folder, name, state in group(proc.pid):
                try:
                    status = (folder / "status").read_text().splitlines()
                except OSError:  # gone since
                    continue
                sig = " ".join(
                    line.replace("\t", "")
                    for line in status
                    if line.startswith(("SigPnd", "SigBlk", "SigIgn", "SigCgt"))
                )
                states.append(f"{folder.name} {name} {state} {sig}")
            os.kill(proc.pid, signal.SIGABRT)  # PYTHONFAULTHANDLER: the parent prints every thread's stack
            time.sleep(2)
            os.killpg(proc.pid, signal.SIGKILL)
            _, err = proc.communicate()
            pytest.fail(
                f"no exit 60 s after Ctrl-C with {wanted} processes up; group: {states}; {err.decode()[-6000:]}"
            )
        assert proc.returncode == 130, err.decode()
        assert b"interrupted" in err and b"Traceback" not in err, err.decode()
        assert not (tmp_path / "r").exists()


class SuicideAgent(FirstLegalAgent):
    """Kills its own process at its first decision: a worker that dies (SIGKILL, the
    out-of-memory killer).  Only ever played in a worker process."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray, game: object = None) -> int:
        import os
        import signal

        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("unreachable")


@pytest.mark.posix
def test_a_worker_that_dies_is_one_line_and_exit_1(tmp_path, capsys):
    # used to be a BrokenProcessPool traceback
    argv = ["--agents", FIRST, "tests.test_evaluate:SuicideAgent", "--games", "8", "--workers", "2"]
    code = ev.main([*argv, "--out", str(tmp_path / "r"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 1
    assert "Traceback" not in err and "BrokenProcessPool" not in err
    assert "error: a worker process died in the middle of its job" in err
    assert not (tmp_path / "r").exists()


def test_ctrl_c_while_a_report_replaces_another_waits_for_the_swap(tmp_path, monkeypatch, ctrl_c) -> None:
    """The swap of the new report's files for the old ones is never cut: Ctrl-C in the middle
    is raised once the new report is whole (the old one was deleted first, and a cut left a
    lone report.md)."""
    import os
    import signal

    from umbrella_env.evaluation import report

    out = tmp_path / "r"
    argv = ["--agents", RANDOM, FIRST, "--games", "2", "--no-progress", "--out", str(out)]
    assert ev.main(argv) == 0
    real_replace, calls = os.replace, []

    def replace(src, dst):
        if Path(dst).parent == out:  # the swap (the plots are renamed inside the staging folder)
            calls.append(dst)
            if len(calls) == 1:
                signal.raise_signal(signal.SIGINT)
        real_replace(src, dst)

    monkeypatch.setattr(report.os, "replace", replace)
    assert ev.main([*argv, "--seed", "5", "--overwrite"]) == 130
    monkeypatch.undo()
    names = {p.name for p in out.iterdir()}
    assert {"report.md", "games.jsonl", "summary.json"} <= names and len(calls) == len(names) > 3
    assert '"seed": 5' in (out / "summary.json").read_text() or "--seed 5" in (out / "report.md").read_text()


def test_a_user_module_that_fails_as_it_is_imported_or_built_is_named_in_one_line(tmp_path, monkeypatch) -> None:
    """A bug at the import of a user's agent module ended evaluate.py in a 20-frame importlib
    traceback; a factory that raised said what, not where."""
    from umbrella_env.match import AgentSpecError, build_agent

    (tmp_path / "broken_agents.py").write_text("import numpy\nMODEL = undefined_name\n", encoding="utf-8")
    (tmp_path / "typo_agents.py").write_text("def agent(:\n    pass\n", encoding="utf-8")
    (tmp_path / "raising_agents.py").write_text("def agent():\n    return 1 / 0\n", encoding="utf-8")
    (tmp_path / "importing_agents.py").write_text("import numpy\nimport no_such_module_xyz\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    config = GameConfig(num_players=2)
    cases = {
        # an import inside the module: where (it said "cannot import agent from importing_agents", no place)
        "importing_agents:agent": 'importing importing_agents raised ModuleNotFoundError("No module named '
        "'no_such_module_xyz'\") (importing_agents.py:2 in <module>)",
        "broken_agents:agent": "importing broken_agents raised NameError(\"name 'undefined_name' is not defined\") "
        "(broken_agents.py:2 in <module>)",
        "typo_agents:agent": "importing typo_agents raised SyntaxError(",
        "raising_agents:agent": "the factory raised ZeroDivisionError('division by zero') (raising_agents.py:2 in agent)",
    }
    for spec, words in cases.items():
        with pytest.raises(AgentSpecError) as info:
            build_agent(spec, config)
        assert str(info.value).startswith(f"agent {spec!r}: {words}"), str(info.value)
        assert info.value.__cause__ is None and info.value.__suppress_context__
    with pytest.raises(AgentSpecError) as info:
        build_agent("typo_agents:agent", config)
    assert str(info.value).endswith("(typo_agents.py:1)")


@pytest.mark.parametrize("width", [60, 80])
def test_a_narrow_terminal_lists_the_standings_instead_of_cutting_names_and_figures(
    small_2p, width, monkeypatch
) -> None:
    """At 80 columns the standings cut agent names and intervals to 'gree…' and '[52.…':
    two agents could look identical (review of the terminal output's accessibility)."""
    import io

    rich_console = pytest.importorskip("rich.console", reason="without rich the standings are plain text, never cut")
    from umbrella_env.evaluation import report
    from umbrella_env.evaluation.stats import summarise

    summary = summarise(small_2p)
    out = io.StringIO()
    terminal = rich_console.Console
    monkeypatch.setattr(rich_console, "Console", lambda file: terminal(file=file, force_terminal=True, width=width))
    report.print_summary(summary, file=out)
    text = out.getvalue()
    assert "…" not in text
    shown = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in text.splitlines()]  # without the styles
    header, rows = report.standings_rows(summary)
    for row in rows:  # each name and figure whole, on one line
        assert row[0] in shown and all(f"  {h}: {v}" in shown for h, v in zip(header[1:], row[1:])), row
    assert max(len(line) for line in shown) <= width


# --------------------------------------------------------------------------- notebooks
_SESSION = """
import sys
import numpy as np
from umbrella_env.evaluation import EvaluationError, play_specs, run_tournament
from umbrella_env.core.config import GameConfig

class First:
    name = "first"
    needs_game = False
    def reset(self, seed=None): pass
    def act(self, obs, mask, game=None): return int(np.flatnonzero(mask)[0])

def mine(seed=None): return First()

print("one worker:", len(run_tournament(["__main__:mine", "random"], 2, games=2, workers=1).records))
try:
    run_tournament(["__main__:mine", "random"], 2, games=2, workers=2)
except EvaluationError as exc:
    print("two workers:", exc)
config = GameConfig(num_players=2)
before = play_specs(["__main__:mine", "random"], config, 0).scores

class Last(First):
    def act(self, obs, mask, game=None): return int(np.flatnonzero(mask)[-1])

def mine(seed=None): return Last()  # the cell edited and run again

print("redefined plays:", play_specs(["__main__:mine", "random"], config, 0).scores != before)
"""


def test_a_notebook_factory_plays_in_process_and_is_refused_for_workers_before_they_start() -> None:
    """Review of the notebook user: with workers=2 a factory of the session failed in the
    workers, after the pool started, with 'module __main__ has no attribute'; play_specs kept
    the first definition of a factory redefined in a cell."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _SESSION], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "one worker: 2"
    assert lines[1].startswith("two workers: agent '__main__:mine' is defined in this interactive session")
    assert "workers=1" in lines[1] and "save the factory in a module" in lines[1]
    assert lines[2] == "redefined plays: True"


def test_agents_given_as_objects_are_refused_with_what_to_give(tmp_path) -> None:
    from agents import make_agent

    for given, kind in ((make_agent("greedy"), "GreedyAgent"), (lambda seed=None: None, "function")):
        with pytest.raises(ev.EvaluationError, match=f"agent 1: agents are given by spec strings .*got {kind}"):
            ev.run_tournament([given, "random"], 2, games=2)  # a bare regex TypeError before
    result = ev.run_tournament([Path("random"), "greedy"], 2, games=2)  # a path-like spec is its text
    assert len(result.records) == 2 and result.agent_args == ["random", "greedy"]
    assert "--agents random greedy" in result.command()  # shlex refused the Path (diff review)
    with pytest.raises(ev.EvaluationError, match="'__main__:mine' is defined in __main__, which Ray tasks cannot"):
        ev.run_tournament(["__main__:mine", "random"], 2, games=2, backend="ray")  # a script's too


def test_play_game_refuses_specs_and_a_config_that_is_not_one() -> None:
    from agents import make_agent

    config = GameConfig(num_players=2)
    with pytest.raises(TypeError, match="play_game takes agent objects, got the spec 'greedy': build them"):
        play_game(["greedy", "random"], config, 0)  # an AgentError about 'str' having no reset before
    with pytest.raises(TypeError, match="config: expected a GameConfig, got int"):
        play_game([make_agent("greedy"), make_agent("random")], 2, 0)  # type: ignore[arg-type]


def test_a_tournament_result_shows_a_summary_not_every_game() -> None:
    result = ev.run_tournament(["greedy", "random"], 2, games=4)
    assert repr(result).startswith("TournamentResult(2 agents: greedy, random; 2 player(s), level 1; 4 games, seed")
    assert "GameRecord" not in repr(result)


@pytest.mark.parametrize("num_players", [1, 2, 3])
def test_an_agent_is_handed_a_game_whose_unseen_tiles_are_redrawn(num_players: int) -> None:
    """A peeking agent (it reads the tiles under the tops of the copy it is handed) sees the
    public game and the tiles shown before exactly, and redrawn never-seen tiles: not the
    true ones (it saw them all before, match.agent_view)."""
    from agents.base import RandomAgent
    from umbrella_env.core.single import SingleGame
    from umbrella_env.match import agent_view

    class Peeker(RandomAgent):
        needs_game = True

        def act(self, observation, action_mask, game=None):
            views.append(game)
            return super().act(observation, action_mask, game)

    views: list[SingleGame] = []
    truth: list[SingleGame] = []
    config = GameConfig(num_players=num_players)
    for seed in range(3):
        play_game([Peeker(seed=1)] * num_players, config, seed, on_move=lambda g, seat, a: truth.append(g.clone()))
    assert len(views) == len(truth) > 50
    differ = compared = 0
    for view, game in zip(views, truth):
        assert np.array_equal(view.observe(game.actor), game.observe(game.actor))
        assert np.array_equal(view.legal_mask(), game.legal_mask())
        assert view.unseen_tiles() == [t for t in view.hidden_tiles() if t[:3] in {u[:3] for u in game.unseen_tiles()}]
        shown = [t for t in game.hidden_tiles() if t not in set(game.unseen_tiles())]
        assert [t for t in view.hidden_tiles() if t not in set(view.unseen_tiles())] == shown
        if game.unseen_tiles():
            compared += 1
            differ += view.unseen_tiles() != game.unseen_tiles()
        assert agent_view(game).to_dict() == agent_view(game).to_dict()  # one view per position
    assert compared > 20 and differ > 0.8 * compared, (differ, compared)


def test_a_report_records_the_versions_commit_and_checkpoints_that_made_it(small_2p, tmp_path):
    """summary.json and report.md named no version, commit or checkpoint hash: a figure could
    not be traced to the code and the networks that produced it (shipped networks have been
    re-trained under the same names, and NumPy builds change a heuristic's games)."""
    import hashlib
    import subprocess

    import numpy as np

    from umbrella_env import __version__
    from umbrella_env.evaluation.provenance import checkpoint_hashes

    ev.write_report(small_2p, tmp_path / "out")
    record = json.loads((tmp_path / "out" / "summary.json").read_text())["provenance"]
    assert record["umbrella_env"] == __version__ and record["packages"]["numpy"] == np.__version__
    assert record["checkpoints"] == {}  # no checkpoint played
    repo = Path(__file__).resolve().parents[1]
    if (repo / ".git").exists():
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
        assert record["source"]["commit"] == head.strip()
    text = (tmp_path / "out" / "report.md").read_text()
    assert f"- umbrella-env {__version__}" in text and f"numpy {np.__version__}" in text
    model = tmp_path / "m.zip"
    model.write_bytes(b"any bytes")
    digest = hashlib.sha256(b"any bytes").hexdigest()
    got = checkpoint_hashes([str(model), "heuristic", "rllib:somewhere", "my_agents:factory"], ["m", "h", "r", "f"])
    assert got == {"m": {"file": str(model), "sha256": digest}}


def test_the_python_api_refuses_what_the_cli_refuses():
    """run_tournament took seed=1.5 as 1, seed="7", workers=0 or -2 as 1, and a single spec
    string as its letters ("unknown agent 'r'"); play_specs raised an AttributeError for a
    dict config. Each is an EvaluationError naming the argument now, before any game."""
    from umbrella_env.core.config import GameConfig

    for kwargs, words in (
        ({"seed": 1.5}, "--seed must be an integer >= 0, got 1.5"),
        ({"seed": "7"}, "--seed must be an integer >= 0, got '7'"),
        ({"seed": None}, "--seed must be an integer >= 0, got None"),
        ({"seed": -1}, "--seed must be an integer >= 0, got -1"),
        ({"workers": 0}, "--workers must be an integer >= 1, got 0"),
        ({"workers": -2}, "--workers must be an integer >= 1, got -2"),
    ):
        with pytest.raises(ev.EvaluationError, match=re.escape(words)):
            ev.run_tournament(["random", "greedy"], 2, games=2, **kwargs)
    with pytest.raises(ev.EvaluationError, match=re.escape("got the single spec 'random': give ['random']")):
        ev.run_tournament("random", 1, games=2)
    with pytest.raises(ev.EvaluationError, match="config must be a GameConfig"):
        ev.play_specs(["random", "random"], {"num_players": 2}, 1)
    with pytest.raises(ev.EvaluationError, match="seed must be an integer >= 0, got 1.5"):
        ev.play_specs(["random", "random"], GameConfig(num_players=2), 1.5)


def test_a_built_in_name_in_capitals_is_the_same_agent():
    """--agents heuristic HEURISTIC played heuristic against itself as two agents, without a
    note; `random random` was already labelled random#2."""
    specs, labels = ev.parse_specs(["heuristic", "HEURISTIC", " Greedy", "h=HEURISTIC", "net:AZ-2P", "net:az-2p"])
    assert specs == ["heuristic", "heuristic", "greedy", "heuristic", "net:az-2p", "net:az-2p"]
    assert labels == ["heuristic", "heuristic#2", "greedy", "h", "net:az-2p", "net:az-2p#2"]


def _shared_luck_result(num_players: int, deals: int, seed: int = 0) -> Any:
    """A synthetic round robin of ``num_players`` agents, every seating of each deal: an
    agent's score is its deal's level (shared by every seating) plus a little noise."""
    from umbrella_env.evaluation.tournament import GameRecord, TournamentResult

    rng = np.random.default_rng(seed)
    seatings = list(itertools.permutations(range(num_players)))
    result = TournamentResult(
        specs=["x"] * num_players, labels=[f"a{i}" for i in range(num_players)], agent_args=[],
        num_players=num_players, plate_level=1, max_turns=3000, games_per_table=deals * len(seatings), seed=seed,
        workers=1, tables=[tuple(range(num_players))],
    )  # fmt: skip
    for d in range(deals):
        level = rng.normal(15, 4, num_players)  # seat-independent luck of the deal, per agent
        for seats in seatings:
            scores = tuple(int(round(level[a] + rng.normal(0, 0.5))) for a in seats)
            ranks = tuple(sorted(scores, reverse=True).index(s) for s in scores)
            result.records.append(
                GameRecord(index=len(result.records), table=0, seats=seats, agents=tuple(f"a{a}" for a in seats),
                           scores=scores, ranks=ranks, turns=20, truncated=False, seed=len(result.records), key=d)
            )  # fmt: skip
    return result


def test_intervals_at_3_and_4_players_are_over_deals_where_the_seatings_share_its_luck() -> None:
    """Every deal is played in every seating (6 or 24 games at 3 or 4 players), and those games
    share its luck: a standard error over games was 1.27-1.32 times too small for a mean
    score (measured on heuristic games). At 3-4 players the mean score's interval is
    Student's t over the deals' means and the win rate's Wilson interval counts the effective
    games; at 2 players (and solo) the intervals stay over games."""
    from umbrella_env.evaluation.stats import mean_interval, t95, wilson_interval

    result = _shared_luck_result(3, deals=12)
    summary = ev.summarise(result)
    assert summary["intervals_over"] == "deals"
    for entry in summary["agents"]:
        a = int(entry["label"][1:])
        per_deal: dict[int, list[int]] = {}
        for rec in result.records:
            per_deal.setdefault(rec.key, []).append(rec.scores[rec.seats.index(a)])
        means = np.array([np.mean(v) for v in per_deal.values()])
        half = t95(len(means) - 1) * means.std(ddof=1) / math.sqrt(len(means))
        assert entry["score_ci"] == pytest.approx([means.mean() - half, means.mean() + half])
        naive = mean_interval([s for v in per_deal.values() for s in v])
        assert entry["score_ci"][1] - entry["score_ci"][0] > 1.5 * (naive[2] - naive[1])  # the games were not 72
        assert entry["deals"] == 12
        credits: dict[int, list[float]] = {}  # its win credits by deal, computed here from the ranks
        for rec in result.records:
            winners = rec.ranks.count(0)
            credits.setdefault(rec.key, []).append(1 / winners if rec.ranks[rec.seats.index(a)] == 0 else 0.0)
        every = np.array([c for v in credits.values() for c in v])
        deal_means = np.array([np.mean(v) for v in credits.values()])
        design_effect = (deal_means.var(ddof=1) / len(deal_means)) / (every.var(ddof=1) / every.size)
        assert entry["effective_games"] == pytest.approx(every.size / design_effect)
        assert entry["effective_games"] < 0.5 * entry["games"]  # the deal's luck decides most wins here
        p = entry["wins"] / entry["games"]
        assert entry["win_ci"] == pytest.approx(
            list(wilson_interval(p * entry["effective_games"], entry["effective_games"]))
        )
    two = _shared_luck_result(2, deals=12)
    summary = ev.summarise(two)
    assert summary["intervals_over"] == "games" and "effective_games" not in summary["agents"][0]
    scores = [rec.scores[rec.seats.index(0)] for rec in two.records]
    assert summary["agents"][0]["score_ci"] == pytest.approx(list(mean_interval(scores)[1:]))
    one_deal = ev.summarise(_shared_luck_result(3, deals=1))  # no spread over deals to measure
    assert all(math.isnan(e["score_ci"][0]) and e["effective_games"] == 1 for e in one_deal["agents"])
