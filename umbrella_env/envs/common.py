"""The env policy layer: what every adapter (AEC, solo, vector, SB3, VectorGame) decides
the same way, written once.

| policy | home |
|---|---|
| options | :func:`make_config`, :func:`multiplayer_config` (2-4 players), :func:`check_choice`, :func:`check_flag` |
| reset options, start state | :func:`check_reset_options`, :func:`state_option`, :func:`refuse_state_option` |
| seeds | :func:`seed_sequence` (a batch; one seed: the core's :func:`~umbrella_env.core.engine.check_seed`) |
| actions, illegal-action policy | :func:`judge_action` (one game), :func:`judge_actions` (a batch) |
| rewards | :func:`step_rewards`, :func:`end_rewards`, :func:`illegal_rewards` |
| state save / load | :func:`save_state`, :func:`load_state`, :class:`IllegalEnd` |
| the game a single-game env plays | :class:`EnvGame` (mask, observation, step, state, render), :func:`require_game` |
| rendering | :func:`render_state` |

**Illegal-action policy.** An action of the wrong type, shape or range is always refused
with :class:`ActionError`. An id that exists but is not legal now is refused with
:class:`IllegalActionError` under ``illegal_action="raise"``; under ``"loss"`` it ends
the game: the mover gets :data:`ILLEGAL_REWARD`, the others 0, a warning names the action,
and the game is over (no legal actions, phase ``game_over`` in the observation and in the
state dict, whose :data:`ILLEGAL_KEY` entry says who played what).

**A refused call changes nothing.** Every check (seed, action, state dict) runs before
anything changes; callers mutate only after these functions return.
"""

from __future__ import annotations

import difflib
import os
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, ParamSpec, TypeVar

import gymnasium
import numpy as np
import pettingzoo
from numpy.typing import NDArray

from umbrella_env.core import actions as A
from umbrella_env.core import engine as E
from umbrella_env.core.components import ComponentSet, components_of
from umbrella_env.core.config import DEFAULT_MAX_TURNS, GameConfig
from umbrella_env.core.errors import (
    ActionError,
    ArgumentError,
    ArgumentTypeError,
    ConfigError,
    IllegalActionError,
    IllegalActionWarning,
    NotStartedError,
    StateError,
)
from umbrella_env.core.image import render_rgb
from umbrella_env.core.observation import observation_layout
from umbrella_env.core.render import render_text
from umbrella_env.core.single import SingleGame

REWARD_MODES = ("win", "score", "dense")
ILLEGAL_ACTION_MODES = ("loss", "raise")
RENDER_MODES = ["ansi", "human", "rgb_array"]
#: Frames per second of a recording (``metadata["render_fps"]``; one decision per frame).
RENDER_FPS = 2

#: Rewards of reward_mode "win" at the end of a game (2-4 players).
WIN_REWARD, SHARED_WIN_REWARD, LOSS_REWARD = 1.0, 0.5, -1.0
#: Reward of the player whose illegal action ended the game (illegal_action="loss").
ILLEGAL_REWARD = -1.0
#: The env-level key of a state dict whose game an illegal action ended (see IllegalEnd).
ILLEGAL_KEY = "illegal_action"


# --------------------------------------------------------------------------- options
def make_config(num_players: Any, plate_level: Any, max_turns: Any, components: Any) -> GameConfig:
    """The envs' game configuration.  ``components``: None (the game's), a ``ComponentSet``
    or a dict in the form of ``ComponentSet.to_dict`` or of a component file (the keys it
    leaves out keep the game's values; a ``gymnasium`` spec's JSON holds such a dict)."""
    kwargs: dict[str, Any] = {}
    if isinstance(components, Mapping):
        kwargs["components"] = components_of(components)
    elif components is not None and not isinstance(components, ComponentSet):
        raise ConfigError(
            "components must be a ComponentSet (see load_components) or its dict form (ComponentSet.to_dict), "
            f"got {type(components).__name__}"
        )
    elif components is not None:
        kwargs["components"] = components
    return GameConfig(
        num_players=num_players,
        plate_level=plate_level,
        max_turns=DEFAULT_MAX_TURNS if max_turns is None else max_turns,
        **kwargs,
    )


