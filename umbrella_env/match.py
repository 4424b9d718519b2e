"""One game between agents: the match runner every caller shares.

Evaluation, terminal play, teacher games for imitation, the agent ladder and training's
periodic evaluation all play games through :func:`play_game`, so these are defined here
once:

* **Agent specs** (:func:`build_agent`): a name of :func:`agents.make_agent`
  (``random``, ``greedy``, ``heuristic``, ``search``), a trained checkpoint (``.zip`` or
  ``.onnx``, checked against the game's player count and plate level) or
  ``package.module:factory`` (a callable returning an agent).  A spec that cannot be built
  raises :class:`AgentSpecError` naming the valid choices.
* **The call convention** (:func:`agent_action`): the deciding seat's agent gets its own
  observation, the legal mask and a *copy* of the game (:func:`agent_view`), so no agent
  can change the game it is asked about, and whose never-seen hidden tiles are redrawn, so
  no agent can read them (docs/rules.md §6, decision 15: the tiles shown before are kept).
  An agent that declares ``needs_game = False`` gets ``None`` instead (cheaper); an agent
  that declares nothing gets the copy.  An exception in
  ``act`` or an illegal answer raises :class:`AgentError` naming the agent and its seat.
* **Win credits** (:func:`win_credits`): in a finished game each of the ``k`` seats of
  rank 0 gets ``1/k`` (a shared victory is split); a truncated game has no winner and is
  a draw between all ``P`` seats (``1/P`` each).  Credits of a game always sum to 1.
  Ratings and head-to-head rates read a game through the same rule
  (:func:`outcome_ranks`: a truncated game ranks every seat 0).
* **Models and the game** (:func:`check_agent_configuration`): before the first move, an
  agent loaded from a checkpoint (its sidecar is its ``meta``) made for another player
  count or plate level is refused with :class:`AgentError`, also when it would only see
  observations (a network alone, an ONNX policy).
* **Solo merit bands**: their table is a rule fact, :data:`umbrella_env.core.facts.MERIT_BANDS`
  (docs/rules.md §8.4); :func:`band_label` writes a band's range.

This module sits above the environment library and :mod:`agents`.
"""

from __future__ import annotations

import importlib
import inspect
import math
import os
import re
import sys
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents import AGENT_NAMES, make_agent
from agents.checkpoint import check_game_configuration
from agents.registry import AZ_NAMES, NET_PREFIX, SPEC_FACTORY, expand_home, net_shipped_name, spec_choices
from agents.rllib_agent import PREFIX as RLLIB_PREFIX  # an RLlib checkpoint folder: rllib:PATH
from umbrella_env.core import actions as A
from umbrella_env.core import facts
from umbrella_env.core.config import GameConfig
from umbrella_env.core.engine import draw_key
from umbrella_env.core.hidden import determinize
from umbrella_env.core.single import SingleGame


def band_label(low: float, high: float) -> str:
    """A merit band's score range as text: ``<15``, ``15-18``, ``31+``."""
    if low == -math.inf:
        return f"<{int(high) + 1}"
    if high == math.inf:
        return f"{int(low)}+"
    return f"{int(low)}-{int(high)}"


class AgentSpecError(ValueError):
    """An agent spec that cannot be built (unknown name, bad checkpoint, not an agent)."""


class AgentError(RuntimeError):
    """An agent misbehaved during a game (an illegal action, an exception in ``act``)."""


class StopMatch(Exception):
    """Raised by an agent to abandon the game (a human player who quits); passes through
    the runner unchanged."""


# --------------------------------------------------------------------------- specs
#: ``name:key=value``, the agent options of the ladder (not a label: a label has no ':'),
#: which the other commands do not take (:data:`NO_OPTIONS`).
OPTIONS_LIKE = re.compile(r"^[A-Za-z][\w-]*:[A-Za-z_]\w*=[^=]*(,[A-Za-z_]\w*=[^=]*)*$")
NO_OPTIONS = (
    "takes no agent options (name:key=value is the ladder's syntax); give an agent name, "
    "a checkpoint or a factory module:function that builds the agent with its options"
)
CHECKPOINT_SUFFIXES = (".zip", ".onnx", ".pt")


