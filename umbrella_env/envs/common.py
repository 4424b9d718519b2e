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


def end_rewards(state: E.BatchState, reward_mode: str) -> np.ndarray:
    """[B, P] rewards paid when games end (terminated or truncated) for "win" and "score"."""
    if reward_mode == "score":
        return E.scores(state).astype(np.float64)
    ranks = E.ranks(state)
    winners = (ranks == 0).sum(axis=1, keepdims=True)
    out = np.where(ranks == 0, np.where(winners > 1, SHARED_WIN_REWARD, WIN_REWARD), LOSS_REWARD)
    return np.where(state.terminated[:, None], out, 0.0)


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


def play_forced(state: E.BatchState) -> int:
    """Apply every decision of game 0 that has a single legal option (``auto_forced``).

    Returns how many decisions were taken.
    """
    taken = 0
    while not state.done[0]:
        legal = np.flatnonzero(E.legal_action_mask(state)[0])
        if legal.size != 1:
            break
        E.step_unchecked(state, legal)
        taken += 1
    return taken