def multiplayer_config(
    num_players: Any, plate_level: Any, max_turns: Any, components: Any, solo_env: str
) -> GameConfig:
    """:func:`make_config` for an env of 2-4 players: every argument checked as the core
    checks it (an int first), then a player count outside 2-4 refused with a
    :class:`ConfigError` naming ``solo_env``, the env that plays solo games."""
    n = num_players
    if isinstance(n, (int, np.integer)) and not isinstance(n, (bool, np.bool_)) and not 2 <= n <= 4:
        solo = f"; solo games are {solo_env}" if n == 1 else ""
        raise ConfigError(f"num_players must be 2, 3 or 4 in this env, got {n}{solo}")
    return make_config(num_players, plate_level, max_turns, components)


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ArgumentError(f"{name} must be one of {', '.join(repr(c) for c in choices)}, got {value!r}")
    return value


def check_flag(name: str, value: Any) -> bool:
    """``value`` as a Python bool (a NumPy bool too, as NumPy ints are ints), else TypeError."""
    if not isinstance(value, (bool, np.bool_)):
        raise ArgumentTypeError(f"{name} must be a bool, got {value!r}")
    return bool(value)


def check_reset_options(options: Any, reads: Sequence[str] = ("state",)) -> None:
    """``reset(options=...)``: None or a dict, whose entries the envs ignore (PettingZoo's
    ``api_test`` requires that unknown ones be accepted), except those the env ``reads``: the
    native vector env's ``reset_mask``, as Gymnasium's vector envs read it, and the
    single-game envs' ``state`` (:func:`state_option`).  An ignored key that looks like one
    of them (``stat``, ``State``) draws a :class:`UserWarning` naming it: otherwise a typo
    dealt a new game without a word."""
    if options is not None and not isinstance(options, Mapping):
        raise ArgumentTypeError(f"options must be a dict or None, got {type(options).__name__}")
    for key in options or ():
        if not isinstance(key, str) or key in reads:
            continue
        near = difflib.get_close_matches(key.lower(), reads, n=1, cutoff=0.75)
        if near:
            warnings.warn(
                f"reset option {key!r} is not one this env reads, and is ignored; did you mean {near[0]!r}?",
                UserWarning,
                stacklevel=3,
            )


#: The ``reset`` option of the single-game envs that starts from a state dict.
STATE_OPTION = "state"


def state_option(config: GameConfig, options: Mapping[str, Any] | None) -> EnvGame | None:
    """The game of ``options["state"]`` (a state dict, validated: raises :class:`StateError`),
    or None without that option.  ``reset(options={"state": d})`` is ``set_state(d)`` as a
    reset, so it passes through every wrapper (``gymnasium.make``'s order enforcing, which
    forwards no other method, and PettingZoo's), and a reset that gets it draws no deal."""
    if not options or STATE_OPTION not in options:
        return None
    return EnvGame.load(config, options[STATE_OPTION])


def refuse_state_option(options: Mapping[str, Any] | None, env_name: str) -> None:
    """An env that cannot start from a state dict refuses the ``state`` option, rather than
    dealing a new game as if it had not been given."""
    if options and STATE_OPTION in options:
        raise ArgumentError(
            f"options[{STATE_OPTION!r}] starts a single-game env (AEC, parallel, solo) from a state dict; "
            f"{env_name} has no such option"
        )


# --------------------------------------------------------------------------- seeds
_P = ParamSpec("_P")
_R = TypeVar("_R")


