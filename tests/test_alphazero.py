"""Gumbel AlphaZero (agents.az, umbrella_env.training.alphazero): the search is legal in
every phase and configuration and never reads the hidden tiles, value targets belong to
the right seat, a tiny seeded run is reproducible and beats random, checkpoints and the
shipped models load and act legally, bad input is refused.  Marked ``train`` (torch)."""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from umbrella_env.core import actions as A
from umbrella_env.core.config import GameConfig
from umbrella_env.core.single import SingleGame

pytestmark = pytest.mark.train

# Collected (then deselected by -m "not train") in the run without torch: skip the module there.
# With the train extra, tests/test_train.py imports torch unguarded, so a broken torch still fails.
torch = pytest.importorskip("torch")

import agents.az.search as az_search  # noqa: E402
from agents import make_agent  # noqa: E402
from agents.az.agent import SHIPPED_MODELS, AZAgent, shipped_path  # noqa: E402
from agents.az.net import AZNet, load_network, save_network  # noqa: E402
from agents.az.search import (  # noqa: E402
    GumbelSearch,
    HeuristicRollout,
    considered_visits,
    outcome_values,
    to_absolute,
    to_relative,
)
from umbrella_env.core.observation import observation_layout  # noqa: E402
from umbrella_env.match import AgentError, AgentSpecError, build_agent, play_game  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CONFIGS = [(p, level) for p in (1, 2, 3, 4) for level in (1, 2, 3, 4)]


def tiny_net(num_players: int, seed: int = 0) -> AZNet:
    torch.manual_seed(seed)
    return AZNet(num_players, hidden=(16,)).eval()


def positions(num_players: int, level: int, seed: int, per_phase: int = 2) -> dict[int, list[SingleGame]]:
    """Seeded random games (one from a normal deal, one from the differential test's
    stress start, which reaches the fallback, one from its late start): up to
    ``per_phase`` positions of each decision phase."""
    from umbrella_env.tools import differential

    rng = np.random.default_rng(seed)
    found: dict[int, list[SingleGame]] = {}
    for game in range(3):
        g = SingleGame.new(GameConfig(num_players=num_players, plate_level=level, max_turns=300), seed * 100 + game)
        if game == 1 and num_players > 1:
            g = SingleGame.from_dict(differential.stress_start(g.to_dict()))
        elif game == 2:
            g = SingleGame.from_dict(differential.late_start(g.to_dict(), rng))
        while not g.done:
            legal = g.legal_actions()
            if len(found.setdefault(g.phase, [])) < per_phase and (len(legal) > 1 or rng.random() < 0.05):
                found[g.phase].append(g.clone())
            g.step(legal[int(rng.integers(len(legal)))])
    return found


# --------------------------------------------------------------------------- search
def test_sequential_halving_schedule() -> None:
    # 4 considered actions, 8 simulations: every action once, then the best 2 twice more
    assert considered_visits(4, 8) == (0, 0, 0, 0, 1, 1, 2, 2)
    assert considered_visits(2, 5) == (0, 0, 1, 1, 2)
    assert len(considered_visits(16, 32)) == 32


@pytest.mark.parametrize(("num_players", "level"), CONFIGS)
def test_search_returns_legal_actions_in_every_phase(num_players: int, level: int) -> None:
    found = positions(num_players, level, seed=num_players * 10 + level)
    games = [g for phase in sorted(found) for g in found[phase]]
    net = tiny_net(num_players)
    search = GumbelSearch(net.predict, simulations=6, max_considered=4)
    rngs = [np.random.default_rng(i) for i in range(len(games))]
    for g, res in zip(games, search.run(games, rngs)):
        legal = g.legal_actions()
        assert res.action in legal
        assert res.actions == legal
        assert res.policy.shape == (len(legal),) and abs(res.policy.sum() - 1) < 1e-9
        assert res.visits.sum() == (6 if len(legal) > 1 else 0)
    # the agents agree: the network alone and with search, on every position
    alone = AZAgent(net, search=False, plate_level=level)
    searching = AZAgent(net, search=True, simulations=3, plate_level=level, seed=1)
    for g in games:
        mask = g.legal_mask()
        assert mask[alone.act(g.observe(g.actor), mask)]
        assert mask[searching.act(g.observe(g.actor), mask, g.clone())]


@pytest.mark.parametrize(("num_players", "level"), [(1, 1), (2, 1), (3, 2), (4, 4)])
def test_search_with_playouts_returns_legal_actions(num_players: int, level: int) -> None:
    found = positions(num_players, level, seed=num_players * 10 + level, per_phase=1)
    games = [g for phase in sorted(found) for g in found[phase]]
    search = GumbelSearch(tiny_net(num_players).predict, simulations=4, max_considered=4, rollout_weight=1.0)
    before = [g.to_dict() for g in games]
    results = search.run(games, [np.random.default_rng(i) for i in range(len(games))])
    for g, res in zip(games, results):
        assert res.action in g.legal_actions()
    assert [g.to_dict() for g in games] == before  # the playouts ran on copies
    assert search.stats["rollout_s"] > 0


def test_playouts_draw_only_from_the_given_generator(monkeypatch) -> None:
    """A playout depends only on the generator it is given, even where the heuristic draws
    from its own (the tournament's rule: an agent reset with a seed plays the same whatever
    it played before).  Here the heuristic's values are draws of its own generator."""
    rollout = HeuristicRollout(turns=3)
    monkeypatch.setattr(rollout.policy, "action_values", lambda game, legal: rollout.policy._rng.random(len(legal)))
    start = SingleGame.new(GameConfig(num_players=2), 4)

    def value(seed: int) -> list[float]:
        return rollout(start.clone(), np.random.default_rng(seed)).tolist()

    first = value(3)
    assert value(4) != first  # the draws matter
    assert value(3) == first  # and come from the given generator alone


def test_playout_values() -> None:
    rollout = HeuristicRollout(turns=2)
    for num_players in (1, 2, 3):
        g = SingleGame.new(GameConfig(num_players=num_players), 5)
        for _ in range(6):
            g.step(g.legal_actions()[0])
        value = rollout(g, np.random.default_rng(0))
        assert value.shape == (num_players,) and np.all(np.isfinite(value))
        if num_players == 1:  # solo playouts run to the end: the scaled final score
            assert g.done and np.array_equal(value, outcome_values(g))
        else:  # cut off after 2 whole turns, valued on adjusted margins in [-1, 1]
            assert not g.done and np.all(np.abs(value) <= 1)
        if num_players == 2:  # one seat's adjusted margin is the other's, negated
            assert value[0] == pytest.approx(-value[1])
    with pytest.raises(ValueError, match="rollout_turns must be an integer >= 1"):
        HeuristicRollout(turns=0)
    with pytest.raises(ValueError, match="rollout_weight"):
        GumbelSearch(tiny_net(2).predict, rollout_weight=1.5)
    with pytest.raises(ValueError, match=r"c_scale must be a number in \(0, 100\], got 1e\+307"):
        GumbelSearch(tiny_net(2).predict, c_scale=1e307)  # sigma overflowed into NaN policies


def test_every_decision_phase_is_searched() -> None:
    seen = set()
    for num_players, level in CONFIGS:
        seen |= set(positions(num_players, level, seed=num_players * 10 + level))
    assert seen == set(range(A.PHASE_GAME_OVER))


