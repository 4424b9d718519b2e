"""Differential check: the batched engine equals the plain-Python reference.

Plays many games on both engines side by side and compares, at every state, the legal
actions, the whole state dict (which includes the scores) and, at the end, the ranks.
Games start from fresh setups and, for a share of them, from "stress" positions where
the first player's four zones are empty (forcing the fallback slide).  The policy is
random, except that a slide completing a figure is preferred with probability
``greedy`` so that validation, powers, passing, covers and game ends happen often.

Run a large check (the test suite runs 10,000 states per configuration)::

    python -m umbrella_env.tools.differential --states 100000

:func:`run_single` (``--single``) checks the fast single-game engine
(:mod:`umbrella_env.core.single`) against the batched engine the same way, adding the
observation from every seat at every state::

    python -m umbrella_env.tools.differential --single --states 100000
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from umbrella_env.cli_args import HelpFormatter, command, int_problem, seed_option
from umbrella_env.core import actions as A
from umbrella_env.core import batch_io
from umbrella_env.core import engine as E
from umbrella_env.core import facts as F
from umbrella_env.core import observation as O
from umbrella_env.core.components import default_components
from umbrella_env.core.config import GameConfig
from umbrella_env.core.playout import completing_slides, policy_actions  # noqa: F401 (tests import both from here)
from umbrella_env.core.reference import ReferenceGame
from umbrella_env.core.serialize import zone_counts, zone_string
from umbrella_env.core.single import SingleGame


class Mismatch(AssertionError):
    """The two engines disagree; the message holds a reproducible position."""


@dataclass
class DiffStats:
    num_players: int
    plate_level: int
    states: int = 0
    games_finished: int = 0
    terminated: int = 0
    truncated: int = 0
    #: finished 2-4 player games whose end was triggered, and those that took reserve tokens
    end_triggered: int = 0
    reserve_used: int = 0
    phases: collections.Counter[int] = field(default_factory=collections.Counter)

    def count_finished(self, state: E.BatchState, done: np.ndarray) -> None:
        """Count the games ``done`` of ``state`` (just finished, before their reset)."""
        self.games_finished += done.size
        self.terminated += int(state.terminated[done].sum())
        self.truncated += int(state.truncated[done].sum())
        if self.num_players > 1:
            self.end_triggered += int((state.end_triggered_by[done] >= 0).sum())
            self.reserve_used += int((state.reserve_used[done] > 0).sum())

    def summary(self) -> str:
        phases = ", ".join(f"{A.PHASES[p]} {n}" for p, n in sorted(self.phases.items()))
        return (
            f"P={self.num_players} L={self.plate_level}: {self.states} states equal, "
            f"{self.games_finished} games finished ({self.terminated} terminated, {self.truncated} truncated, "
            f"{self.end_triggered} with the end triggered, {self.reserve_used} using the reserve); "
            f"decisions: {phases}"
        )


def stress_start(d: dict[str, Any]) -> dict[str, Any]:
    """Empty the current player's four zones into the other zones (2-4 players)."""
    d = json.loads(json.dumps(d))
    P, seat = d["num_players"], d["current_player"]
    z = d["zones"]
    own = [F.zone_keys(P)[z] for z in F.seat_zones(P, seat)]
    moved = [0, 0, 0, 0]
    for key, i in own:
        counts = zone_counts(z[key] if i is None else z[key][i])
        moved = [a + b for a, b in zip(moved, counts)]
        if i is None:
            z[key] = ""
        else:
            z[key][i] = ""
    others = [("personal", q) for q in range(P) if q != seat] + [
        ("side", q) for q in range(P) if q not in (seat, (seat - 1) % P)
    ]
    for c in range(4):
        for k in range(moved[c]):
            key, i = others[(c + k) % len(others)]
            z[key][i] = zone_string([a + (1 if j == c else 0) for j, a in enumerate(zone_counts(z[key][i]))])
    d["phase"] = "fallback"
    d.pop("scores", None)
    return d