def takes_arguments_of(source: Callable[_P, object]) -> Callable[[Callable[..., _R]], Callable[_P, _R]]:
    """Type a factory that passes its arguments on to ``source`` (``env(**kwargs)`` to
    ``raw_env``) as taking ``source``'s parameters, so that a type checker checks a call's
    keywords (a misspelt one is caught before it runs); the factory itself is unchanged."""

    def typed(factory: Callable[..., _R]) -> Callable[_P, _R]:
        return factory

    return typed


def seed_sequence(seed: Any, n: int, what: str, allow_none: bool) -> list[int | None] | None:
    """Per-item seeds from a sequence (a list, a tuple, a range, a 1-D integer array, ...; not
    text or bytes) of exactly ``n`` seeds; ``None`` if ``seed`` is not a sequence.

    Entries are non-negative ints (or ``None`` when ``allow_none``); anything else,
    or a sequence of another length, is refused with :class:`ConfigError`.
    """
    if not isinstance(seed, (Sequence, np.ndarray)) or isinstance(seed, (str, bytes, bytearray, memoryview)):
        return None
    entries = list(seed) if not isinstance(seed, np.ndarray) or seed.ndim == 1 else None
    if entries is None or len(entries) != n:
        shape = f"shape {seed.shape}" if isinstance(seed, np.ndarray) else f"{len(seed)} entries"
        raise ConfigError(f"seed: expected an int or a sequence of {n} seeds (one per {what}), got {shape}")
    out: list[int | None] = []
    for i, s in enumerate(entries):
        if s is None and allow_none:
            out.append(None)
            continue
        kind = "None or a non-negative int" if allow_none else "a non-negative int"
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, np.integer)) or s < 0:
            raise ConfigError(f"seed[{i}] must be {kind}, got {s!r} of type {type(s).__name__}")
        out.append(int(s))
    return out


# --------------------------------------------------------------------------- actions
def judge_action(action: Any, legal: NDArray[np.bool_], phase: int, illegal_action: str, who: str) -> tuple[int, bool]:
    """Check one action against the legal mask of the decision and apply the illegal-action policy.

    Returns ``(id, legal)``; ``legal`` is False only under ``"loss"`` (a warning was
    issued, the caller ends the game).  Raises :class:`ActionError` for anything that is
    not an id in range, :class:`IllegalActionError` for an illegal id under ``"raise"``.
    ``who`` names the mover in the messages.  Changes nothing.
    """
    try:
        a = A.check_action_id(action)
    except ActionError as exc:
        raise ActionError(f"{who}: {exc}") from None
    if legal[a]:
        return a, True
    _refuse_or_warn(
        f"{who}: action {a} ({A.ACTION_STRINGS[a]!r}) is not legal in phase {A.PHASES[phase]!r}",
        illegal_action,
        f"the game ends and {who} loses (reward {ILLEGAL_REWARD:g})",
    )
    return a, False


def judge_actions(
    actions: Any, legal: NDArray[np.bool_], live: NDArray[np.bool_], phases: NDArray[Any], illegal_action: str, who: str
) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """Batch version of :func:`judge_action`: one action per row, rows not ``live`` ignored.

    Returns ``(actions, illegal)``: int64 actions with -1 for the rows that must not be
    stepped (not live, or illegal under ``"loss"``), and the bool rows whose illegal
    action ends their game.  ``who`` names a row in messages (``"env"`` -> ``"env 3"``).
    Changes nothing.
    """
    n = live.shape[0]
    acts: NDArray[np.integer[Any]] = E.check_action_batch(actions, n, who=who)
    bad = live & ((acts < 0) | (acts >= A.NUM_ACTIONS))  # in the given dtype: no wrap-around
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ActionError(
            f"{who} {i}: action id {int(acts[i])} is out of range: expected an integer in [0, {A.NUM_ACTIONS})"
        )
    stepped: NDArray[np.int64] = np.where(live, acts.astype(np.int64), -1)
    rows = np.flatnonzero(live)
    illegal = np.zeros(n, bool)
    illegal[rows[~legal[rows, stepped[rows]]]] = True
    if illegal.any():
        i = int(np.flatnonzero(illegal)[0])
        more = int(illegal.sum()) - 1
        _refuse_or_warn(
            f"{who} {i}: action {int(stepped[i])} ({A.ACTION_STRINGS[stepped[i]]!r}) is not legal in phase "
            f"{A.PHASES[int(phases[i])]!r}" + (f" (and {more} other {who}(s))" if more else ""),
            illegal_action,
            f"that game ends and its player loses (reward {ILLEGAL_REWARD:g})",
        )
        stepped[illegal] = -1
    return stepped, illegal