def _reshuffle_hidden(g: SingleGame, rng: np.random.Generator, recall: bool = False) -> SingleGame:
    """A copy of ``g`` whose hidden tiles (with ``recall``, the never-seen ones only) are
    other unseen tiles (same faces): what a searcher must not be able to tell apart."""
    h = g.clone()
    hidden = h.unseen_tiles() if recall else h.hidden_tiles()
    P = h.config.num_players
    seen = {h.top_tile(p, k) >> 1 for p in range(P) for k in range(4) if h.top_tile(p, k) >= 0}
    seen |= {h.passing >> 1} if h.passing >= 0 else set()
    seen |= {code >> 1 for tile in h.hidden_tiles() if tile not in set(hidden) for code in [tile[3]]}
    pool = [t for t in range(len(h.config.components.tiles)) if t not in seen]
    drawn = rng.permutation(pool)[: len(hidden)]
    for (p, k, depth, code), tile in zip(hidden, drawn):
        h.set_hidden_tile(p, k, depth, 2 * int(tile) + (code & 1))
    return h


@pytest.mark.parametrize("recall", [False, True])
def test_the_az_agent_determinizes_with_its_recall(recall: bool, monkeypatch) -> None:
    """``make_agent("az-2p", recall=...)`` reaches every determinization of its search."""
    seen: list[bool] = []
    real = az_search.determinize

    def spy(game, observer, rng, keep_faces=None, recall=False):
        seen.append(recall)
        return real(game, observer, rng, keep_faces, recall)

    monkeypatch.setattr(az_search, "determinize", spy)
    g = next(g for g in positions(2, 1, 4)[A.PHASE_SLIDE] if len(g.legal_actions()) > 1)
    make_agent("az-2p", recall=recall, simulations=4, seed=1).act(g.observe(g.actor), g.legal_mask(), g)
    assert seen and set(seen) == {recall}


def _remembering_validations(num_players: int, count: int = 12) -> list[SingleGame]:
    """Validation decisions of seeded random games where a hidden tile is remembered (it was
    a top once) and at least two were never seen."""
    out: list[SingleGame] = []
    rng = np.random.default_rng(num_players)
    key = 0
    while len(out) < count:
        g, key = SingleGame.new(GameConfig(num_players=num_players, max_turns=300), key), key + 1
        while not g.done and len(out) < count:
            unseen = len(g.unseen_tiles())
            if g.phase == A.PHASE_VALIDATE and unseen >= 2 and unseen < len(g.hidden_tiles()) and rng.random() < 0.3:
                out.append(g.clone())
            legal = g.legal_actions()
            g.step(legal[int(rng.integers(len(legal)))])
    return out


@pytest.mark.parametrize(
    ("num_players", "rollout_weight", "recall"),
    [(1, 0.0, False), (2, 0.0, False), (1, 0.5, False), (2, 1.0, False), (2, 1.0, True), (3, 0.0, True)],
)
def test_search_decisions_do_not_depend_on_the_hidden_tiles(
    num_players: int, rollout_weight: float, recall: bool, monkeypatch
) -> None:
    """With ``recall`` the search keeps the tiles that were tops once (docs/rules.md,
    decision 15) and must not tell apart the never-seen ones."""
    # positions where a validation (which reveals the tile under it) is open
    if recall:  # later positions, where some hidden tiles were tops once
        cands = _remembering_validations(num_players)
    else:
        cands = [
            g
            for seed in range(6)
            for g in positions(num_players, 1, seed, per_phase=4).get(A.PHASE_VALIDATE, [])
            if len(g.hidden_tiles()) >= 2
        ]
    assert cands
    net = tiny_net(num_players, seed=3)
    search = GumbelSearch(net.predict, simulations=8, max_considered=4, rollout_weight=rollout_weight, recall=recall)
    other = [_reshuffle_hidden(g, np.random.default_rng(i), recall) for i, g in enumerate(cands)]
    assert all(o.hidden_tiles() != g.hidden_tiles() for o, g in zip(other, cands))

    def run(games: list[SingleGame]) -> list[tuple[int, list[float], list[int]]]:
        rngs = [np.random.default_rng(7) for _ in games]
        return [(r.action, r.policy.round(12).tolist(), r.visits.tolist()) for r in search.run(games, rngs)]

    assert run(cands) == run(other)
    # the check can fail: a search that kept the true hidden tiles would tell them apart
    monkeypatch.setattr(az_search, "determinize", lambda game, seat, rng, recall=False: game.clone())
    assert run(cands) != run(other)


# --------------------------------------------------------------------------- network
@pytest.mark.parametrize(("num_players", "level"), [(1, 1), (2, 1), (2, 3), (3, 2), (4, 4)])
def test_slide_lookahead_equals_a_direct_count(num_players: int, level: int) -> None:
    """The network's per-slide features equal the figure counts of agents.common, computed
    from the game (not the observation) for every slide and every pair of own slides."""
    from agents.az.lookahead import SlideLookahead
    from agents.common import figures, own_zone_counts, slide_legal, slide_stages, slide_stages2, stage_array

    look = SlideLookahead()
    rng = np.random.default_rng(num_players * 10 + level)
    games = []
    for seed in range(3):  # every 4th decision of three random games
        g = SingleGame.new(GameConfig(num_players=num_players, plate_level=level), 60 + seed)
        while not g.done:
            if len(games) < 40 and rng.random() < 0.25:
                games.append(g.clone())
            legal = g.legal_actions()
            g.step(legal[int(rng.integers(len(legal)))])
    assert len(games) >= 20
    checked_complete = False
    for g in games:
        seat = g.actor
        per_slide, summary = look(torch.as_tensor(g.observe(seat))[None])
        per_slide, summary = per_slide[0].numpy(), summary[0].numpy()
        figs = figures(g, seat)
        s1 = slide_stages(stage_array(g, seat))  # [64, 16]
        best1 = np.zeros((64, 4))
        best2 = np.zeros((64, 4))
        if len(figs):
            best1[:, list(figs.slots)] = figs.best(s1)
            counts2 = figs.best(slide_stages2(s1))  # [64, 64, nf]
            zones = own_zone_counts(g, seat)
            for a in range(64):
                left = zones.copy()
                left[a >> 2] -= 1
                follow = slide_legal(left)
                if follow.any():
                    best2[a, list(figs.slots)] = counts2[a][follow].max(axis=0)
        best2 = np.maximum(best2, best1)
        assert np.allclose(per_slide[:, 0:4] * 4, best1)
        assert np.array_equal(per_slide[:, 4], (best1.max(axis=1) >= 4).astype(float))
        assert np.allclose(per_slide[:, 5:9] * 4, best2)
        assert np.array_equal(per_slide[:, 9], (best2.max(axis=1) >= 4).astype(float))
        assert np.allclose(summary[:4] * 4, best1.max(axis=0)) and np.allclose(summary[4:8] * 4, best2.max(axis=0))
        checked_complete |= bool(per_slide[:, 4].any())
    assert checked_complete  # some position has a slide that completes a figure (the check can tell)
    # one batched call gives every position the features of its own call (no mixing across the batch)
    singles = [look(torch.as_tensor(g.observe(g.actor))[None]) for g in games]
    batch = look(torch.as_tensor(np.stack([g.observe(g.actor) for g in games])))
    assert torch.equal(batch[0], torch.cat([p for p, _ in singles]))
    assert torch.equal(batch[1], torch.cat([s for _, s in singles]))


def test_fallback_logits_use_the_slide_with_the_same_effect() -> None:
    from agents.az.net import _fallback_tables

    slide, zone = _fallback_tables()
    zones = set()
    for i in range(len(slide)):
        fallback = A.action_to_string(A.FALLBACK_START + i)  # "fallback B of central from top col0"
        colour, rest = fallback.split(" ")[1], fallback.split(" from ")[1]
        assert A.action_to_string(int(slide[i])) == f"slide {colour} from {rest}"
        zones.add((int(zone[i]), fallback.split(" of ")[1].split(" from ")[0]))
    assert len(zones) == 9 and len({z for z, _ in zones}) == 9  # one zone index per zone name