def is_checkpoint(spec: str) -> bool:
    return spec.lower().endswith(CHECKPOINT_SUFFIXES) or spec.startswith((RLLIB_PREFIX, NET_PREFIX))


def absolute_spec(spec: str) -> str:
    """``spec`` with the path of a checkpoint made absolute (other specs unchanged): a spec
    sent to a Ray worker, whose current folder is not the command's."""
    if not is_checkpoint(spec):
        return spec
    spec = expand_home(spec)
    if net_shipped_name(spec) is not None:
        return spec  # a shipped network's name: no path
    for prefix in (RLLIB_PREFIX, NET_PREFIX):
        if spec.startswith(prefix):
            return prefix + str(Path(spec[len(prefix) :]).resolve())
    return str(Path(spec).resolve())


#: The agent specs :func:`build_agent` takes, in a command's ``--help`` (evaluate, play).
SPECS_HELP = (
    f"{', '.join(AGENT_NAMES)}, the shipped networks {', '.join(AZ_NAMES)}, a .zip, .pt or .onnx "
    f"checkpoint, {NET_PREFIX}PATH.pt or {NET_PREFIX}NAME of a shipped one (an alphazero network alone), "
    f"{RLLIB_PREFIX}FOLDER, package.module:factory "
    "(load only checkpoints and modules you trust: a .zip or RLlib checkpoint is unpickled and a module is run)"
)


def valid_choices() -> str:
    """The specs :func:`build_agent` takes, in words: the registry's and a factory."""
    return "expected " + spec_choices("'package.module:factory' (a callable building the agent)")


def main_factory(spec: str) -> bool:
    """Whether ``spec`` is a ``module:factory`` of the module ``__main__`` (a script's or an
    interactive session's)."""
    return isinstance(spec, str) and bool(SPEC_FACTORY.match(spec)) and spec.split(":")[0] == "__main__"


def session_factory(spec: str) -> bool:
    """Whether ``spec`` is a ``module:factory`` of an interactive session's ``__main__`` (a
    notebook, ``python -c``, a REPL: no file), which worker processes and Ray tasks cannot
    import; a script's ``__main__`` can be (its file is run again under the name
    ``__mp_main__``)."""
    if not main_factory(spec):
        return False
    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    return not (isinstance(main_file, str) and Path(main_file).is_file())


