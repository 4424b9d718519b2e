"""Batched multiplayer API: N games of 2-4 players stepped together, for self-play at scale.

Each call takes one action per game (for the seat that must decide in that game) and
returns, per game, the seat to move next, that seat's observation and legal-action
mask, and a reward for *every* seat (so losers receive their losses). Finished games
are reset in the same call; their final scores and ranks are in ``info``.

Example: a learner in seat 0 of every game against a random opponent::

    import numpy as np
    from umbrella_env.envs.vector_game import VectorGame

    games = VectorGame(num_games=512, num_players=2, seed=0)
    view = games.reset()
    rng = np.random.default_rng(0)
    returns = np.zeros(512)
    for _ in range(10_000):
        learner = view["to_move"] == 0
        actions = games.random_actions(rng)                  # opponents (and placeholder)
        actions[learner] = my_policy(view["observation"][learner], view["action_mask"][learner])
        view, rewards, terminated, truncated, info = games.step(actions)
        returns += rewards[:, 0]                             # seat 0's reward, wins and losses
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from umbrella_env.core import batch_io
from umbrella_env.core import engine as E
from umbrella_env.core.engine import check_seed
from umbrella_env.core.observation import observe
from umbrella_env.envs.common import (
    REWARD_MODES,
    check_choice,
    multiplayer_config,
    seed_sequence,
    step_rewards,
)


class VectorGame:
    """``num_games`` games of ``num_players`` players in one batch of the core.

    Args:
        num_games: games played side by side.
        num_players: 2, 3 or 4.
        plate_level: 1-4.
        reward_mode: ``"win"`` (+1 sole win, +0.5 shared win, -1 loss, 0 on truncation),
            ``"score"`` (final scores at the end) or ``"dense"`` (score changes).
        max_turns, components: as :class:`~umbrella_env.core.config.GameConfig`.
        seed: seeds the deals: None (fresh entropy), a non-negative int (one random
            stream deals every game, in game order), or a sequence of exactly
            ``num_games`` non-negative ints (game ``i`` is dealt from its own stream
            ``seed[i]``, at every reset). Anything else is refused with ``ConfigError``.

    Actions are checked by the core's checked step (:func:`umbrella_env.core.engine.step`):
    a bad or illegal action raises naming the game, and nothing changes.
    """

    def __init__(
        self,
        num_games: int,
        num_players: int = 2,
        plate_level: int = 1,
        reward_mode: str = "win",
        max_turns: int | None = None,
        components: Any = None,
        seed: int | Sequence[int] | NDArray[np.integer[Any]] | None = None,
    ) -> None:
        E.check_batch_size("num_games", num_games)
        self.config = multiplayer_config(num_players, plate_level, max_turns, components, "UmbrellaSoloVectorEnv")
        self.reward_mode = check_choice("reward_mode", reward_mode, REWARD_MODES)
        self.num_games = int(num_games)
        self.num_players = self.config.num_players
        self._rng, self._generators = self._streams(seed)
        self.state = E.allocate(self.config, self.num_games)
        self._deal(np.arange(self.num_games))
        self._scores = E.scores(self.state).astype(np.float64)

    def reset(self, seed: int | Sequence[int] | NDArray[np.integer[Any]] | None = None) -> dict[str, np.ndarray]:
        """Deal every game anew (``seed`` as in the constructor; None continues the
        current streams); returns the view (see :meth:`view`)."""
        if seed is not None:
            self._rng, self._generators = self._streams(seed)
        self._deal(np.arange(self.num_games))
        self._scores = E.scores(self.state).astype(np.float64)
        return self.view()

    def view(self) -> dict[str, np.ndarray]:
        """``to_move`` [N] seat to decide, ``observation`` [N, 899] from that seat,
        ``action_mask`` [N, 968] bool of its legal actions."""
        return {
            "to_move": E.actor(self.state).astype(np.int64),
            "observation": observe(self.state),
            "action_mask": E.legal_action_mask(self.state),
        }

    def random_actions(self, rng: np.random.Generator) -> np.ndarray:
        """[N] uniformly random legal actions (a baseline opponent)."""
        return E.random_legal_actions(self.state, rng)

    def get_state(self, i: int) -> dict[str, Any]:
        """Game ``i`` as the core's state dict (``docs/state.md``)."""
        return batch_io.to_dict(self.state, i)

    def step(self, actions: Any) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One action per game. Returns ``(view, rewards [N, P], terminated [N], truncated [N], info)``.

        ``info["final_scores"]`` / ``info["final_ranks"]`` [N, P] hold the results of the
        games that ended in this call (``info["_final"]`` marks them); those games have
        already been reset and ``view`` shows their first decision.
        """
        state = self.state
        E.step(state, actions)  # checked: raises ActionError / IllegalActionError with the game index, changes nothing
        scores = E.scores(state).astype(np.float64)
        terminated = state.terminated.copy()
        truncated = state.truncated.copy()
        done = terminated | truncated
        rewards = step_rewards(self.reward_mode, self._scores, scores, done, terminated, lambda: E.ranks(state))
        info: dict[str, Any] = {"_final": done}
        if done.any():
            info["final_scores"] = np.where(done[:, None], scores, 0).astype(np.int64)
            info["final_ranks"] = np.where(done[:, None], E.ranks(state), 0)
            self._deal(np.flatnonzero(done))
            scores = E.scores(state).astype(np.float64)
        self._scores = scores
        return self.view(), rewards, terminated, truncated, info

    # ------------------------------------------------------------------ internals
    def _streams(self, seed: Any) -> tuple[np.random.Generator | None, list[np.random.Generator] | None]:
        """(one stream for every game, or one stream per game) from a seed, checked."""
        seeds = seed_sequence(seed, self.num_games, "game", allow_none=False)
        if seeds is not None:
            return None, [np.random.default_rng(s) for s in seeds]
        checked = check_seed(seed)
        return np.random.default_rng(checked), None

    def _deal(self, idx: np.ndarray) -> None:
        if self._generators is None:
            E.reset(self.state, idx, self._rng)
        else:
            E.reset(self.state, idx, keys=[E.draw_key(self._generators[i]) for i in idx])


__all__ = ["VectorGame"]