def test_old_network_format_is_refused_with_a_word_to_retrain(tmp_path: Path) -> None:
    path = tmp_path / "old.pt"
    save_network(tiny_net(2), path, plate_level=1)
    meta = json.loads(path.with_suffix(".json").read_text())
    path.with_suffix(".json").write_text(json.dumps({**meta, "format": "umbrella-az-1"}))
    with pytest.raises(ValueError, match="older format 'umbrella-az-1'.*retrain"):
        load_network(path)


# --------------------------------------------------------------------------- values
def test_network_values_are_observer_relative_like_the_observation() -> None:
    score = {name: start for start, _, name, _ in observation_layout()}
    g = SingleGame.new(GameConfig(num_players=3), 5)
    rng = np.random.default_rng(0)
    while g.turn < 12:
        legal = g.legal_actions()
        g.step(legal[int(rng.integers(len(legal)))])
    scores = g.scores()
    for observer in range(3):
        obs = g.observe(observer)
        relative = np.array([obs[score[f"seat{j}.score"]] for j in range(3)])
        assert np.array_equal(to_absolute(relative, observer), np.array(scores, dtype=float))
        assert np.array_equal(to_relative(np.array(scores, dtype=float), observer), relative)


@pytest.mark.parametrize("num_players", [2, 3])
def test_value_targets_belong_to_the_right_seat(num_players: int) -> None:
    from umbrella_env.training.alphazero import game_targets

    rng = np.random.default_rng(num_players)
    g = SingleGame.new(GameConfig(num_players=num_players), 11)
    records = []
    while not g.done:
        legal = g.legal_actions()
        seat = g.actor
        records.append((g.observe(seat), g.legal_mask(), np.zeros(A.NUM_ACTIONS, np.float32), seat, None))
        g.step(legal[int(rng.integers(len(legal)))])
    z = outcome_values(g)
    ranks = g.ranks()
    winner = ranks.index(0)
    assert z[winner] == max(z) and z[winner] > 0 > min(z)
    rows = game_targets(records, g, margin_weight=0.5)
    for (_, _, _, seat, _), (_, _, _, values, _) in zip(records, rows):
        assert values[0] == z[seat]  # index 0 is the decider
        assert np.array_equal(to_absolute(values, seat), z)
    # the searcher rotates the network's relative values to absolute seats
    relative = np.array([1.0] + [-1.0] * (num_players - 1))
    search = GumbelSearch(lambda obs, heur: (np.zeros((len(obs), A.NUM_ACTIONS)), np.tile(relative, (len(obs), 1))))
    h = SingleGame.new(GameConfig(num_players=num_players), 3)
    h.step(h.legal_actions()[0])  # seat 1 decides now (or seat 0 in a fallback-free start)
    (node,), _ = search._expand([h], [h.legal_actions()])
    assert node.value[h.actor] == 1.0 and sorted(node.value) == sorted(relative)


def test_self_play_records_the_seat_that_decides_a_cover(monkeypatch: pytest.MonkeyPatch) -> None:
    """The receiver decides a cover on another seat's turn: self-play records its observation
    and gives its value to it, not to the seat whose turn it is (each game starts at a cover
    with a choice)."""
    from tests.test_rules import cover_position
    from umbrella_env.training import alphazero

    cover = cover_position()

    class CoverStart(SingleGame):
        @classmethod
        def new(cls, config: GameConfig, key: int) -> SingleGame:
            return SingleGame.from_dict(cover)

    recorded = []
    game_targets = alphazero.game_targets

    def targets(records, game, margin_weight):
        recorded.append(list(records))
        return game_targets(records, game, margin_weight)

    monkeypatch.setattr(alphazero, "SingleGame", CoverStart)
    monkeypatch.setattr(alphazero, "game_targets", targets)
    net = AZNet(3, hidden=(16,))
    config = GameConfig(num_players=3, max_turns=cover["max_turns"])
    job = {"config": config, "hidden": (16,), "slide_hidden": net.slide_hidden, "weights": net.state_dict(), "seeds": [1, 2],
           "simulations": 4, "max_considered": 2, "margin_weight": 0.5}  # fmt: skip
    alphazero.selfplay_chunk(job)
    start = {name: first for first, _, name, _ in observation_layout()}
    assert len(recorded) == 2  # one list of records per game
    for obs, _, _, seat, _ in (records[0] for records in recorded):  # the cover
        assert seat == 1 and obs[start["actor"]] == 1 and obs[start["current"] + 2] == 1  # seat 0's turn, from 1
    assert all(obs[start["actor"]] == 1 for records in recorded for obs, *_ in records)  # each decider's own view


def test_solo_value_is_the_scaled_score() -> None:
    g = SingleGame.new(GameConfig(num_players=1), 2)
    rng = np.random.default_rng(0)
    while not g.done:
        legal = g.legal_actions()
        g.step(legal[int(rng.integers(len(legal)))])
    assert outcome_values(g).tolist() == [g.scores()[0] / 40.0]


# --------------------------------------------------------------------------- training
TINY = [
    "--players",
    "2",
    "--iterations",
    "1",
    "--games",
    "2",
    "--simulations",
    "2",
    "--train-steps",
    "2",
    "--batch-size",
    "32",
    "--buffer",
    "64",
    "--pretrain-games",
    "40",
    "--pretrain-epochs",
    "3",
    "--eval-every",
    "1",
    "--eval-games",
    "2",
    "--eval-search-games",
    "0",
    "--max-turns",
    "40",
    "--hidden",
    "64",
    "--workers",
    "1",
    "--seed",
    "5",
    "--no-progress",
]


def test_tiny_seeded_run_is_reproducible_and_beats_random_and_greedy(tmp_path: Path) -> None:
    from umbrella_env.training import alphazero

    for run in ("a", "b"):
        assert alphazero.main(TINY + ["--out", str(tmp_path / run)]) == 0
    a, meta = load_network(tmp_path / "a" / "last.pt", num_players=2, plate_level=1)
    b, _ = load_network(tmp_path / "b" / "last.pt", num_players=2, plate_level=1)
    for (name, x), y in zip(a.state_dict().items(), b.state_dict().values()):
        assert torch.equal(x, y), name
    assert meta["iteration"] == 1 and meta["seed"] == 5 and "--seed 5" in meta["command"]
    history = json.loads((tmp_path / "a" / "history.json").read_text())["history"]
    assert [h["iteration"] for h in history] == [0, 1]
    assert (tmp_path / "a" / "best.pt").is_file() and (tmp_path / "a" / "best.json").is_file()
    cfg = GameConfig(num_players=2)
    me = make_agent(str(tmp_path / "a" / "last.pt"), search=False, num_players=2, plate_level=1)

    def wins(opponent: str, games: int) -> float:
        return sum(
            play_game([me, make_agent(opponent)] if i % 2 == 0 else [make_agent(opponent), me], cfg, 100 + i).credits[
                i % 2
            ]
            for i in range(games)
        )

    # Untrained networks of this size won 5-95% against random but at most 5% against greedy
    # (5 seeds, 20 games each); this run's network won 100% and 82.5% (2026-11-26).
    assert wins("random", 10) >= 8
    assert wins("greedy", 20) >= 10