def build_agent(
    spec: str,
    config: GameConfig,
    seed: int | None = None,
    options: Mapping[str, Any] | None = None,
    label: str | None = None,
) -> Any:
    """A new agent from its spec string for a game of ``config``, or :class:`AgentSpecError`.

    Checkpoints are checked against the game's player count and plate level; a factory's
    result must have callable ``act`` and ``reset``.  ``options`` are constructor keyword
    arguments of a registry agent or checkpoint (e.g. ``{"simulations": 100}``); a
    ``package.module:factory`` spec takes none.  ``label`` names the agent in the errors
    (default: ``spec``; e.g. the ladder's ``search:simulations=0``, options included).
    """
    if not isinstance(spec, str) or not spec.strip():
        raise AgentSpecError(f"agent spec must be a non-empty string, got {spec!r}; {valid_choices()}")
    options = dict(options or {})
    label = spec if label is None else label
    if SPEC_FACTORY.match(spec) and not is_checkpoint(spec):
        if options:
            raise AgentSpecError(f"agent {label!r}: a package.module:factory spec takes no options")
        module_name, attr = spec.split(":")
        try:
            factory: Callable[..., Any] = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            # the module itself not found (not one it imports, nor a name missing from it): the path
            missing = isinstance(exc, ModuleNotFoundError) and (
                module_name == exc.name or module_name.startswith(f"{exc.name}.")
            )
            frames = traceback.extract_tb(exc.__traceback__)
            if isinstance(exc, ImportError) and not missing and frames and not frames[-1].filename.startswith("<"):
                # an import inside the user's module failed: where, as for any error of its code
                raise AgentSpecError(
                    f"agent {label!r}: importing {module_name} raised {exc!r} ({_raised_at(exc)})"
                ) from None
            hint = (
                " (the module must be importable by this Python: add its folder to the PYTHONPATH "
                "environment variable, e.g. '.' for the current one; docs/agents.md)"
                if missing
                else ""
            )
            raise AgentSpecError(f"agent {label!r}: cannot import {attr} from {module_name}: {exc}{hint}") from None
        except Exception as exc:  # the user's module fails as it runs: one line naming where, never a traceback
            where = (
                f"{Path(exc.filename or '?').name}:{exc.lineno}" if isinstance(exc, SyntaxError) else _raised_at(exc)
            )
            raise AgentSpecError(f"agent {label!r}: importing {module_name} raised {exc!r} ({where})") from None
        if not callable(factory):
            raise AgentSpecError(f"agent {label!r}: {attr} is a {type(factory).__name__}, not an agent factory")
        try:
            takes_seed = "seed" in inspect.signature(factory).parameters
        except (TypeError, ValueError):
            takes_seed = False
        try:
            agent = factory(seed=seed) if takes_seed else factory()
        except Exception as exc:  # any failure of a user factory is reported, never a traceback
            raise AgentSpecError(f"agent {label!r}: the factory raised {exc!r} ({_raised_at(exc)})") from None
    else:
        name = spec.strip().lower()
        if not is_checkpoint(spec) and name not in AGENT_NAMES and name not in AZ_NAMES:
            if OPTIONS_LIKE.match(spec) and not Path(spec).exists():
                raise AgentSpecError(f"agent {label!r}: this command {NO_OPTIONS}")
            if Path(spec).expanduser().is_dir():
                raise AgentSpecError(
                    f"agent {label!r} is a folder: a checkpoint is a file (.zip, .pt or .onnx), or an RLlib "
                    f"checkpoint folder given as '{RLLIB_PREFIX}{spec}'; {valid_choices()}"
                )
            raise AgentSpecError(f"unknown agent {label!r}: {valid_choices()}")
        kwargs: dict[str, Any] = {}
        if is_checkpoint(spec) or name in AZ_NAMES:  # trained for one configuration
            kwargs = {"num_players": config.num_players, "plate_level": config.plate_level}
        fixed = sorted({"seed", *kwargs} & set(options))
        if fixed:
            raise AgentSpecError(f"agent {label!r}: {', '.join(fixed)} cannot be an option (the game sets it)")
        try:
            agent = make_agent(spec, seed=seed, **kwargs, **options)
        except (ValueError, TypeError, OSError) as exc:
            raise AgentSpecError(f"agent {label!r}: {exc}" if repr(spec) not in str(exc) else str(exc)) from None
    for method in ("act", "reset"):
        if not callable(getattr(agent, method, None)):
            raise AgentSpecError(
                f"agent {label!r} is a {type(agent).__name__} with no {method}() method: not an agent "
                "(an agent has act(observation, action_mask, game) and reset(seed); see agents/base.py)"
            )
    try:  # e.g. a factory that loads a model made for another game
        check_agent_configuration(agent, config, f"agent {label!r}")
    except AgentError as exc:
        raise AgentSpecError(str(exc)) from None
    return agent


# --------------------------------------------------------------------------- one decision
def agent_view(game: SingleGame) -> SingleGame:
    """The copy of ``game`` an agent is handed: the hidden tiles no seat has seen are
    redrawn from the unseen ones (:func:`umbrella_env.core.hidden.determinize` with ``recall``; the
    tiles shown before, and everything public, are kept), so no agent can read the true
    ones, by design or by mistake.  The draw is seeded from the public turn and phase: the
    same position gives the same view, whatever ran before it (a worker's earlier games)."""
    return determinize(game, game.actor, np.random.default_rng((game.turn, game.phase)), recall=True)


