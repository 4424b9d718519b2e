"""The agent interface shared by every agent, the evaluator and the play command.

An agent chooses one action for the seat that must decide in a game::

    action = agent.act(observation, action_mask, game)

* ``observation``: the core's egocentric observation of the deciding seat
  (``umbrella_env.core.observation``, float32 [899]);
* ``action_mask``: [968], one entry per action id, each 0 or 1 (bool, int8, ...): the legal
  actions; with a game, exactly ``game.legal_mask()``;
* ``game``: a :class:`~umbrella_env.core.single.SingleGame` that the agent may read and
  clone but must not modify.  It holds hidden information (tiles under the tops of the
  stacks): agents must base decisions on public information only — search agents
  resample the hidden tiles (:func:`umbrella_env.core.hidden.determinize`) before simulating.

The agents check these before they use them (:mod:`agents.checks`): a mask of another
shape or with no legal action, a mask that is not the game's legal actions, a game that is
not a ``SingleGame`` and, for the agents that read it, an observation of another shape or
with a NaN are refused (``ValueError``; ``TypeError`` for the game), and a refused call
changes nothing.

Agents that do not need the game declare ``needs_game = False`` so callers can skip
building it.  ``reset(seed)`` re-seeds an agent's randomness at the start of a game;
``reset()`` (``seed=None``) keeps the generator the agent has, so an agent built with a seed
stays reproducible.  Either way an agent's play depends only on its seed and the positions
it is given (and, with a wall-time budget such as ``seconds=``, on how fast the machine
searches that position).  An agent object is not thread-safe (its generator and caches):
give each thread its own.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from agents.checks import check_game_mask, check_mask, check_name
from umbrella_env.core.engine import check_seed
from umbrella_env.core.single import SingleGame

#: How to give an agent the game from an env (the end of the "needs the game" errors).
GAME_FROM_ENV = (
    "pass game=SingleGame.from_dict(env.unwrapped.get_state()) (the AEC or solo env; "
    "SingleGame.from_dict(games.get_state(i)) for game i of a VectorGame or the vector env's "
    "get_state(i)), or let umbrella_env.match.play_game run the game"
)


def agent_generator(seed: Any) -> np.random.Generator:
    """An agent's generator seeded ``seed`` (``None``: fresh entropy); anything but ``None``
    or a non-negative int is refused with a ``ValueError`` naming it."""
    return np.random.default_rng(check_seed(seed))


@runtime_checkable
class Agent(Protocol):
    """What every agent provides (module doc); ``act`` returns a Python or NumPy integer."""

    name: str
    needs_game: bool

    def reset(self, seed: int | None = None) -> None: ...

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, game: SingleGame | None = None
    ) -> int | np.integer[Any]: ...


@runtime_checkable
class BatchAgent(Agent, Protocol):
    """An agent that also decides many positions in one call (the policy, ONNX and RLlib
    agents: one forward pass): ``act_batch(observations [n, 899], action_masks [n, 968])``
    returns int64 [n].  ``make_agent`` is typed as returning an :class:`Agent`; narrow it with
    ``isinstance(agent, BatchAgent)`` before calling ``act_batch``."""

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray: ...


class SeededAgent:
    """Base of the agents whose only state between decisions is a seeded generator ``_rng``."""

    needs_game = True

    def __init__(self, seed: int | None = None, name: str = "agent") -> None:
        self.name = check_name(name)
        self._rng = agent_generator(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._rng = agent_generator(seed)

    def use_generator(self, rng: np.random.Generator) -> None:
        """Draw every random choice from ``rng`` (shared, not copied) from now on."""
        self._rng = rng


class RandomAgent(SeededAgent):
    """Uniformly random legal actions (seeded)."""

    needs_game = False

    def __init__(self, seed: int | None = None, name: str = "random") -> None:
        super().__init__(seed, name)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, game: Any = None) -> int:
        legal = check_mask(action_mask)
        if game is not None:  # a game given is checked, as every agent checks it
            check_game_mask(game, legal)
        return int(self._rng.choice(legal))