def test_iterations_zero_fits_the_teacher_only(tmp_path: Path) -> None:
    """``--iterations 0`` fits the teacher's games, evaluates and saves them, and plays no
    self-play: the same weights as one iteration of two games that trains nothing."""
    from umbrella_env.training import alphazero

    argv = [a for a in TINY]
    argv[argv.index("--iterations") + 1] = "0"
    assert alphazero.main(argv + ["--out", str(tmp_path / "zero")]) == 0
    argv[argv.index("--iterations") + 1] = "1"
    argv[argv.index("--train-steps") + 1] = "0"
    assert alphazero.main(argv + ["--out", str(tmp_path / "one")]) == 0
    zero, meta = load_network(tmp_path / "zero" / "last.pt", num_players=2, plate_level=1)
    one, one_meta = load_network(tmp_path / "one" / "last.pt", num_players=2, plate_level=1)
    assert (meta["iteration"], meta["selfplay_games"]) == (0, 0)
    assert (one_meta["iteration"], one_meta["selfplay_games"]) == (1, 2)
    assert list(zero.state_dict()) == list(one.state_dict())
    for (name, x), y in zip(zero.state_dict().items(), one.state_dict().values()):
        assert torch.equal(x, y), name
    history = json.loads((tmp_path / "zero" / "history.json").read_text())["history"]
    assert [h["iteration"] for h in history] == [0]
    assert (tmp_path / "zero" / "best.pt").is_file()


def _without(argv: list[str], *flags: str) -> list[str]:
    """``argv`` without the options ``flags`` and their values."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a in flags:
            skip = True
        else:
            out.append(a)
    return out


def test_policy_gradient_run_is_reproducible_and_trains(tmp_path: Path) -> None:
    from umbrella_env.training import alphazero

    pg = _without(TINY, "--players", "--games", "--buffer", "--train-steps")
    pg += ["--players", "1", "--selfplay", "policy-gradient", "--games", "6", "--pg-epochs", "2"]
    for run in ("a", "b"):
        assert alphazero.main(pg + ["--out", str(tmp_path / run)]) == 0
    start = _without(pg, "--iterations", "--pg-epochs", "--selfplay") + ["--iterations", "0"]
    assert alphazero.main(start + ["--out", str(tmp_path / "start")]) == 0  # the same teacher fit, no self-play
    a, meta = load_network(tmp_path / "a" / "last.pt", num_players=1, plate_level=1)
    b, _ = load_network(tmp_path / "b" / "last.pt", num_players=1, plate_level=1)
    before, _ = load_network(tmp_path / "start" / "last.pt", num_players=1, plate_level=1)
    for (name, x), y in zip(a.state_dict().items(), b.state_dict().values()):
        assert torch.equal(x, y), name
    assert not all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), before.state_dict().values()))
    assert meta["selfplay"] == "policy-gradient" and meta["pg"] == {"temperature": 0.3, "epochs": 2, "clip": 0.2}
    assert (meta["iteration"], meta["selfplay_games"]) == (1, 6)
    history = json.loads((tmp_path / "a" / "history.json").read_text())["history"]
    assert [h["iteration"] for h in history] == [0, 1] and all("net_score" in h for h in history)


def test_policy_gradient_step_favours_the_action_of_the_higher_score() -> None:
    """Half the games played action 0 and scored 30, half action 1 and scored 20, from one
    position: the step raises action 0's probability (a sign error would lower it)."""
    from umbrella_env.training.alphazero import Decisions, pg_update

    game = SingleGame.new(GameConfig(num_players=1), 7)
    legal = np.asarray(game.legal_actions()[:2], dtype=np.int64)
    obs = game.observe().astype(np.float32)
    n = 64
    data = Decisions(
        obs=np.repeat(obs[None], n, axis=0),
        heur=None,
        legal=np.repeat(legal[None], n, axis=0),
        chosen=np.arange(n) % 2,
        score=np.where(np.arange(n) % 2 == 0, 30.0, 20.0).astype(np.float32),
    )
    torch.manual_seed(0)
    net = AZNet(1, (32,))
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)

    def p0() -> float:
        logits, _ = net.predict(obs[None])
        z = logits[0, legal]
        return float(np.exp(z[0]) / np.exp(z).sum())

    first = p0()
    losses = pg_update(
        net, opt, data, temperature=1.0, epochs=4, batch=16, clip=0.2, value_weight=1.0, rng=np.random.default_rng(0)
    )
    assert p0() > first + 0.05 and np.isfinite(losses["policy_loss"]) and losses["entropy"] > 0


def test_resume_refuses_iterations_already_done(tmp_path: Path, capsys) -> None:
    """``--resume`` with ``--iterations`` at or below the checkpoint's iteration would train
    nothing and write nothing: refused, naming the option and the valid range."""
    from umbrella_env.training import alphazero

    argv = [a for a in TINY]
    argv[argv.index("--iterations") + 1] = "0"
    assert alphazero.main(argv + ["--out", str(tmp_path / "zero")]) == 0
    capsys.readouterr()
    argv = _without(argv, "--pretrain-games", "--pretrain-epochs")  # not what this test is about
    exit_info_code = alphazero.main(
        argv + ["--resume", str(tmp_path / "zero" / "last.pt"), "--out", str(tmp_path / "r")]
    )
    assert exit_info_code == 2
    assert "--iterations 0: --resume" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_resume_keeps_the_provenance_and_the_best_network(tmp_path: Path) -> None:
    """A resumed run's sidecars say how the network was first made (the original command,
    seed and teacher) and list the resumes; resumed into another folder, the best network
    of the run comes along (``best.pt`` always exists), and the optimizer state is there to
    resume even after ``--iterations 0``."""
    from umbrella_env.training import alphazero

    argv = [a for a in TINY]
    argv[argv.index("--iterations") + 1] = "0"
    assert alphazero.main(argv + ["--out", str(tmp_path / "a")]) == 0
    assert (tmp_path / "a" / "optimizer.pt").is_file()
    first = json.loads((tmp_path / "a" / "last.json").read_text())
    resume = ["--players", "2", "--iterations", "1", "--games", "2", "--simulations", "2", "--train-steps", "2",
              "--batch-size", "32", "--buffer", "64", "--eval-every", "1", "--eval-games", "2",
              "--eval-search-games", "0", "--max-turns", "40", "--hidden", "64", "--workers", "1",
              "--seed", "9", "--no-progress", "--resume", str(tmp_path / "a" / "last.pt")]  # fmt: skip
    assert alphazero.main(resume + ["--out", str(tmp_path / "b")]) == 0
    meta = json.loads((tmp_path / "b" / "last.json").read_text())
    for key in ("command", "seed", "teacher", "pretrain_games"):
        assert meta[key] == first[key], key  # pretrain_games 40, not the resume command's default
    assert meta["pretrain_games"] == 40 and meta["seed"] == 5
    assert [r["seed"] for r in meta["resumed"]] == [9] and "--seed 9" in meta["resumed"][0]["command"]
    history = json.loads((tmp_path / "b" / "history.json").read_text())
    assert history["command"] == first["command"] and len(history["resumed"]) == 1
    assert (tmp_path / "b" / "best.pt").is_file() and (tmp_path / "b" / "best.json").is_file()