def agent_action(agent: Any, game: SingleGame, who: str | None = None) -> int:
    """The agent's checked action for the seat deciding in ``game`` (see the module doc)."""
    actor = game.actor
    mask = game.legal_mask()
    view = agent_view(game) if getattr(agent, "needs_game", True) else None
    who = who or agent_label(agent)
    try:  # a copy of the mask: an agent that edits it cannot make its own choice legal
        action = agent.act(game.observe(actor), mask.copy(), view)
    except StopMatch:
        raise
    except (Exception, SystemExit) as exc:  # SystemExit too: an agent does not end the command
        raise AgentError(f"{who} (seat {actor}) raised {exc!r} at {turn_label(game)} ({_raised_at(exc)})") from exc
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        raise AgentError(
            f"{who} (seat {actor}) returned {action!r} ({type(action).__name__}) at {turn_label(game)}: an action is "
            f"an int id in [0, {mask.size})"
        )
    if not (0 <= action < mask.size and mask[action]):
        named = f" ({A.ACTION_STRINGS[action]!r})" if 0 <= action < mask.size else ""
        raise AgentError(
            f"{who} (seat {actor}) chose {action!r}{named}, not a legal action, at {turn_label(game)} "
            f"({int(mask.sum())} legal)"
        )
    return int(action)


def turn_label(game: SingleGame) -> str:
    """The turn a message names, counted from 1 as ``play`` counts it (the state's ``turn``
    field counts the turns completed, from 0)."""
    return f"turn {game.turn + 1}"


def agent_label(agent: Any) -> str:
    """How the errors name an agent that was given no label: ``agent '<its name>'``."""
    return f"agent {getattr(agent, 'name', type(agent).__name__)!r}"


def reset_agent(agent: Any, seed: int, who: str | None = None) -> None:
    """``agent.reset(seed)`` before a game; a failure is :class:`AgentError` naming the
    agent (a ``reset()`` without the seed argument, a seed too large for ``np.random.seed``:
    every agent gets seeds up to 2**63 - 1)."""
    try:
        agent.reset(seed)
    except StopMatch:
        raise
    except (Exception, SystemExit) as exc:
        who = who or agent_label(agent)
        raise AgentError(f"{who} raised {exc!r} in reset({seed}) ({_raised_at(exc)})") from exc


def _raised_at(exc: BaseException) -> str:
    """``file:line in function`` where ``exc`` was raised (lost across processes)."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return "no traceback"
    frame = frames[-1]
    return f"{Path(frame.filename).name}:{frame.lineno} in {frame.name}"


def outcome_ranks(ranks: Sequence[int], truncated: bool = False) -> tuple[int, ...]:
    """The ranks a game's result counts with: the game's ranks, or every seat 0 (a draw)
    when it was truncated.  Win credits, ratings and head-to-head rates all use these."""
    return tuple(0 for _ in ranks) if truncated else tuple(int(r) for r in ranks)


def win_credits(ranks: Sequence[int], truncated: bool = False) -> list[float]:
    """Per seat: ``1/k`` for each of the ``k`` seats of rank 0 of :func:`outcome_ranks`,
    else 0 (a truncated game is a draw: ``1/P`` each).  Solo games have no winner: ``[0.0]``."""
    return [float(c) for c in facts.win_credits(list(ranks), bool(truncated))]


# --------------------------------------------------------------------------- one game
@dataclass(frozen=True)
class MatchResult:
    """One finished (or truncated) game, by seat.  ``play_game(agents, config, seed,
    key=result.key)`` replays it."""

    scores: tuple[int, ...]
    ranks: tuple[int, ...]
    turns: int
    truncated: bool
    seed: int
    key: int

    @property
    def credits(self) -> list[float]:
        return win_credits(self.ranks, self.truncated)


@dataclass
class DecisionTimes:
    """Seconds spent in each seat's ``act`` and the number of its decisions."""

    seconds: list[float]
    decisions: list[int]


def check_agent_configuration(agent: Any, config: GameConfig, who: str) -> None:
    """:class:`AgentError` when ``agent`` plays a model made for another player count or
    plate level than ``config``'s (an agent loaded from a checkpoint carries its sidecar as
    ``meta``).  An agent that only sees observations, such as a network alone, would
    otherwise play such a game without a word."""
    meta = getattr(agent, "meta", None)
    if not isinstance(meta, Mapping) or meta.get("num_players") is None:
        return
    try:
        path = getattr(agent, "path", None)  # an agent of the user's own may have a meta and no file
        check_game_configuration(meta, path, config, named="checkpoint" if path is not None else "its model (meta)")
    except ValueError as exc:
        raise AgentError(f"{who} cannot play this game: {exc}") from None


