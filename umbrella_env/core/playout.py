"""A batched playout policy: random legal play that likes completing figures.

Uniformly random play rarely completes a figure, so its games are long and seldom reach
validation, powers, passing and covers (docs/rules.md §5.4).
:func:`policy_actions` keeps the randomness but, with probability ``greedy``, takes a
slide that makes a figure scorable when one exists.  The demo, the differential check,
the golden playthroughs and many tests play with it; it is not an agent (see ``agents/``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from umbrella_env.core import actions as A
from umbrella_env.core import engine as E


def completing_slides(state: E.BatchState, idx: NDArray[np.integer]) -> NDArray[np.bool_]:
    """[n, 64] legal slides of the games ``idx`` (all in phase slide) that make a figure scorable."""
    n = idx.size
    legal = E.legal_action_mask(E.take(state, idx))[:, A.SLIDE_START : A.SLIDE_START + A.NUM_SLIDE]
    trial = E.take(state, np.repeat(idx, A.NUM_SLIDE))
    E.step_unchecked(trial, np.tile(np.arange(A.NUM_SLIDE), n))
    return legal & (trial.phase == A.PHASE_VALIDATE).reshape(n, A.NUM_SLIDE)


def policy_actions(state: E.BatchState, rng: np.random.Generator, greedy: float) -> NDArray[np.int64]:
    """Random legal actions, preferring figure-completing slides with probability ``greedy``."""
    acts = E.random_legal_actions(state, rng)
    idx = np.flatnonzero(state.phase == A.PHASE_SLIDE)
    if idx.size and greedy > 0:
        good = completing_slides(state, idx)
        use = good.any(axis=1) & (rng.random(idx.size) < greedy)
        if use.any():
            pick = np.argmax(rng.random(good.shape) * good, axis=1)
            acts[idx[use]] = A.SLIDE_START + pick[use]
    return acts