#: Files whose frames a warning skips to reach the user's call: this package and the
#: Gymnasium / PettingZoo wrappers around its envs (``warnings.warn(skip_file_prefixes=)``
#: needs Python 3.12).
_LIBRARY_PREFIXES = tuple(
    {
        str(folder) + os.sep
        for file in (Path(__file__).parent, Path(gymnasium.__file__), Path(pettingzoo.__file__))
        for folder in (file.parent, file.resolve().parent)  # as imported (a symlink) and resolved
    }
)


def user_stacklevel() -> int:
    """The ``stacklevel`` of the first frame outside :data:`_LIBRARY_PREFIXES`, for a
    ``warnings.warn`` in the function that calls this: the warning then points at the
    user's line (``env.step(...)``), however many wrappers (``gym.make``'s checkers,
    PettingZoo's ``OrderEnforcingWrapper``) sit between it and the env."""
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_LIBRARY_PREFIXES):
        frame = frame.f_back
        level += 1
    return level


def _refuse_or_warn(message: str, illegal_action: str, consequence: str) -> None:
    """Raise under "raise"; under "loss" warn, pointing at the user's call of the env's step."""
    if illegal_action == "raise":
        raise IllegalActionError(message)
    warnings.warn(f"{message}; {consequence}", IllegalActionWarning, stacklevel=user_stacklevel())


# --------------------------------------------------------------------------- rewards
def end_rewards(scores: Any, ranks: Any, terminated: Any, reward_mode: str) -> np.ndarray:
    """Rewards paid when games end, for reward modes "win" and "score".

    Works on one game (``scores`` / ``ranks`` of shape [P]) or a batch ([B, P] with
    ``terminated`` [B]).  "win": +1 sole winner, +0.5 each shared winner, -1 the others,
    0 for everyone when the game was truncated.  "score": the scores (``ranks`` unused).
    """
    scores = np.asarray(scores, dtype=np.float64)
    if reward_mode == "score":
        return scores
    ranks = np.asarray(ranks)
    winners = (ranks == 0).sum(axis=-1, keepdims=True)
    out = np.where(ranks == 0, np.where(winners > 1, SHARED_WIN_REWARD, WIN_REWARD), LOSS_REWARD)
    return np.where(np.asarray(terminated)[..., None] if out.ndim > 1 else terminated, out, 0.0)


def step_rewards(
    reward_mode: str, before: Any, after: Any, done: Any, terminated: Any, ranks: Callable[[], Any]
) -> Any:
    """The rewards of a step, for every seat: one game (``after`` [P] scores, ``done`` a
    bool; returns a list) or a batch (``after`` [B, P], ``done`` [B]; returns an array).

    "dense": the change of every score (``after - before``); "win" / "score": the
    :func:`end_rewards` of the games that are ``done``, 0 elsewhere.  ``ranks`` is called
    only when a game ended in "win" mode.
    """
    if isinstance(done, (bool, np.bool_)):  # one game, in plain Python: the AEC and solo envs' hot path
        if reward_mode == "dense":
            return [float(a - b) for a, b in zip(after, before)]
        if not done:
            return [0.0] * len(after)
        return end_rewards(after, ranks() if reward_mode == "win" else None, terminated, reward_mode).tolist()
    after = np.asarray(after, dtype=np.float64)
    if reward_mode == "dense":
        return after - np.asarray(before, dtype=np.float64)
    done = np.asarray(done)
    if not done.any():
        return np.zeros_like(after)
    final = end_rewards(after, ranks() if reward_mode == "win" else None, terminated, reward_mode)
    return np.where(done[:, None], final, 0.0)