def test_search_teacher_playouts_and_quick_preset(tmp_path: Path) -> None:
    """``--teacher search`` imitates the search agent's games (recorded in the sidecar), the
    self-play search's playout settings reach the sidecar and the agent, and ``--quick``
    fills in the preset only where an option was not given."""
    from umbrella_env.training import alphazero

    argv = [a for a in TINY]
    i = argv.index("--pretrain-games")
    argv[i + 1] = "2"
    extra = ["--teacher", "search", "--teacher-sims", "2", "--rollout-weight", "0.5", "--rollout-turns", "2"]
    assert alphazero.main(argv + extra + ["--out", str(tmp_path / "s")]) == 0
    meta = json.loads((tmp_path / "s" / "last.json").read_text())
    assert (meta["teacher"], meta["teacher_sims"], meta["pretrain_games"]) == ("search", 2, 2)
    assert (meta["rollout_weight"], meta["rollout_turns"]) == (0.5, 2)
    agent = make_agent(str(tmp_path / "s" / "last.pt"))  # the play-time default: playouts alone
    assert (agent.search.rollout_weight, agent.search.max_considered, agent.search.rollout.turns) == (1.0, 4, 2)
    agent = make_agent(str(tmp_path / "s" / "last.pt"), rollout_weight=None, max_considered=None)  # as trained
    assert (agent.search.rollout_weight, agent.search.max_considered) == (0.5, meta["max_considered"])
    args, _ = alphazero.parse_options(alphazero.build_parser(), ["--quick", "--games", "8"])
    assert args.games == 8 and args.iterations == alphazero.QUICK["iterations"] == 2
    assert args.pretrain_games == alphazero.QUICK["pretrain_games"]
    assert alphazero.parse_options(alphazero.build_parser(), [])[0].iterations != alphazero.QUICK["iterations"]
    # an option written on the command line wins even when it equals the default
    args, _ = alphazero.parse_options(
        alphazero.build_parser(), ["--quick", "--games", "64", "--eval-search-games", "20"]
    )
    assert (args.games, args.eval_search_games) == (64, 20) != (alphazero.QUICK["games"], 0)


def test_init_takes_a_shipped_models_name(tmp_path: Path) -> None:
    from agents.az.agent import model_file
    from umbrella_env.training import alphazero

    for name in SHIPPED_MODELS:
        args, _ = alphazero.parse_options(alphazero.build_parser(), ["--init", name.upper()])
        assert args.init == shipped_path(name) and args.init.is_file()
    mine = tmp_path / "best.pt"
    args, _ = alphazero.parse_options(alphazero.build_parser(), ["--init", str(mine)])
    assert args.init == mine  # a path stays a path
    assert model_file("az-solo-net") == shipped_path("az-solo") == model_file(" az-solo ")


@pytest.mark.parametrize(("teacher", "common"), [("search", False), ("search-common", True)])
def test_search_teachers_are_the_search_agent_with_its_budget(teacher: str, common: bool) -> None:
    from agents.search import SearchAgent
    from umbrella_env.training import alphazero

    agent = alphazero.teacher_agent(teacher, 3, seed=1)
    assert isinstance(agent, SearchAgent)
    assert (agent.simulations, agent.common_numbers, agent.name) == (3, common, teacher)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--simulations", "0"], "--simulations must be an integer >= 1, got 0"),
        (
            ["--games", "1000000000000"],
            "--games must be an integer from 1 to 1,000,000, got 1000000000000",
        ),  # MemoryError
        (["--buffer", "100", "--batch-size", "256"], "--buffer (100) must be at least --batch-size (256)"),
        (["--players", "5"], "--players must be 1 (solo), 2, 3 or 4, got 5"),
        (["--margin-weight", "2"], "--margin-weight must be a number in [0, 1], got 2.0"),
        (["--teacher", "search", "--teacher-sims", "0"], "--teacher-sims must be an integer >= 1, got 0"),
        (["--teacher", "random"], "argument --teacher: invalid choice: 'random'"),
        (["--pretrain-epochs", "0"], "--pretrain-epochs must be an integer >= 1, got 0"),
        (["--rollout-weight", "1.5"], "--rollout-weight must be a number in [0, 1], got 1.5"),
        (["--rollout-turns", "0"], "--rollout-turns must be an integer >= 1, got 0"),
        (["--bogus"], "unrecognized arguments: --bogus"),
        (["--iterations", "-1"], "--iterations must be an integer >= 0, got -1"),
        (["--iterations", "0", "--pretrain-games", "0"], "--iterations 0 trains no self-play: give --pretrain-games"),
        (["--selfplay", "policy-gradient"], "--selfplay policy-gradient trains on the final score of solo games"),
        (["--selfplay", "policy-gradient", "--players", "1", "--pg-temperature", "0"], "--pg-temperature must be a"),
        (
            ["--selfplay", "policy-gradient", "--players", "1", "--pg-clip", "1"],
            "--pg-clip must be a number in (0, 1), got 1",
        ),
        (
            ["--selfplay", "policy-gradient", "--players", "1", "--pg-epochs", "0"],
            "--pg-epochs must be an integer >= 1",
        ),
        (["--selfplay", "policy-gradient", "--players", "1", "--buffer", "9"], "--buffer: not used by this run"),
        (["--pg-epochs", "2"], "--pg-epochs: not used by this run (they need --selfplay policy-gradient)"),
        (["--hidden", "64", "99999999999"], "--hidden layer sizes must be from 1 to 8,192, got [64, 99999999999]"),
        (["--hidden", "0"], "--hidden layer sizes must be from 1 to 8,192, got [0]"),
        (["--out", ""], "argument --out: expected a path, got ''"),
    ],
)
def test_bad_options_are_refused(argv: list[str], message: str, tmp_path: Path, capsys) -> None:
    from umbrella_env.training import alphazero

    info_code = alphazero.main(argv + ["--out", str(tmp_path / "run")])
    assert info_code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_checkpoint_of_another_configuration_is_refused(tmp_path: Path, capsys) -> None:
    from umbrella_env.training import alphazero

    path = tmp_path / "solo.pt"
    save_network(tiny_net(1), path, plate_level=1)
    assert json.loads(path.with_suffix(".json").read_text())["num_players"] == 1
    with pytest.raises(ValueError, match="was trained for num_players=1, but this game has num_players=2"):
        make_agent(str(path), num_players=2, plate_level=1)
    info_code = alphazero.main(["--players", "2", "--resume", str(path), "--out", str(tmp_path / "run")])
    assert info_code == 2
    assert "was trained for num_players=1, but this run has num_players=2" in capsys.readouterr().err
    with pytest.raises(ValueError, match="no metadata file"):
        path.with_suffix(".json").unlink()
        load_network(path)


def test_net_prefix_plays_a_checkpoint_without_search(tmp_path: Path) -> None:
    path = tmp_path / "m.pt"
    save_network(tiny_net(2), path, plate_level=1)
    alone = make_agent(f"net:{path}")
    assert not alone.use_search and not alone.needs_game
    assert make_agent(str(path)).use_search
    agent = build_agent(f"net:{path}", GameConfig(num_players=2))
    assert not agent.use_search
    with pytest.raises(AgentSpecError, match="was trained for num_players=2"):
        build_agent(f"net:{path}", GameConfig(num_players=3))
    with pytest.raises(ValueError, match="needs the path of an alphazero .pt checkpoint or the name of a shipped"):
        make_agent("net:model.zip")


def test_net_prefix_takes_a_shipped_models_name() -> None:
    """``net:az-2p`` is az-2p's network alone, as the README quotes it (a wheel's users have no
    agents/models/ path to type); it stays a name when sent to a worker, and its label is not
    the other shipped network's ``az-2p-net``."""
    from umbrella_env.evaluation import run_tournament
    from umbrella_env.evaluation.tournament import parse_specs
    from umbrella_env.match import absolute_spec

    by_name, by_path = make_agent("net:az-2p"), make_agent("net:" + str(shipped_path("az-2p")))
    assert not by_name.use_search
    for a, b in zip(by_name.net.state_dict().values(), by_path.net.state_dict().values()):
        assert torch.equal(a, b)
    assert not make_agent("net:az-solo").use_search
    assert absolute_spec("net:az-2p") == "net:az-2p"
    assert parse_specs(["net:az-2p", "az-2p-net"])[1] == ["net:az-2p", "az-2p-net"]
    # the report's hash of the file that played, taken before the games: the shipped file's
    result = run_tournament(["net:az-2p", "random"], 2, games=2, seed=1)
    sidecar = json.loads(shipped_path("az-2p").with_suffix(".json").read_text())
    assert result.checkpoints == {"net:az-2p": {"file": str(shipped_path("az-2p")), "sha256": sidecar["sha256"]}}
    agent = build_agent("net:az-2p", GameConfig(num_players=2))
    with pytest.raises(AgentSpecError, match="was trained for num_players=2"):
        build_agent("net:az-2p", GameConfig(num_players=1))
    assert agent is not None


