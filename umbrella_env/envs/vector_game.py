"""Batched multiplayer API: N games of 2-4 players stepped together, for self-play at scale.

Each call takes one action per game (for the seat that must decide in that game) and
returns, per game, the seat to move next, that seat's observation and legal-action
mask, and a reward for *every* seat (so losers receive their losses: a loser's -1 arrives
on the move that ends the game, usually another seat's). Finished games are reset in the
same call; their final scores and ranks, and every seat's observation of their last
position, are in ``info``.

Example: a learner against a random opponent, in seat ``i % 2`` of game ``i`` (seat 0
always moves first, so a learner kept in seat 0 would never learn the second seat)::

    import numpy as np
    from umbrella_env.envs.vector_game import VectorGame

    N = 512
    games = VectorGame(num_games=N, num_players=2, seed=0)   # dealt: no reset() needed
    view = games.view()
    seat = np.arange(N) % 2                                  # the learner's seat in each game
    rng = np.random.default_rng(0)
    returns = np.zeros(N)
    for _ in range(10_000):
        learner = view["to_move"] == seat
        actions = games.random_actions(rng)                  # opponents (and placeholder)
        actions[learner] = my_policy(view["observation"][learner], view["action_mask"][learner])
        view, rewards, terminated, truncated, info = games.step(actions)
        returns += rewards[np.arange(N), seat]               # the learner's reward, wins and losses

Built-in agents can be the opponents: ``agent.act(obs, mask, SingleGame.from_dict(games.get_state(i)))``
for game ``i`` (``umbrella_env.core.single``), one game at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

from umbrella_env.core import actions as A
from umbrella_env.core import batch_io
from umbrella_env.core import engine as E
from umbrella_env.core.engine import check_seed
from umbrella_env.core.errors import StateError
from umbrella_env.core.observation import observation_bounds, observe
from umbrella_env.core.serialize import validate_state_dict
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
            ``"score"`` (final scores at the end) or ``"dense"`` (every seat's score change
            at each step; a seat's rewards over a game add up to its final score minus
            the deal's score, -4, as in the AEC env).
        max_turns, components: as :class:`~umbrella_env.core.config.GameConfig`.
        seed: seeds the deals: None (fresh entropy), a non-negative int (one random
            stream deals every game: the games of the construction in game order, then
            each game that ends, in the order they end, so a game's later deals depend
            on how long the others last), or a sequence of exactly ``num_games``
            non-negative ints (game ``i`` is dealt from its own stream ``seed[i]``, at
            every reset: the independent streams of the solo vector env's ``seed + i``).
            Anything else is refused with ``ConfigError``.

    The constructor deals every game; :meth:`reset` deals them all anew (a second deal, not
    the first one again); :meth:`set_state` loads one game from a state dict. Actions are
    checked by the core's checked step (:func:`umbrella_env.core.engine.step`): a bad or
    illegal action raises naming the game, and nothing changes. The action masks are bool
    (the Gymnasium and PettingZoo envs' are int8).

    ``num_envs`` (= ``num_games``), ``single_observation_space`` (one seat's observation,
    ``Box``) and ``single_action_space`` (``Discrete(968)``) and a ``close()`` that does
    nothing are there for loops written against Gymnasium's vector envs.
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
        self.single_observation_space = spaces.Box(*observation_bounds(), dtype=np.float32)
        self.single_action_space = spaces.Discrete(A.NUM_ACTIONS)

    @property
    def num_envs(self) -> int:
        """The number of games (Gymnasium's vector-env name for it)."""
        return self.num_games

    def close(self) -> None:
        """Nothing to release (the games are arrays); for Gymnasium-style loops."""

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

    def set_state(self, i: int, d: dict[str, Any]) -> None:
        """Make game ``i`` the game of the state dict ``d`` (``docs/state.md``), to start
        from a position of your own; validated first, so a refused dict changes nothing.
        ``d`` must be a game in play of this batch's configuration (a finished one would
        never be dealt anew).  Its scores are where game ``i``'s dense rewards count from."""
        i = E.check_index(self.state, i)
        checked = validate_state_dict(d, components=self.config.components)
        if checked["terminated"] or checked["truncated"]:
            raise StateError("the state dict holds a finished game: VectorGame holds games in play")
        batch_io.load_dict(self.state, i, checked)
        self._scores[i] = E.scores(self.state)[i]

    def step(self, actions: Any) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One action per game. Returns ``(view, rewards [N, P], terminated [N], truncated [N], info)``.

        ``info["final_scores"]`` / ``info["final_ranks"]`` [N, P] hold the results of the
        games that ended in this call (``info["_final"]`` marks them); those games have
        already been reset and ``view`` shows their first decision. ``info["final_obs"]``
        (only when a game ended) holds, as Gymnasium's ``SyncVectorEnv`` lays it out, an
        object array of N entries: for a game that ended, a [P, 899] float32 array, row
        ``p`` the last position seen from seat ``p`` (to bootstrap a truncated game's value,
        or to score the final position); None for the others (``info["_final_obs"]`` marks
        them). On the step a game ends, ``view`` is its next deal's, so its mask is never
        empty.
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
            info["final_obs"], info["_final_obs"] = self._final_observations(done), done
            self._deal(np.flatnonzero(done))
            scores = E.scores(state).astype(np.float64)
        self._scores = scores
        return self.view(), rewards, terminated, truncated, info

    # ------------------------------------------------------------------ internals
    def _final_observations(self, done: np.ndarray) -> np.ndarray:
        """[N] object array: every seat's observation of each ended game's last position
        ([P, 899]), None for the games that go on."""
        idx = np.flatnonzero(done)
        ended = E.take(self.state, idx)
        seen = np.stack([observe(ended, seats=p) for p in range(self.num_players)], axis=1)  # [D, P, 899]
        out = np.full(self.num_games, None, dtype=object)
        for k, i in enumerate(idx):
            out[i] = seen[k]
        return out

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
