"""Pieces shared by the PettingZoo and Gymnasium adapters: argument checks, rewards."""

from __future__ import annotations

from typing import Any

import warnings

import numpy as np

from umbrella_env.core import engine as E
from umbrella_env.core.config import DEFAULT_MAX_TURNS, GameConfig

REWARD_MODES = ("win", "score", "dense")
ILLEGAL_ACTION_MODES = ("loss", "raise")

#: Rewards of reward_mode "win" at the end of a game (2-4 players).
WIN_REWARD, SHARED_WIN_REWARD, LOSS_REWARD = 1.0, 0.5, -1.0
#: Reward of the player whose illegal action ended the game (illegal_action="loss").
ILLEGAL_REWARD = -1.0


def make_config(num_players: Any, plate_level: Any, max_turns: Any, components: Any) -> GameConfig:
    kwargs: dict[str, Any] = {}
    if components is not None:
        kwargs["components"] = components
    return GameConfig(
        num_players=num_players,
        plate_level=plate_level,
        max_turns=DEFAULT_MAX_TURNS if max_turns is None else max_turns,
        **kwargs,
    )


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(repr(c) for c in choices)}, got {value!r}")
    return value


def end_rewards(scores: Any, ranks: Any, terminated: Any, reward_mode: str) -> np.ndarray:
    """Rewards paid when games end, for reward modes "win" and "score".

    Works on one game (``scores`` / ``ranks`` of shape [P]) or a batch ([B, P] with
    ``terminated`` [B]).  "win": +1 sole winner, +0.5 each shared winner, -1 the others,
    0 for everyone when the game was truncated.  "score": the scores.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if reward_mode == "score":
        return scores
    ranks = np.asarray(ranks)
    winners = (ranks == 0).sum(axis=-1, keepdims=True)
    out = np.where(ranks == 0, np.where(winners > 1, SHARED_WIN_REWARD, WIN_REWARD), LOSS_REWARD)
    return np.where(np.asarray(terminated)[..., None] if out.ndim > 1 else terminated, out, 0.0)


def score_edge(scores: Any, seats: Any) -> np.ndarray:
    """Score of ``seats`` minus the mean score of the other seats (solo: the score).

    One game (``scores`` [P], an int seat) or a batch (``scores`` [B, P], ``seats`` [B]);
    the shaping signal of training (``umbrella_env.train``, ``umbrella_env.imitation``).
    """
    scores = np.asarray(scores, dtype=np.float64)
    mine = np.take_along_axis(scores, np.asarray(seats, dtype=np.intp)[..., None], axis=-1)[..., 0]
    players = scores.shape[-1]
    if players == 1:
        return mine
    return mine - (scores.sum(axis=-1) - mine) / (players - 1)


def load_single(d: Any, config: GameConfig) -> Any:
    """A :class:`SingleGame` from a state dict, refused unless it fits ``config``."""
    from umbrella_env.core.errors import StateError
    from umbrella_env.core.single import SingleGame

    game = SingleGame.from_dict(d, components=config.components)
    for key, want, got in (
        ("num_players", config.num_players, game.config.num_players),
        ("plate_level", config.plate_level, game.config.plate_level),
        ("max_turns", config.max_turns, game.config.max_turns),
    ):
        if want != got:
            raise StateError(f"{key}: the env is configured for {want}, the dict has {got}")
    return game


RENDER_MODES = ["ansi", "human", "rgb_array"]


def render_state(render_mode: str | None, state_dict: dict[str, Any]) -> str | np.ndarray | None:
    """Render for the env render modes: text for "ansi", printed text for "human",
    a uint8 H x W x 3 picture of the table for "rgb_array"."""
    from umbrella_env.core.image import render_rgb
    from umbrella_env.core.render import render_text

    if render_mode is None:
        warnings.warn(f"render() called without a render_mode; pass one of {RENDER_MODES}", stacklevel=3)
        return None
    if render_mode == "rgb_array":
        return render_rgb(state_dict)
    text = render_text(state_dict)
    if render_mode == "human":
        print(text)
        return None
    return text


def play_forced(game: Any) -> int:
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