# --------------------------------------------------------------------------- heuristic inputs
def test_heuristic_inputs_rank_the_heuristic_and_use_public_information_only() -> None:
    """0 for the heuristic's best action, below 0 for the others, the clip value for illegal
    actions; the same for a copy whose hidden tiles were redrawn (public information only)."""
    from agents.az.net import HEURISTIC_CLIP, HeuristicInputs
    from agents.common import determinize
    from agents.heuristic import HeuristicAgent

    inputs = HeuristicInputs()
    rng = np.random.default_rng(4)
    checked = 0
    for num_players, level in ((1, 1), (2, 1), (3, 2), (4, 4)):
        for phase, games in positions(num_players, level, seed=9).items():
            for g in games:
                legal = np.asarray(g.legal_actions())
                x = inputs(g, legal)
                values = HeuristicAgent(seed=0).action_values(g, legal)
                assert x.shape == (A.NUM_ACTIONS,) and x.max() == 0.0
                assert np.all(x[legal] <= 0) and x[legal[int(np.argmax(values))]] == 0.0
                illegal = np.setdiff1d(np.arange(A.NUM_ACTIONS), legal)
                assert np.all(x[illegal] == -HEURISTIC_CLIP)
                assert np.array_equal(inputs(g, legal), x)  # the same position, the same inputs
                other = determinize(g, g.actor, rng)
                assert np.array_equal(inputs(other, legal), x), (num_players, phase)
                checked += 1
    assert checked > 20


def test_network_with_heuristic_inputs(tmp_path: Path) -> None:
    """The inputs move the logits; the agent needs the game even without search and acts
    legally with and without search; the flag survives a checkpoint; ONNX export refuses it."""
    from agents.az.net import HeuristicInputs
    from umbrella_env import export

    torch.manual_seed(0)
    net = AZNet(2, hidden=(16,), heuristic_inputs=True).eval()
    g = SingleGame.new(GameConfig(num_players=2), 5)
    legal = np.asarray(g.legal_actions())
    obs = g.observe(g.actor)[None]
    with pytest.raises(ValueError, match="pass heur=heuristic inputs"):
        net.predict(obs)
    with pytest.raises(ValueError, match="has no heuristic inputs"):
        tiny_net(2).predict(obs, np.zeros((1, A.NUM_ACTIONS), np.float32))
    heur = HeuristicInputs()(g, legal)[None]
    logits, _ = net.predict(obs, heur)
    flat, _ = net.predict(obs, np.zeros_like(heur))
    assert not np.allclose(logits[0, legal], flat[0, legal])
    path = tmp_path / "h.pt"
    save_network(net, path, plate_level=1)
    assert json.loads(path.with_suffix(".json").read_text())["heuristic_inputs"] is True
    loaded, _ = load_network(path)
    assert loaded.heuristic_inputs and np.allclose(loaded.predict(obs, heur)[0], logits, atol=1e-2)
    alone = make_agent(f"net:{path}")
    assert alone.needs_game and not alone.use_search
    with pytest.raises(ValueError, match="reads the heuristic's action values and needs the game"):
        alone.act(obs[0], g.legal_mask())
    cfg = GameConfig(num_players=2, max_turns=30)
    (res,) = GumbelSearch(net.predict, simulations=4, max_considered=4, heuristic_inputs=True).run(
        [g], [np.random.default_rng(0)]
    )
    assert np.array_equal(res.inputs, heur[0])  # the root's inputs, for the replay buffer
    for agent in (alone, make_agent(str(path), simulations=4, rollout_weight=0.0)):
        res = play_game([agent, make_agent("random")], cfg, 3)  # an illegal action would raise
        assert res.turns > 0
    with pytest.raises(ValueError, match="cannot be exported to ONNX"):
        export.load_az(path)


