"""Benchmark of the OpenSpiel games (not a test; needs the openspiel extra).

Records games of uniformly random legal play on :class:`SingleGame`, then replays the same
actions and times, per decision, in the same run:

* ``SingleGame``        ``legal_actions()`` + ``step`` on the engine itself;
* ``OpenSpiel state``   ``legal_actions()`` + ``apply_action`` on the ``python_umbrella``
                        (solo: ``python_umbrella_solo``) state, the deal's chance nodes
                        excluded: what an OpenSpiel algorithm pays per move;
* ``+ infostate``       the same, reading ``information_state_string()`` at every move
                        (as OpenSpiel's ISMCTS does for its tree);
* ``clone``, ``resample``  microseconds per ``state.clone()`` and per
                        ``resample_from_infostate`` (ISMCTS takes one of them per simulation),
                        averaged over 400 positions spread along the recorded games (a late
                        position's information state is longer, so it costs more);

and the peer, OpenSpiel's own Python game ``python_block_dominoes`` (chance and imperfect
information too), recorded and replayed the same way.  ``/ engine`` is the OpenSpiel
state's speed over ``SingleGame``'s (the adapter's cost), ``/ peer`` over the peer's.

    python -m umbrella_env.tools.bench_openspiel [--steps 20000] [--players 1 2 4]

Target: ``OpenSpiel state`` at least as fast as the peer (``/ peer`` >= 1).
"""

from __future__ import annotations

import argparse
import random
import sys
import time

import numpy as np

from umbrella_env.cli_args import HelpFormatter, command, int_problem, missing_extra
from umbrella_env.core.config import GameConfig
from umbrella_env.core.single import SingleGame

try:
    import pyspiel
    from open_spiel.python.games import block_dominoes  # noqa: F401  (registers the peer)

    from umbrella_env.envs.openspiel import UmbrellaState, load_game
except ImportError as exc:
    missing_extra(__name__, exc, "the OpenSpiel benchmark", extra="openspiel")

Episode = tuple[int, list[int]]  # deal key, actions


def record(config: GameConfig, steps: int, seed: int = 0) -> list[Episode]:
    """Random legal games (deal key, actions) of at least ``steps`` decisions in all."""
    rnd = random.Random(seed)
    episodes: list[Episode] = []
    total = 0
    while total < steps:
        key = rnd.randrange(2**64)
        game, actions = SingleGame.new(config, key), []
        while not game.done:
            action = rnd.choice(game.legal_actions())
            game.step(action)
            actions.append(action)
        episodes.append((key, actions))
        total += len(actions)
    return episodes


def dealt_state(game: pyspiel.Game, key: int) -> UmbrellaState:
    state = game.new_initial_state()
    for i in range(8):
        state.apply_action(key >> (8 * i) & 255)
    return state


def time_engine(config: GameConfig, episodes: list[Episode]) -> float:
    """Decisions per second of legal_actions + step on SingleGame."""
    starts = [SingleGame.new(config, key) for key, _ in episodes]
    n = sum(len(actions) for _, actions in episodes)
    t0 = time.perf_counter()
    for game, (_, actions) in zip(starts, episodes):
        for action in actions:
            game.legal_actions()
            game.step(action)
    return n / (time.perf_counter() - t0)


def time_states(game: pyspiel.Game, episodes: list[Episode], infostate: bool) -> float:
    """Decisions per second of legal_actions + apply_action (+ the information state)."""
    starts = [dealt_state(game, key) for key, _ in episodes]
    n = sum(len(actions) for _, actions in episodes)
    t0 = time.perf_counter()
    for state, (_, actions) in zip(starts, episodes):
        for action in actions:
            state.legal_actions()
            if infostate:
                state.information_state_string()
            state.apply_action(action)
    return n / (time.perf_counter() - t0)


def time_copies(game: pyspiel.Game, episodes: list[Episode], positions: int = 400) -> tuple[float, float]:
    """Microseconds per clone and per resample_from_infostate, over ``positions`` positions
    spread evenly along the recorded games (fewer if the games have fewer decisions)."""
    total = sum(len(actions) for _, actions in episodes)
    every = max(1, total // positions)
    states: list[UmbrellaState] = []
    n = 0
    for key, actions in episodes:
        state = dealt_state(game, key)
        for action in actions:
            if n % every == 0 and len(states) < positions:
                states.append(state.clone())
            state.apply_action(action)
            n += 1
    sampler = np.random.default_rng(0).random
    t0 = time.perf_counter()
    for state in states:
        state.clone()
    clone = (time.perf_counter() - t0) / len(states)
    t0 = time.perf_counter()
    for state in states:
        state.resample_from_infostate(state.current_player(), sampler)
    resample = (time.perf_counter() - t0) / len(states)
    return clone * 1e6, resample * 1e6


def time_peer(steps: int, seed: int = 0) -> float:
    """Decisions per second of python_block_dominoes timed as the Umbrella states are: random
    legal games recorded first, then replayed with legal_actions() + apply_action (the
    deal's chance nodes excluded)."""
    game = pyspiel.load_game("python_block_dominoes")
    rnd = random.Random(seed)
    recorded: list[tuple[pyspiel.State, list[int]]] = []
    n = 0
    while n < steps:
        state = game.new_initial_state()
        while state.is_chance_node():
            state.apply_action(rnd.choice([a for a, _ in state.chance_outcomes()]))
        start, actions = state.clone(), []
        while not state.is_terminal():
            action = rnd.choice(state.legal_actions())
            state.apply_action(action)
            actions.append(action)
        recorded.append((start, actions))
        n += len(actions)
    t0 = time.perf_counter()
    for state, actions in recorded:
        for action in actions:
            state.legal_actions()
            state.apply_action(action)
    return n / (time.perf_counter() - t0)


@command
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m umbrella_env.tools.bench_openspiel", description=__doc__, formatter_class=HelpFormatter
    )
    parser.add_argument("--steps", type=int, default=20_000, help="decisions timed per configuration")
    parser.add_argument(
        "--players", type=int, nargs="+", default=[1, 2, 4], choices=[1, 2, 3, 4], help="player counts timed"
    )
    args = parser.parse_args(argv)
    problem = int_problem("--steps", args.steps)
    if problem:
        parser.error(problem)
    peer = time_peer(args.steps)
    print(f"decisions/s of random legal play (the peer, python_block_dominoes: {peer:,.0f})")
    columns = {"players": 7, "SingleGame": 11, "OpenSpiel state": 16, "/ engine": 8, "/ peer": 7, "+ infostate": 12}
    columns.update({"clone us": 9, "resample us": 12})
    print(" ".join(f"{name:>{width}}" for name, width in columns.items()))
    for players in args.players:
        config = GameConfig(num_players=players)
        game = load_game(players)
        episodes = record(config, args.steps)
        engine = time_engine(config, episodes)
        states = time_states(game, episodes, infostate=False)
        info = time_states(game, episodes, infostate=True)
        clone, resample = time_copies(game, episodes)
        label = "solo" if players == 1 else str(players)
        print(
            f"{label:>7} {engine:11,.0f} {states:16,.0f} {states / engine:7.2f}x {states / peer:6.2f}x {info:12,.0f} "
            f"{clone:9.1f} {resample:12.1f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
