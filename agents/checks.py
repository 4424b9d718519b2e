"""Checks of agent options and of ``act``'s inputs: one place for the words of a refused value.

Every agent constructor checks its options with these before it builds anything, so a bad
value is refused with a :class:`ValueError` naming the option and its valid range, not
met as a crash (or a silently weaker agent) in the middle of a game.  NumPy scalars are
accepted like Python numbers; ``bool`` is not a number here.

Every agent that plays a network checks its outputs with :func:`check_finite_outputs` before it
chooses (a network whose outputs are NaN or infinite would otherwise play its first legal
action at every decision, silently, or fail inside torch): :class:`OutputsNotFinite`.

Every ``act`` checks its inputs the same way before it reads them (:func:`check_mask`,
:func:`check_observation`, :func:`check_game_mask`; :func:`check_batch` for ``act_batch``):
a mask of another shape, a mask that is not the game's, or an observation of another
shape is a :class:`ValueError` saying what was expected, not a NumPy or torch traceback
from inside the agent or an action chosen from the wrong mask.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from umbrella_env.cli_args import int_problem, real_problem
from umbrella_env.core import actions as A
from umbrella_env.core.observation import OBS_SIZE
from umbrella_env.core.single import SingleGame

#: The largest search budgets an agent takes: a million simulations, or an hour, for one
#: decision is far beyond any use, and larger ones fail inside ``act`` (the search's schedule
#: alone runs out of memory) or never return.
MAX_SIMULATIONS = 1_000_000
MAX_SECONDS = 3600.0
#: The widest hidden layer either trainer builds (``--net``, ``--hidden``) and a checkpoint's
#: sidecar may describe: far above any useful network for this game, and below sizes whose
#: weights would not fit in memory (a torch allocation error from inside the library otherwise).
MAX_LAYER_SIZE = 8192
#: The most hidden layers either trainer builds and a sidecar may describe: with the width
#: capped alone, a crafted sidecar of a hundred 8,192-wide layers asked for 27 GB before the
#: weights were compared with the file.
MAX_LAYERS = 16
#: The largest ``c_scale`` of the Gumbel search (a thousand times its default 0.1, where the
#: Q values already decide alone; far larger ones overflow into NaN policies).
MAX_C_SCALE = 100
#: The most threads an agent's runtime is asked for (onnxruntime fails to allocate beyond).
MAX_THREADS = 1024


def check_int(name: str, value: Any, minimum: int = 1, maximum: int | None = None) -> int:
    """``value`` as an int >= ``minimum`` (and <= ``maximum`` when given)."""
    problem = int_problem(name, value, minimum, maximum)
    if problem:
        raise ValueError(problem)
    return int(value)


def check_real(
    name: str, value: Any, *, minimum: float | None = None, maximum: float | None = None, positive: bool = False
) -> float:
    """``value`` as a finite float, > 0 when ``positive``, within [minimum, maximum] when given."""
    problem = real_problem(name, value, minimum=minimum, maximum=maximum, positive=positive)
    if problem:
        raise ValueError(problem)
    return float(value)


def check_name(value: Any, *, optional: bool = False) -> Any:
    """``value`` as an agent's display name: a non-empty string (None too when ``optional``:
    the agent then names itself after its file)."""
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"name must be a non-empty string{' or None' if optional else ''}, got {value!r}")
    return value


def check_flag(name: str, value: Any) -> bool:
    """``value`` as a bool; only True and False (or NumPy's) are accepted."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


# --------------------------------------------------------------------------- act's inputs
def _check_binary(mask: np.ndarray, what: str) -> None:
    """A ``ValueError`` unless every entry of ``mask`` is 0 or 1 (bool: free; one vectorized
    test otherwise)."""
    if mask.dtype == np.bool_:
        return
    if mask.dtype.kind not in "iuf":
        raise ValueError(f"{what} must hold 0 or 1 (False or True) per action id, got dtype {mask.dtype}")
    bad = (mask != 0) & (mask != 1)
    if bad.any():
        raise ValueError(f"{what} entries must be 0 or 1 (False or True), got {mask[bad][0].item()!r}")


def check_mask(action_mask: Any) -> np.ndarray:
    """intp [k]: the legal action ids of ``action_mask``, one entry per action id
    (shape ``(968,)``), each 0 or 1 (bool, int or float); another shape or entry, or no legal
    action, is a ``ValueError``."""
    mask = np.asarray(action_mask)
    if mask.shape != (A.NUM_ACTIONS,):
        raise ValueError(
            f"action_mask must have shape ({A.NUM_ACTIONS},), one entry per action id, got shape {mask.shape}"
        )
    _check_binary(mask, "action_mask")
    legal = np.flatnonzero(mask)
    if legal.size == 0:
        raise ValueError("no legal action: the game is over or the mask is empty")
    return legal


def check_game_mask(game: Any, legal: np.ndarray) -> None:
    """A ``TypeError`` unless ``game`` is a :class:`SingleGame`, a ``ValueError`` unless the legal
    ids ``legal`` (:func:`check_mask`) are exactly the legal actions of its decision."""
    if not isinstance(game, SingleGame):
        raise TypeError(f"game must be a SingleGame (umbrella_env.core.single), got {type(game).__name__}")
    want = np.flatnonzero(game.legal_mask())
    if not np.array_equal(legal, want):
        extra, missing = np.setdiff1d(legal, want), np.setdiff1d(want, legal)
        diff = [f"{what} {ids[:8].tolist()}" for what, ids in (("illegal", extra), ("missing", missing)) if ids.size]
        raise ValueError(
            f"action_mask is not the legal actions of the game (seat {game.actor}'s {A.PHASES[game.phase]} "
            f"decision): {', '.join(diff)}; pass game.legal_mask()"
        )


def _floats(observations: Any) -> np.ndarray:
    try:
        return np.asarray(observations, dtype=np.float32)
    except (TypeError, ValueError):
        raise ValueError(f"an observation must be an array of numbers, got {type(observations).__name__}") from None


def check_observation(observation: Any) -> np.ndarray:
    """``observation`` as float32 [899], or a ``ValueError`` for another shape or a NaN or
    infinite value."""
    obs = _floats(observation)
    if obs.shape != (OBS_SIZE,):
        raise ValueError(f"observation must have shape ({OBS_SIZE},), got shape {obs.shape}")
    if not np.isfinite(obs).all():
        raise ValueError("observation has a NaN or infinite value")
    return obs


def check_batch(observations: Any, action_masks: Any, *, require_legal: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """float32 observations [n, 899] and bool masks [n, 968] of a batch, or a ``ValueError``:
    another shape, a mask entry other than 0 or 1, a NaN or infinite observation value, or
    (``require_legal``) a mask with no legal action."""
    obs = _floats(observations)
    masks = np.asarray(action_masks)
    if obs.ndim != 2 or obs.shape[1] != OBS_SIZE or masks.shape != (len(obs), A.NUM_ACTIONS):
        raise ValueError(
            f"expected observations [n, {OBS_SIZE}] and action masks [n, {A.NUM_ACTIONS}], "
            f"got {obs.shape} and {masks.shape}"
        )
    _check_binary(masks, "action masks")
    finite = np.isfinite(obs).all(axis=1)
    if not finite.all():
        raise ValueError(f"observation {int(np.flatnonzero(~finite)[0])} has a NaN or infinite value")
    masks = masks != 0
    if require_legal:
        empty = ~masks.any(axis=1)
        if empty.any():
            raise ValueError(
                f"no legal action in mask {int(np.flatnonzero(empty)[0])}: the game is over or the mask is empty"
            )
    return obs, masks


# --------------------------------------------------------------------------- a network's outputs
class OutputsNotFinite(ValueError):
    """A network's outputs hold a NaN or an infinity, so it cannot choose an action: its
    weights are finite but so large that they overflow on this input (a diverging training
    run saves such a network; weights that are not finite are refused when it loads)."""


#: What torch says when a network's outputs that are not finite reach it: a distribution
#: refusing its parameters, and the sampler of a categorical distribution (RLlib's env runners).
_TORCH_INVALID = ("found invalid values", "probability tensor contains either `inf`, `nan` or element < 0")


def invalid_outputs(error: BaseException | str | None) -> bool:
    """Whether ``error`` (an exception raised while a network ran, or its message), or an
    exception it was raised from (a game's error names the agent's), is a network's outputs
    refused as NaN or infinite: :class:`OutputsNotFinite`, or torch refusing them (how a
    policy of Stable-Baselines3 or RLlib fails when its weights became huge)."""
    while error is not None:
        if isinstance(error, OutputsNotFinite) or any(phrase in str(error) for phrase in _TORCH_INVALID):
            return True
        error = error.__cause__ if isinstance(error, BaseException) else None
    return False


def outputs_not_finite(model: str, position: int | None = None) -> OutputsNotFinite:
    """The error of ``model`` (how the agent names its network, such as
    ``"model 'best.onnx'"``) giving outputs that are not finite (for the batch's ``position``)."""
    where = "" if position is None else f" for position {position} of the batch"
    return OutputsNotFinite(
        f"{model} gave outputs that are not finite (NaN or inf){where}, so it cannot choose an action: "
        "its weights are not finite or overflow on this input (was its training diverging?)"
    )


def check_finite_outputs(model: str, *outputs: np.ndarray) -> None:
    """:class:`OutputsNotFinite` unless every entry of ``outputs`` (arrays of a batch, first
    axis the position: logits [n, 968], values [n] or [n, seats]) is finite; ``model`` as for
    :func:`outputs_not_finite`."""
    for out in outputs:
        values = np.atleast_1d(np.asarray(out))
        if np.isfinite(values).all():  # an empty batch too
            continue
        finite = np.isfinite(values.reshape(len(values), -1)).all(axis=1)
        raise outputs_not_finite(model, int(np.flatnonzero(~finite)[0]) if len(values) > 1 else None)