def test_trainer_with_heuristic_inputs(tmp_path: Path, capsys) -> None:
    """``--heuristic-inputs`` trains such a network (teacher and self-play positions carry the
    inputs); a resume takes the network's shape from the checkpoint (it was refused without
    the flag and ``--hidden`` repeated) and checks the options given against it."""
    from umbrella_env.training import alphazero

    argv = TINY + ["--heuristic-inputs", "--out", str(tmp_path / "h")]
    assert alphazero.main(argv) == 0
    net, meta = load_network(tmp_path / "h" / "last.pt", num_players=2, plate_level=1)
    assert net.heuristic_inputs and meta["heuristic_inputs"] is True and "--heuristic-inputs" in meta["command"]
    capsys.readouterr()
    resume = ["--resume", str(tmp_path / "h" / "last.pt"), "--out", str(tmp_path / "r")]
    # past the shape's checks, refused only for its total: the checkpoint is at iteration 1
    assert alphazero.main([*resume, "--iterations", "1"]) == 2
    err = capsys.readouterr().err
    assert "is already at iteration 1" in err and "has heuristic_inputs" not in err and "has hidden" not in err
    assert alphazero.main([*resume, "--hidden", "32", "--iterations", "2"]) == 2
    assert "has hidden layers [64], this run --hidden [32]" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_init_starts_a_new_run_from_a_checkpoint(tmp_path: Path, capsys) -> None:
    """``--init`` copies a checkpoint's weights (adding heuristic inputs at their defaults), evaluates
    the starting point, records the file's name and SHA-256, and refuses a mismatch or ``--resume``."""
    import hashlib

    from umbrella_env.training import alphazero

    torch.manual_seed(1)
    plain = AZNet(2, hidden=(64,)).eval()
    path = tmp_path / "plain.pt"
    save_network(plain, path, plate_level=1)
    argv = _without(TINY, "--pretrain-epochs")  # no pretraining: its options are refused
    argv[argv.index("--pretrain-games") + 1] = "0"
    assert alphazero.main(argv + ["--heuristic-inputs", "--init", str(path), "--out", str(tmp_path / "i")]) == 0
    meta = json.loads((tmp_path / "i" / "last.json").read_text())
    assert meta["init"] == {"file": "plain.pt", "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    history = json.loads((tmp_path / "i" / "history.json").read_text())["history"]
    assert [h["iteration"] for h in history] == [0, 1]
    # the starting point is the checkpoint plus the heuristic term: the other weights are copied
    plain, _ = load_network(path)  # the float16-rounded weights the file holds
    net = AZNet(2, hidden=(64,), heuristic_inputs=True)
    alphazero.initial_weights(net, plain)
    assert torch.equal(net.trunk[0].weight, plain.trunk[0].weight)
    assert torch.equal(net.slide_input.weight[:, :-1], plain.slide_input.weight)
    assert not net.slide_input.weight[:, -1].any()
    # --init takes the shape the options leave out from the checkpoint: its heuristic inputs, 64 units
    shaped = _without(argv, "--hidden", "--iterations") + ["--iterations", "0"]
    assert alphazero.main([*shaped, "--init", str(tmp_path / "i" / "last.pt"), "--out", str(tmp_path / "j")]) == 0
    meta = json.loads((tmp_path / "j" / "last.json").read_text())
    assert meta["heuristic_inputs"] is True and meta["hidden"] == [64]
    for extra, message in (
        (["--init", str(path), "--resume", str(path)], "--resume continues a run and --init starts a new one"),
        (["--init", str(path), "--hidden", "32"], "has hidden layers [64], this run --hidden [32]"),
    ):
        info_code = alphazero.main(["--players", "2", "--hidden", "64", *extra, "--out", str(tmp_path / "bad")])
        assert info_code == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()


def test_agent_budget_is_checked() -> None:
    with pytest.raises(ValueError, match="simulations must be an integer from 1 to 1,000,000, got 0"):
        AZAgent(tiny_net(2), simulations=0)
    for bad in (0, float("nan"), float("inf"), True, 1e300):  # nan and inf used to fail at the first move
        with pytest.raises(ValueError, match=re.escape("seconds must be a number in (0, 3600.0]")):
            AZAgent(tiny_net(2), seconds=bad)
    with pytest.raises(ValueError, match="simulations must be an integer from 1 to 1,000,000, got 10000000000"):
        AZAgent(tiny_net(2), simulations=10**10)  # its schedule alone ran out of memory inside act()
    with pytest.raises(ValueError, match="search must be True or False, got 'no'"):
        AZAgent(tiny_net(2), search="no")
    assert AZAgent(tiny_net(2), simulations=np.int64(3)).simulations == 3


def test_the_network_alone_refuses_the_search_options_it_would_ignore() -> None:
    for options in ({"simulations": 5}, {"seconds": 0.5}, {"max_considered": 8}, {"rollout_weight": 0.5}):
        with pytest.raises(
            ValueError, match=f"{next(iter(options))}: search options, but this agent plays the network"
        ):
            AZAgent(tiny_net(2), search=False, **options)
    for spec in ("az-2p-net", "net:" + str(shipped_path("az-2p"))):
        with pytest.raises(ValueError, match="simulations: search options"):
            make_agent(spec, simulations=400)
    with pytest.raises(ValueError, match="net:PATH plays the network alone"):
        make_agent("net:" + str(shipped_path("az-2p")), search=True)
    assert make_agent("az-2p", name="mine").name == "mine"  # a shipped agent takes a label too


def test_train_py_dispatches_to_the_alphazero_trainer() -> None:
    out = subprocess.run(
        [sys.executable, "train.py", "--algo", "alphazero", "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "--simulations" in out.stdout and "usage: python train.py --algo alphazero" in out.stdout
    zero = subprocess.run(
        [sys.executable, "train.py", "--algo", "alphazero", "--simulations", "0"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )  # the error names the command the user typed
    assert (
        zero.returncode == 2
        and "train.py --algo alphazero: error: --simulations must be an integer >= 1" in zero.stderr
    )
    bad = subprocess.run(
        [sys.executable, "train.py", "--algo", "dqn"], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert bad.returncode == 2 and "--algo must be one of ppo, alphazero, got 'dqn'" in bad.stderr


# --------------------------------------------------------------------------- shipped models
@pytest.mark.parametrize("spec", ["net:az-2p", "az-2p-net", "az-solo-net"])
def test_a_network_alone_refuses_a_game_of_another_configuration(spec: str) -> None:
    """A network alone sees only observations (no game to check); the match runner checks
    the model's sidecar against the game before the first move."""
    from umbrella_env.match import AgentError

    agent = make_agent(f"net:{shipped_path(spec[4:])}" if spec.startswith("net:") else spec, seed=0)
    other = GameConfig(num_players=3) if "2p" in spec else GameConfig(num_players=1, plate_level=2)
    seats = [agent] + [make_agent("random", seed=1) for _ in range(other.num_players - 1)]
    with pytest.raises(AgentError, match="cannot play this game: checkpoint .* was trained for"):
        play_game(seats, other, seed=3)


@pytest.mark.parametrize("name", sorted(SHIPPED_MODELS))
def test_shipped_models_load_and_act_legally(name: str) -> None:
    path = shipped_path(name)
    assert path.is_file() and path.with_suffix(".json").is_file()
    meta = json.loads(path.with_suffix(".json").read_text())
    assert meta["command"] and "seed" in meta
    solo = name.startswith("az-solo")
    agent = make_agent(name, seed=0, **({} if name.endswith("-net") else {"simulations": 4}))
    assert agent.use_search == (not name.endswith("-net"))
    assert agent.needs_game == (agent.use_search or agent.net.heuristic_inputs)
    cfg = GameConfig(num_players=1 if solo else 2, plate_level=1, max_turns=30)
    res = play_game([agent] if solo else [agent, make_agent("random", seed=1)], cfg, seed=3)  # checks legality
    assert res.turns > 0
    wrong = GameConfig(num_players=2 if solo else 1)
    with pytest.raises(AgentSpecError, match="was trained for num_players"):
        build_agent(name, wrong)
    if agent.needs_game:  # a searching agent also checks the game it is given
        with pytest.raises(AgentError, match="was trained for num_players"):
            play_game([agent] * wrong.num_players, wrong, seed=3)


@pytest.mark.parametrize(
    ("factory", "simulations", "considered", "rollout_weight"),
    [
        ("az_solo_128", 128, 4, 1.0),
        ("az_solo_256", 256, 8, 1.0),
        ("az_2p_128", 128, 4, 1.0),
        ("az_solo_value", 32, 4, 0.0),
    ],
)
def test_budget_factories_build_the_documented_search(factory, simulations, considered, rollout_weight) -> None:
    """The docs quote figures of these factories by name: each builds the shipped network
    with the search it names."""
    build = getattr(importlib.import_module("umbrella_env.training.alphazero"), factory)
    agent = build(seed=0)
    assert isinstance(agent, AZAgent) and agent.use_search
    assert agent.search.simulations == simulations and agent.search.max_considered == considered
    assert agent.search.rollout_weight == rollout_weight


def test_shipped_models_are_small() -> None:
    files = {shipped_path(n) for n in SHIPPED_MODELS}
    assert len(files) == 3 and sum(f.stat().st_size for f in files) <= 2_000_000


def test_a_seconds_budget_is_timed_on_each_decision_and_carries_nothing_over(monkeypatch) -> None:
    """The per-simulation cost was a running estimate kept across decisions and games: the
    cheap end of one game made the next game's first decision run 19x over its budget.
    A fake clock: a simulation costs about 8 ms in one position, 1 ms in the other (powers
    of two, so the clock's sums are exact)."""
    import agents.az.agent as az_agent

    clock = [0.0]
    cost = [2.0**-7]
    run = GumbelSearch.run
    used: list[int] = []

    def timed_run(self, games, rngs, simulations=None):
        clock[0] += cost[0] * (simulations + 1)
        used.append(simulations)
        return run(self, games, rngs, simulations=simulations)

    monkeypatch.setattr(az_agent.time, "perf_counter", lambda: clock[0])
    monkeypatch.setattr(GumbelSearch, "run", timed_run)
    agent = make_agent("az-solo", seed=0, seconds=0.5)
    first = SingleGame.new(GameConfig(num_players=1), 7)
    for cost[0], game in ((2.0**-10, first), (2.0**-7, SingleGame.new(GameConfig(num_players=1), 8))):
        before, used[:] = clock[0], []
        action = agent.act(game.observe(0), game.legal_mask(), game)
        assert game.legal_mask()[action]
        calibration, search = used
        assert calibration == az_agent.CALIBRATION_SIMULATIONS
        assert search == int((0.5 - cost[0] * (calibration + 1)) / cost[0]) - 1  # this decision's own rate
        assert clock[0] - before <= 0.5 + 1e-9  # within the budget, the timing run included


def test_simulations_and_seconds_together_end_the_search_at_whichever_comes_first(monkeypatch) -> None:
    """Given both, ``simulations`` was ignored: the search ran as many as ``seconds`` allowed."""
    import agents.az.agent as az_agent

    clock = [0.0]
    run = GumbelSearch.run
    used: list[int] = []

    def timed_run(self, games, rngs, simulations=None):
        clock[0] += 2.0**-10 * (simulations + 1)  # about 1 ms a simulation
        used.append(simulations)
        return run(self, games, rngs, simulations=simulations)

    monkeypatch.setattr(az_agent.time, "perf_counter", lambda: clock[0])
    monkeypatch.setattr(GumbelSearch, "run", timed_run)
    game = SingleGame.new(GameConfig(num_players=1), 7)
    for simulations, seconds, expected in ((6, 0.5, 6), (10_000, 0.05, int((0.05 - 5 * 2.0**-10) / 2.0**-10) - 1)):
        agent = make_agent("az-solo", seed=0, simulations=simulations, seconds=seconds)
        used[:] = []
        assert game.legal_mask()[agent.act(game.observe(0), game.legal_mask(), game)]
        assert used == [az_agent.CALIBRATION_SIMULATIONS, expected]
    # a count reached first plays as that count alone (the timing run draws from a copy)
    for seed in range(3):
        game = SingleGame.new(GameConfig(num_players=1), 20 + seed)
        both = make_agent("az-solo", seed=seed, simulations=6, seconds=0.5, deterministic=False)
        alone = make_agent("az-solo", seed=seed, simulations=6, deterministic=False)
        for _ in range(4):
            mask = game.legal_mask()
            action = both.act(game.observe(0), mask, game)
            assert action == alone.act(game.observe(0), mask, game)
            game.step(action)
    only_seconds = make_agent("az-solo", seed=0, seconds=0.5)
    assert only_seconds.simulations is None and make_agent("az-solo").simulations == az_agent.DEFAULT_SIMULATIONS


def test_a_shipped_model_played_otherwise_says_so_in_its_name() -> None:
    """make_agent("az-2p", search=False) was named "az-2p", the shipped network with search."""
    assert make_agent("az-2p").name == "az-2p" and make_agent("az-2p-net").name == "az-2p-net"
    assert make_agent("az-2p", search=False).name == "az-2p without search"
    assert make_agent("az-2p-net", search=True).name == "az-2p-net+search"
    assert make_agent("az-2p", search=False, name="mine").name == "mine"


@pytest.mark.posix
def test_a_checkpoint_and_its_sidecar_are_replaced_together(tmp_path, monkeypatch, ctrl_c) -> None:
    # The sidecar records the .pt's SHA-256: Ctrl-C between the two renames left a new .pt
    # beside the previous sidecar, a last.pt no resume could read.
    import os
    import signal

    import umbrella_env.paths as paths

    net = tiny_net(2)
    save_network(net, tmp_path / "last.pt", plate_level=1, extra={"iteration": 5})
    replace, renamed = os.replace, []

    def ctrl_c_after_the_first(src, dst):
        renamed.append(dst)
        if len(renamed) == 1:
            os.kill(os.getpid(), signal.SIGINT)
        replace(src, dst)

    monkeypatch.setattr(paths.os, "replace", ctrl_c_after_the_first)
    with pytest.raises(KeyboardInterrupt):
        save_network(net, tmp_path / "last.pt", plate_level=1, extra={"iteration": 6})
    monkeypatch.setattr(paths.os, "replace", replace)
    assert len(renamed) == 2 and load_network(tmp_path / "last.pt")[1]["iteration"] == 6  # both, then Ctrl-C
    assert sorted(p.name for p in tmp_path.iterdir()) == ["last.json", "last.pt"]


@pytest.mark.parametrize("search", [False, True])
def test_az_agent_refuses_a_network_whose_outputs_are_not_finite(search: bool) -> None:
    """Finite weights so large that the outputs overflow (a network passed in memory; a
    file's weights fit float16, which deeper networks can still overflow): the network's NaN
    logits and values chose an action as if they were numbers; now the agent refuses them."""
    from agents.checks import OutputsNotFinite

    net = tiny_net(2)
    with torch.no_grad():
        net.trunk[0].weight.fill_(3e38)
    agent = AZAgent(net, search=search, seed=0, **({"simulations": 8} if search else {}))
    game = SingleGame.new(GameConfig(num_players=2), key=3)
    assert game.legal_mask().sum() > 1
    with pytest.raises(OutputsNotFinite, match=r"network '<net>' gave outputs that are not finite \(NaN or inf\), so"):
        agent.act(game.observe(), game.legal_mask(), game)
    assert issubclass(OutputsNotFinite, ValueError)


@pytest.mark.parametrize("name", ["az-2p", "az-solo-net"])
def test_loading_a_shipped_network_leaves_torchs_generator_alone(name: str) -> None:
    """Building the network before its weights are loaded drew from torch's global generator,
    so a user's seeded torch stream moved at every make_agent("az-...") (the .zip agents
    already left it alone)."""
    torch.manual_seed(7)
    expected = torch.rand(3)
    torch.manual_seed(7)
    make_agent(name, seed=0)
    assert torch.equal(torch.rand(3), expected)


def test_networks_loaded_in_several_threads_leave_torchs_generator_alone() -> None:
    """Each load forked torch's generator and put back the state it had seen: loads
    overlapping in threads left the generator moved (4 runs in 5 of 8 threads loading)."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    make_agent("az-2p-net", seed=0)  # the imports, once
    for _ in range(4):
        torch.manual_seed(7)
        expected = torch.random.get_rng_state().clone()
        barrier = threading.Barrier(8)

        def load(barrier: threading.Barrier) -> None:
            barrier.wait()
            make_agent("az-2p-net", seed=0)

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(load, [barrier] * 8))
        assert torch.equal(torch.random.get_rng_state(), expected)


def test_self_play_in_the_trainers_process_keeps_its_torch_threads() -> None:
    """Review of resource use: each self-play chunk set torch to job.get("threads", 1)
    threads, which no job set: with --workers 1 the chunks run in the trainer's process, and
    --torch-threads 2 trained on one thread from the first iteration on (the workers are set
    to one thread as they start, umbrella_env.parallel)."""
    import torch

    from umbrella_env.training import alphazero

    net = AZNet(2, hidden=(16,))
    job = {"config": GameConfig(num_players=2, max_turns=4), "hidden": (16,), "slide_hidden": net.slide_hidden,
           "weights": net.state_dict(), "seeds": [1], "simulations": 2, "max_considered": 2, "margin_weight": 0.5}  # fmt: skip
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        alphazero.selfplay_chunk(job)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(threads)


@pytest.mark.train
def test_init_starts_from_the_checkpoints_network_without_imitating_the_teacher_again() -> None:
    """--init X without --pretrain-games fitted 1,000 heuristic games first (73 s of a tiny
    run; a network stronger than the heuristic pulled back to it; trainer audit, 2026-12-07)."""
    from umbrella_env.training import alphazero

    def pretrain_games(*argv: str) -> int:
        return alphazero.parse_options(alphazero.build_parser(), list(argv))[0].pretrain_games

    assert pretrain_games("--players", "2") == 1000
    assert pretrain_games("--players", "2", "--init", "az-2p") == 0
    assert pretrain_games("--players", "2", "--init", "az-2p", "--teacher", "search") == 1000
    assert pretrain_games("--players", "2", "--init", "az-2p", "--pretrain-games", "50") == 50
    assert pretrain_games("--players", "2", "--init", "az-2p", "--pretrain-epochs", "8") == 1000  # a pretraining