def illegal_rewards(num_players: int, seat: int) -> np.ndarray:
    """[P] rewards of a game an illegal action of ``seat`` ended: ILLEGAL_REWARD for it, 0 for the others."""
    out = np.zeros(num_players)
    out[seat] = ILLEGAL_REWARD
    return out


def score_edge(scores: Any, seats: Any) -> np.ndarray:
    """Score of ``seats`` minus the mean score of the other seats (solo: the score).

    One game (``scores`` [P], an int seat) or a batch (``scores`` [B, P], ``seats`` [B]);
    the shaping signal of training (``umbrella_env.training``).
    """
    scores = np.asarray(scores, dtype=np.float64)
    mine = np.take_along_axis(scores, np.asarray(seats, dtype=np.intp)[..., None], axis=-1)[..., 0]
    players = scores.shape[-1]
    if players == 1:
        return mine
    return mine - (scores.sum(axis=-1) - mine) / (players - 1)


# --------------------------------------------------------------------------- state save / load
@dataclass(frozen=True)
class IllegalEnd:
    """How an env ended a game: ``seat`` played ``action``, not legal in ``phase``.

    The rules engines know nothing of it: in a state dict it is the env-level entry
    ``"illegal_action": {"seat": 1, "action": 37, "phase": "slide"}``, next to
    ``"phase": "game_over"`` and ``"terminated": true``.
    """

    seat: int
    action: int
    phase: str

    def to_dict(self) -> dict[str, Any]:
        return {"seat": self.seat, "action": self.action, "phase": self.phase}


def save_state(core: dict[str, Any], ended: IllegalEnd | None) -> dict[str, Any]:
    """The env's state dict: the core's dict of the game, and if an illegal action ended
    it, phase ``game_over``, ``terminated`` and the :data:`ILLEGAL_KEY` entry."""
    if ended is None:
        return core
    core.update(phase=A.PHASES[A.PHASE_GAME_OVER], terminated=True)
    core[ILLEGAL_KEY] = ended.to_dict()
    return core