def late_start(d: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    """Move a setup close to the end: tokens from the supply onto random plate spaces, in
    colours the spaces accept, leaving 1 to 3 in the supply (solo: at least 1 placed, at
    least 1 left) and no plate full; one turn counted per token (in solo, one umbrella
    discarded per turn, as a slide does), so that the state dict stays valid."""
    d = json.loads(json.dumps(d))
    P = d["num_players"]
    plate = default_components().plates[d["plate_level"]]
    keep = int(rng.integers(1, min(4, d["supply"])))
    free = [(p, s) for p in range(P) for s in range(10) if d["plates"][p][s] is None]
    placed = 0
    for i in rng.permutation(len(free))[: d["supply"] - keep]:
        p, s = free[i]
        if sum(v is not None for v in d["plates"][p]) == 9:
            continue
        ok = [c for c in range(4) if any(plate.accepts(s, c, k) for k in range(4))]
        d["plates"][p][s] = "BGRY"[ok[int(rng.integers(len(ok)))]]
        d["supply"] -= 1
        placed += 1
    d["turn"] += placed
    if P == 1:
        pair = plate.powers.get("extra_turn")
        returned = pair is not None and all(d["plates"][0][s] is not None for s in pair)
        z = d["zones"]
        for _ in range(d["turn"] - returned):
            key = max(("top", "personal", "left", "right"), key=lambda k: len(z[k]))
            z["discard"] = "".join(sorted(z["discard"] + z[key][0], key="BGRY".index))
            z[key] = z[key][1:]
    d.pop("scores", None)
    return d


def _first_difference(a: Any, b: Any, path: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if a.get(k, "<missing>") != b.get(k, "<missing>"):
                return _first_difference(a.get(k, "<missing>"), b.get(k, "<missing>"), f"{path}.{k}" if path else k)
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return _first_difference(x, y, f"{path}[{i}]")
    return f"{path}: batched {a!r} != reference {b!r}"


def run(
    num_players: int,
    plate_level: int,
    states: int,
    seed: int = 0,
    batch: int = 64,
    greedy: float = 0.7,
    stress: float = 0.2,
    max_turns: int = 120,
    late: float = 0.3,
) -> DiffStats:
    """Compare the engines until ``states`` states have been checked; raise :class:`Mismatch`.
    A share ``late`` of the games starts from :func:`late_start` (game ends, the final round
    and reserve tokens are frequent), a share ``stress`` from :func:`stress_start`."""
    cfg = GameConfig(num_players=num_players, plate_level=plate_level, max_turns=max_turns)
    rng = np.random.default_rng(seed)
    state = E.init(cfg, batch, seed=rng)
    refs: list[ReferenceGame] = [None] * batch  # type: ignore[list-item]
    stats = DiffStats(num_players, plate_level)

    def start(games: np.ndarray) -> None:
        for b in games:
            d = batch_io.to_dict(state, int(b))
            if rng.random() < late:
                d = late_start(d, rng)
                batch_io.load_dict(state, int(b), d)
            if not cfg.solo and rng.random() < stress:
                d = stress_start(d)
                batch_io.load_dict(state, int(b), d)
            refs[b] = ReferenceGame.from_dict(d)

    start(np.arange(batch))
    while stats.states < states:
        mask = E.legal_action_mask(state)
        live = np.flatnonzero(~state.done)
        before = {}
        for b in live:
            want = sorted(refs[b].legal_actions())
            got = np.flatnonzero(mask[b]).tolist()
            if got != want:
                raise Mismatch(
                    f"legal actions differ (P={num_players} L={plate_level} seed={seed}): "
                    f"batched-only {sorted(set(got) - set(want))[:5]}, "
                    f"reference-only {sorted(set(want) - set(got))[:5]}\n"
                    f"state: {json.dumps(batch_io.to_dict(state, int(b)))}"
                )
            before[b] = batch_io.to_dict(state, int(b))
            stats.phases[int(state.phase[b])] += 1
        stats.states += live.size
        acts = policy_actions(state, rng, greedy)
        E.step(state, acts)
        for b in live:
            refs[b].step(int(acts[b]))
            got_d, want_d = batch_io.to_dict(state, int(b)), refs[b].to_dict()
            if got_d != want_d:
                raise Mismatch(
                    f"states differ after {A.ACTION_STRINGS[acts[b]]!r} (P={num_players} L={plate_level} seed={seed}): "
                    f"{_first_difference(got_d, want_d)}\nbefore: {json.dumps(before[b])}"
                )
        done = np.flatnonzero(state.done)
        if done.size:
            ranks = E.ranks(state)
            for b in done:
                if ranks[b].tolist() != refs[b].ranks():
                    raise Mismatch(f"ranks differ: batched {ranks[b].tolist()} != reference {refs[b].ranks()}")
            stats.count_finished(state, done)
            E.reset(state, done, rng)
            start(done)
    return stats


def run_single(
    num_players: int,
    plate_level: int,
    states: int,
    seed: int = 0,
    batch: int = 32,
    greedy: float = 0.7,
    stress: float = 0.2,
    max_turns: int = 120,
    late: float = 0.3,
) -> DiffStats:
    """Compare :class:`~umbrella_env.core.single.SingleGame` twins with the batched engine.

    At every state: the legal mask, the state dict, the observation from every seat (and
    from the default seat, the actor), the scores and the ranks.  Half of the twins are
    stepped with ``step_checked``, the others with the unchecked ``step``.  A share
    ``late`` of the games starts from :func:`late_start` so that game ends (supply
    exhausted, final round, reserve tokens) and level-4 powers are frequent.
    """
    cfg = GameConfig(num_players=num_players, plate_level=plate_level, max_turns=max_turns)
    P = cfg.num_players
    rng = np.random.default_rng(seed)
    state = E.init(cfg, batch, seed=rng)
    twins: list[SingleGame] = [None] * batch  # type: ignore[list-item]
    stats = DiffStats(num_players, plate_level)
    where = f"(single vs batched, P={num_players} L={plate_level} seed={seed})"

    def start(games: np.ndarray) -> None:
        for b in games:
            if rng.random() < late:
                batch_io.load_dict(state, int(b), late_start(batch_io.to_dict(state, int(b)), rng))
            if not cfg.solo and rng.random() < stress:
                batch_io.load_dict(state, int(b), stress_start(batch_io.to_dict(state, int(b))))
            twins[b] = SingleGame.from_batch(state, int(b))

    def compare(games: np.ndarray, after: str) -> None:
        mask = E.legal_action_mask(state)
        obs = [O.observe(state, seats=q) for q in range(P)]
        obs_actor = O.observe(state)
        scores, ranks = E.scores(state), E.ranks(state)
        for b in games:
            g = twins[b]
            got_d, want_d = g.to_dict(), batch_io.to_dict(state, int(b))
            ctx = f"{where} {after}\nstate: {json.dumps(want_d)}"
            if got_d != want_d:
                raise Mismatch(f"states differ {_first_difference(want_d, got_d)} {ctx}")
            m = g.legal_mask()
            if not np.array_equal(m, mask[b]):
                raise Mismatch(
                    f"legal masks differ: batched-only {np.flatnonzero(mask[b] & ~m)[:5].tolist()}, "
                    f"single-only {np.flatnonzero(m & ~mask[b])[:5].tolist()} {ctx}"
                )
            if g.legal_actions() != np.flatnonzero(mask[b]).tolist():
                raise Mismatch(f"legal_actions differ from the mask {ctx}")
            for q in range(P):
                o = g.observe(q)
                if o.dtype != np.float32 or not np.array_equal(o, obs[q][b]):
                    bad = np.flatnonzero(o != obs[q][b])[:5].tolist()
                    raise Mismatch(f"observations from seat {q} differ at indices {bad} {ctx}")
            if not np.array_equal(g.observe(), obs_actor[b]):
                raise Mismatch(f"observations from the actor differ {ctx}")
            if g.scores() != scores[b].tolist() or g.ranks() != ranks[b].tolist():
                raise Mismatch(f"scores/ranks differ: {g.scores()} {g.ranks()} vs {scores[b]} {ranks[b]} {ctx}")
            if (g.phase, g.current, g.actor, g.turn, g.terminated, g.truncated, g.done) != (
                int(state.phase[b]), int(state.current[b]), int(E.actor(state)[b]), int(state.turn[b]),
                bool(state.terminated[b]), bool(state.truncated[b]), bool(state.done[b]),
            ):  # fmt: skip
                raise Mismatch(f"scalar properties differ {ctx}")

    start(np.arange(batch))
    compare(np.arange(batch), "at setup")
    while stats.states < states:
        live = np.flatnonzero(~state.done)
        for b in live:
            stats.phases[int(state.phase[b])] += 1
        acts = policy_actions(state, rng, greedy)
        E.step(state, acts)
        for b in live:
            if b % 2:
                twins[b].step_checked(int(acts[b]))
            else:
                twins[b].step(int(acts[b]))
        compare(live, "after a step")
        stats.states += live.size
        done = np.flatnonzero(state.done)
        if done.size:
            stats.count_finished(state, done)
            E.reset(state, done, rng)
            start(done)
            compare(done, "after a reset")
    return stats


@command
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m umbrella_env.tools.differential",
        description=__doc__,
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--states", type=int, default=100_000, help="states to check per configuration")
    parser.add_argument(
        "--players", type=int, nargs="+", default=[1, 2, 3, 4], choices=[1, 2, 3, 4], help="player counts compared"
    )
    parser.add_argument(
        "--levels", type=int, nargs="+", default=[1, 2, 3, 4], choices=[1, 2, 3, 4], help="plate levels compared"
    )
    parser.add_argument("--seed", type=seed_option(), default=0, help="seed of the random states")
    parser.add_argument(
        "--single", action="store_true", help="check the single-game engine against the batched one instead"
    )
    args = parser.parse_args(argv)
    problem = int_problem("--states", args.states)
    if problem:
        parser.error(problem)
    total = 0
    t0 = time.perf_counter()
    for p in args.players:
        for level in args.levels:
            try:
                stats = (run_single if args.single else run)(p, level, args.states, seed=args.seed)
            except Mismatch as exc:  # an engine bug: what differs, where, and how to replay it
                print(
                    f"MISMATCH at {p} player(s), plate level {level} (--seed {args.seed}): {exc}\n"
                    f"replay: python -m umbrella_env.tools.differential --players {p} --levels {level} "
                    f"--states {args.states} --seed {args.seed}{' --single' if args.single else ''}",
                    file=sys.stderr,
                )
                return 1
            except KeyboardInterrupt:
                print(f"interrupted: {total} states checked, all equal so far", file=sys.stderr)
                return 130
            total += stats.states
            print(stats.summary(), flush=True)
    print(f"all equal: {total} states in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