def play_out(
    agents: Sequence[Any],
    game: SingleGame,
    *,
    names: Sequence[str] | None = None,
    on_move: Callable[[SingleGame, int, int], None] | None = None,
    times: DecisionTimes | None = None,
) -> SingleGame:
    """Play ``game`` to its end with the agents as they are (already reset); returns it.

    ``names`` label the agents in errors (default: their ``name``);
    ``on_move(game, seat, action)`` is called before each action is applied; ``times``
    (when given) accumulates each seat's thinking time.
    """
    labels = [f"agent {n!r}" for n in names] if names is not None else [None] * len(agents)
    for seat, agent in enumerate(agents):
        check_agent_configuration(agent, game.config, labels[seat] or agent_label(agent))
    while not game.done:
        actor = game.actor
        t0 = time.perf_counter()
        action = agent_action(agents[actor], game, labels[actor])
        if times is not None:
            times.seconds[actor] += time.perf_counter() - t0
            times.decisions[actor] += 1
        if on_move is not None:
            on_move(game, actor, action)
        game.step(action)
    return game


def play_game(
    agents: Sequence[Any],
    config: GameConfig,
    seed: int,
    *,
    key: int | None = None,
    names: Sequence[str] | None = None,
    on_move: Callable[[SingleGame, int, int], None] | None = None,
    times: DecisionTimes | None = None,
) -> MatchResult:
    """Play one game on :class:`SingleGame`; ``agents[s]`` plays seat ``s``.

    ``seed`` seeds the agents (one derived seed per seat, passed to ``reset``) and,
    unless ``key`` is given, the deal; the other arguments are :func:`play_out`'s.
    """
    if not isinstance(config, GameConfig):
        raise TypeError(f"config: expected a GameConfig, got {type(config).__name__}: {config!r}")
    P = config.num_players
    if len(agents) != P:
        raise ValueError(f"a {P}-player game needs {P} agents, got {len(agents)}")
    spec = next((a for a in agents if isinstance(a, (str, os.PathLike))), None)
    if spec is not None:
        raise TypeError(
            f"play_game takes agent objects, got the spec {spec!r}: build them with build_agent(spec, config), "
            "or play specs with umbrella_env.evaluation.play_specs"
        )
    rng = np.random.default_rng(seed)
    agent_seeds = rng.integers(0, 2**63, size=P)
    if key is None:
        key = draw_key(rng)
    labels = [f"agent {n!r}" for n in names] if names is not None else [None] * P
    try:
        for agent, s, who in zip(agents, agent_seeds, labels):
            reset_agent(agent, int(s), who)
        game = play_out(agents, SingleGame.new(config, key), names=names, on_move=on_move, times=times)
    except AgentError as exc:  # say which game, so that it can be replayed
        raise AgentError(f"{exc}; in the game of seed {seed}, deal key {key} (play_game(..., seed, key=key))") from (
            exc.__cause__ or exc
        )
    return MatchResult(
        scores=tuple(int(x) for x in game.scores()),
        ranks=tuple(int(x) for x in game.ranks()),
        turns=int(game.turn),
        truncated=bool(game.truncated),
        seed=int(seed),
        key=int(key),
    )


def play_rotation(agent: Any, opponent: Any, config: GameConfig, games: int, seed: int) -> tuple[float, float]:
    """(win rate, mean score) of ``agent`` over ``games`` games against ``opponent`` at every
    other seat (solo: alone; win rate 0), ``agent``'s seat rotating game by game; game ``i``
    is seeded from ``(seed, i)``.  The trainers' in-training evaluation (MaskablePPO, RLlib)."""
    P = config.num_players
    wins = score = 0.0
    for i in range(games):
        seat = i % P
        agents = [opponent] * P
        agents[seat] = agent
        game_seed = int(np.random.SeedSequence(seed, spawn_key=(i,)).generate_state(1, np.uint64)[0]) >> 1
        res = play_game(agents, config, game_seed)
        score += res.scores[seat]
        wins += res.credits[seat]
    return (wins / games if P > 1 else 0.0, score / games)