def load_state(d: Any, config: GameConfig) -> tuple[SingleGame, IllegalEnd | None]:
    """The game of an env state dict (:func:`save_state`), refused with :class:`StateError`
    unless it is valid and fits ``config``."""
    if not isinstance(d, Mapping):
        hint = " (the array of state() is the PettingZoo global state; get_state() gives the dict)"
        hint = hint if isinstance(d, np.ndarray) else ""
        raise StateError(f"state: expected a dict, got {type(d).__name__}{hint}")
    if ILLEGAL_KEY not in d:
        return _load_single(d, config), None
    entry = d[ILLEGAL_KEY]
    if not isinstance(entry, Mapping) or set(entry) != {"seat", "action", "phase"}:
        raise StateError(f"{ILLEGAL_KEY}: expected a dict with keys 'seat', 'action', 'phase', got {entry!r}")
    seat, action, phase = entry["seat"], entry["action"], entry["phase"]
    for key, value, top in (("seat", seat, config.num_players), ("action", action, A.NUM_ACTIONS)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < top:
            raise StateError(f"{ILLEGAL_KEY}.{key}: expected an int in [0, {top}), got {value!r}")
    live_phases = A.PHASES[: A.PHASE_GAME_OVER]
    if phase not in live_phases:
        raise StateError(f"{ILLEGAL_KEY}.phase: expected one of {', '.join(live_phases)}, got {phase!r}")
    if d.get("phase") != A.PHASES[A.PHASE_GAME_OVER] or d.get("terminated") is not True or d.get("truncated", False):
        raise StateError(
            f"{ILLEGAL_KEY}: an illegal action ends the game: expected phase 'game_over', "
            f"terminated true and truncated false, got {d.get('phase')!r}, {d.get('terminated')!r}, "
            f"{d.get('truncated', False)!r}"
        )
    core = {k: v for k, v in d.items() if k != ILLEGAL_KEY}
    core.update(phase=phase, terminated=False)
    game = _load_single(core, config)
    if game.actor != seat:
        raise StateError(f"{ILLEGAL_KEY}.seat: seat {seat} did not decide in that position (seat {game.actor} did)")
    if game.legal_mask()[action]:
        raise StateError(
            f"{ILLEGAL_KEY}.action: action {action} ({A.ACTION_STRINGS[action]!r}) is legal in that position"
        )
    return game, IllegalEnd(int(seat), int(action), phase)


def _load_single(d: Mapping[str, Any], config: GameConfig) -> SingleGame:
    game = SingleGame.from_dict(d, components=config.components)
    for key, want, got in (
        ("num_players", config.num_players, game.config.num_players),
        ("plate_level", config.plate_level, game.config.plate_level),
        ("max_turns", config.max_turns, game.config.max_turns),
    ):
        if want != got:
            raise StateError(f"{key}: the env is configured for {want}, the dict has {got}")
    return game


_PHASE_SLICE = next(slice(start, stop) for start, stop, name, _ in observation_layout() if name == "phase")


def ended_observation(obs: np.ndarray) -> np.ndarray:
    """``obs`` (one [OBS] or a batch [B, OBS]) with its phase one-hot set to ``game_over``, in place."""
    obs[..., _PHASE_SLICE] = 0
    obs[..., _PHASE_SLICE.start + A.PHASE_GAME_OVER] = 1
    return obs


# --------------------------------------------------------------------------- the game of a single-game env
class EnvGame:
    """The game a single-game env plays (AEC and solo): a :class:`SingleGame` and whether
    the env ended it for an illegal action.

    The one place where those envs compute the legal mask (once per decision, all False
    once the game is over), observe, judge and apply actions, save, load and render.
    """

    __slots__ = ("config", "game", "ended", "_mask")

    def __init__(self, config: GameConfig, game: SingleGame, ended: IllegalEnd | None = None) -> None:
        self.config = config
        self.game = game
        self.ended = ended
        self._mask: NDArray[np.bool_] | None = None

    @classmethod
    def deal(cls, config: GameConfig, rng: np.random.Generator) -> EnvGame:
        """A new game dealt from one key drawn from ``rng`` (as the batched envs deal)."""
        return cls(config, SingleGame.new(config, E.draw_key(rng)))

    @classmethod
    def load(cls, config: GameConfig, d: Any) -> EnvGame:
        """The game of a state dict (validated; raises :class:`StateError`)."""
        return cls(config, *load_state(d, config))

    # ---------------------------------------------------------------- queries
    @property
    def over(self) -> bool:
        return self.ended is not None or self.game.terminated or self.game.truncated

    @property
    def terminated(self) -> bool:
        return self.ended is not None or self.game.terminated

    @property
    def truncated(self) -> bool:
        return self.game.truncated

    @property
    def actor(self) -> int:
        return self.game.actor

    @property
    def phase(self) -> int:
        return A.PHASE_GAME_OVER if self.ended is not None else self.game.phase

    def legal(self) -> NDArray[np.bool_]:
        """bool [NUM_ACTIONS] legal actions of the decision (cached; do not mutate)."""
        if self._mask is None:
            self._mask = self.game.legal_mask() if self.ended is None else np.zeros(A.NUM_ACTIONS, bool)
        return self._mask

    def observe(self, seat: int) -> np.ndarray:
        obs = self.game.observe(seat)
        return obs if self.ended is None else ended_observation(obs)

    def scores(self) -> list[int]:
        return self.game.scores()

    def rewards(self, reward_mode: str) -> np.ndarray:
        """[P] the rewards a loaded game shows: those of its end (illegal action, or
        "win" / "score" end rewards), 0 for a live game and in "dense" mode (a state
        dict carries no history)."""
        if self.ended is not None:
            return illegal_rewards(self.config.num_players, self.ended.seat)
        if not self.over or reward_mode == "dense":
            return np.zeros(self.config.num_players)
        return end_rewards(self.scores(), self.game.ranks(), self.game.terminated, reward_mode)

    # ---------------------------------------------------------------- changes
    def judge(self, action: Any, illegal_action: str, who: str) -> tuple[int, bool]:
        """:func:`judge_action` against this decision."""
        return judge_action(action, self.legal(), self.game.phase, illegal_action, who)

    def play(self, action: int, auto_forced: bool) -> None:
        """Apply a legal action; with ``auto_forced``, then every single-option decision."""
        game = self.game
        game.step(action)
        if auto_forced:
            play_forced(game)
        self._mask = None

    def end_illegally(self, action: int) -> None:
        """End the game: the actor played ``action``, which is not legal."""
        self.ended = IllegalEnd(self.game.actor, int(action), A.PHASES[self.game.phase])
        self._mask = None

    def state(self) -> dict[str, Any]:
        return save_state(self.game.to_dict(), self.ended)

    def render(self, render_mode: str | None) -> str | np.ndarray | None:
        return render_state(render_mode, self.game.to_dict(), self.ended)


def require_game(game: EnvGame | None, start: str = "reset() (or set_state())") -> EnvGame:
    """``game``, or a RuntimeError when the env has none yet: a single-game env before its
    first ``start`` call (the method names the message gives)."""
    if game is None:
        raise NotStartedError(f"call {start} before using the environment")
    return game


def play_forced(game: SingleGame) -> int:
    """Take every decision of a :class:`SingleGame` that has a single legal option
    (``auto_forced``).  Returns how many were taken."""
    taken = 0
    while not game.done:
        legal = game.legal_actions()
        if len(legal) != 1:
            break
        game.step(legal[0])
        taken += 1
    return taken


def play_forced_rows(state: E.BatchState, rows: NDArray[np.bool_]) -> None:
    """:func:`play_forced` for the games ``rows`` (bool ``[N]``) of a batch: each takes every
    decision with a single legal option, all of them stepping together."""
    rows = rows & ~state.done
    while rows.any():
        mask = E.legal_action_mask(state)
        rows &= mask.sum(axis=1) == 1
        if not rows.any():
            return
        E.step_unchecked(state, np.where(rows, mask.argmax(axis=1), -1))
        rows &= ~state.done


# --------------------------------------------------------------------------- rendering
def render_state(
    render_mode: str | None, state_dict: dict[str, Any], ended: IllegalEnd | None = None
) -> str | np.ndarray | None:
    """Render for the env render modes: text for "ansi", printed text for "human",
    a uint8 H x W x 3 picture of the table for "rgb_array".  ``state_dict`` is the core's
    dict; with ``ended``, the game is shown over (as in the env's state dict) and the text
    says which illegal action ended it."""
    if render_mode is None:
        warnings.warn(
            f"render() called without a render_mode; pass one of {RENDER_MODES}", stacklevel=user_stacklevel()
        )
        return None
    over = ended is not None  # the core's dict is of the game before that action: drawn over
    if render_mode == "rgb_array":
        return render_rgb(state_dict, over=over)
    text = render_text(state_dict, over=over)
    if ended is not None:
        text += (
            f"\ngame over: seat {ended.seat} played {A.ACTION_STRINGS[ended.action]!r}, "
            f"not legal in phase {ended.phase!r}, and lost"
        )
    if render_mode == "human":
        print(text)
        return None
    return text
