"""RLlib environments for Umbrella (needs the ``ray`` extra): what ``rllib_train`` trains on.

* :class:`TurnBasedEnv`, 2-4 players: an RLlib ``MultiAgentEnv`` (agents ``player_0`` ...).
* :class:`MaskedSoloEnv`, solo: a Gymnasium env over :class:`~umbrella_env.envs.solo.UmbrellaSoloEnv`.

Both observe ``{"observations": float32 [899], "action_mask": float32 [968]}`` (the keys
of :mod:`agents.rllib_module`, which masks the logits), and both **count the illegal
actions they receive** (:attr:`illegal_actions`): with the masked module there must be
none, and the training command reports the count (:class:`UmbrellaCallbacks`).

**Why our own MultiAgentEnv rather than RLlib's PettingZoo wrapper.**  ``TurnBasedEnv``
plays the game through the env policy layer of the AEC env,
:class:`~umbrella_env.envs.common.EnvGame` (the same legality check, illegal-action
policy and end rewards; ``tests/test_ray.py`` checks it step for step against
``umbrella_env.env()``), because RLlib's ``PettingZooEnv``

* hands over the AEC observation dict as it is (``observation`` / ``action_mask`` int8),
  while the masking module wants ``observations`` / ``action_mask`` float: a second
  wrapper would be needed anyway;
* can pay only the AEC env's rewards: no score shaping (``shaping``), which the sparse
  win/loss signal of games of hundreds of turns needs;
* cannot seat frozen opponents (``opponents``), whose moves must happen inside the step.

**Turn-taking and rewards.**  A step returns an observation only for the seat to move
next.  Every seat that has observed is paid its reward at every step (RLlib keeps the
reward of an agent that did not observe in that step as "hanging" and adds it to the
agent's next transition); a seat that has not observed yet has no transition to add it
to (RLlib drops it), so its rewards wait and are paid with its first one after that
(shaping only: the opponents' first moves can change its score edge).  When
the game ends *every* seat gets its last observation with the end reward and
``terminated`` (or ``truncated``): so the -1 of a loser, who did not make the last move,
is in its last transition and reaches the learner.  The rewards: +1 sole winner, +0.5
shared win, -1 loss (0 for everyone on truncation), plus ``shaping`` x the change of the
seat's score edge (its score minus the mean score of the others, as ``train.py``).
Training must not cut episodes (``batch_mode="complete_episodes"``): an episode cut
while a seat waits for its next observation loses that seat's last action.

**Frozen opponents** (``opponents=["greedy", "heuristic"]``): each game seats the
learner at a random seat and one agent of the pool, drawn per game, at every other seat;
the opponents move inside :meth:`TurnBasedEnv.step` through the match runner's call
convention (:func:`umbrella_env.match.agent_action`), so only the learner's seat is an
RLlib agent.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from umbrella_env.cli_args import missing_extra

try:
    from ray.rllib.callbacks.callbacks import RLlibCallback
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
except ImportError as exc:  # one line naming the extra, not a bare ModuleNotFoundError
    missing_extra(__name__, exc, "umbrella_env.rllib_env", extra="ray")

from agents.checks import check_real
from agents.rllib_module import MASK_KEY, OBS_KEY
from umbrella_env.core import actions as A
from umbrella_env.core.engine import check_seed
from umbrella_env.core.errors import GameOverError
from umbrella_env.core.observation import observation_bounds
from umbrella_env.envs.common import (
    ILLEGAL_KEY,
    EnvGame,
    check_reset_options,
    end_rewards,
    illegal_rewards,
    multiplayer_config,
    refuse_state_option,
    require_game,
    score_edge,
)
from umbrella_env.envs.solo import UmbrellaSoloEnv
from umbrella_env.match import agent_action, build_agent
from umbrella_env.training.options import TRAIN_MAX_TURNS  # unless the env config says otherwise, as train.py


def observation_space() -> spaces.Dict:
    """The dict observation of both envs."""
    return spaces.Dict(
        {
            OBS_KEY: spaces.Box(*observation_bounds(), dtype=np.float32),
            MASK_KEY: spaces.Box(0.0, 1.0, (A.NUM_ACTIONS,), np.float32),
        }
    )


def masked_observation(observation: np.ndarray, legal: np.ndarray) -> dict[str, np.ndarray]:
    return {OBS_KEY: np.asarray(observation, dtype=np.float32), MASK_KEY: legal.astype(np.float32)}


def runner_seed(seed: int | None, env_config: Any) -> int | None:
    """The seed of an env's deals.  RLlib seeds sub-env ``j`` of env runner ``w`` with
    ``seed + w + j``, so two runners would play the same deals (runner 1's env 1 and runner
    2's env 0 both get ``seed + 2``); the runner's index (``env_config.worker_index``) is
    mixed in.  Runner 0, and an env made outside RLlib, keep the seed as given."""
    worker = int(getattr(env_config, "worker_index", 0) or 0)
    seed = check_seed(seed)
    if seed is None or worker == 0:
        return seed
    return int(np.random.SeedSequence([seed, worker]).generate_state(1)[0])


def _options(env_config: Any) -> dict[str, Any]:
    """The env config as a dict, its keys known and ``shaping`` and ``opponents`` checked
    (the game settings are checked by :class:`~umbrella_env.core.config.GameConfig`), or a ``ValueError``."""
    if env_config is not None and not isinstance(env_config, Mapping):
        raise ValueError(f"env_config must be a dict (or RLlib's EnvContext) or None, got {env_config!r}")
    cfg = dict(env_config or {})
    known = {"num_players", "plate_level", "max_turns", "shaping", "opponents"}
    unknown = set(cfg) - known
    if unknown:
        raise ValueError(f"unknown env config key(s) {sorted(unknown)}; known: {sorted(known)}")
    if "shaping" in cfg:  # a NaN or negative weight would train on NaN or inverted rewards
        cfg["shaping"] = check_real("env config shaping", cfg["shaping"], minimum=0)
    opponents = cfg.get("opponents")
    if opponents is not None and (
        not isinstance(opponents, (list, tuple)) or not all(isinstance(s, str) for s in opponents)
    ):  # a bare string would be read as one agent per character
        raise ValueError(f"env config opponents must be a list of agent specs (e.g. ['greedy']), got {opponents!r}")
    return cfg


class TurnBasedEnv(MultiAgentEnv):
    """Umbrella for 2-4 players as an RLlib ``MultiAgentEnv`` (see the module doc).

    ``env_config``: ``num_players`` (2-4, default 2), ``plate_level`` (1-4, default 1),
    ``max_turns`` (default :data:`TRAIN_MAX_TURNS`), ``shaping`` (default 0.0),
    ``opponents`` (a list of agent specs; empty = every seat is an RLlib agent).  A bad value
    is a ``ValueError`` naming it.
    """

    def __init__(self, env_config: Any = None) -> None:
        super().__init__()
        cfg = _options(env_config)
        self._env_config = env_config
        self.config = multiplayer_config(
            cfg.get("num_players", 2),
            cfg.get("plate_level", 1),
            TRAIN_MAX_TURNS if cfg.get("max_turns") is None else cfg["max_turns"],
            None,
            "MaskedSoloEnv",
        )
        self.shaping = float(cfg.get("shaping", 0.0))
        self.opponent_specs: list[str] = list(cfg.get("opponents") or [])
        self.possible_agents = [f"player_{s}" for s in range(self.config.num_players)]
        self.agents = list(self.possible_agents)
        space = observation_space()
        self.observation_spaces = dict.fromkeys(self.possible_agents, space)
        self.action_spaces = dict.fromkeys(self.possible_agents, spaces.Discrete(A.NUM_ACTIONS))
        self._rng = np.random.default_rng()
        # Opponent agents, built once per spec (checked here: a bad spec fails at construction).
        self._opponents = {spec: build_agent(spec, self.config) for spec in dict.fromkeys(self.opponent_specs)}
        self._g: EnvGame | None = None
        self._learner = -1  # the learner's seat in opponent mode, -1 in self-play
        self._opponent: Any = None
        self._edge = np.zeros(self.config.num_players)
        self._observed = np.zeros(self.config.num_players, bool)  # seats that have had an observation
        self._waiting = np.zeros(self.config.num_players)  # their rewards until then
        #: Illegal actions received since construction, and in the current game.
        self.illegal_actions = 0
        self.episode_illegal_actions = 0

    # ------------------------------------------------------------------ RLlib API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        check_reset_options(options, reads=())
        refuse_state_option(options, "TurnBasedEnv")
        seed = runner_seed(seed, self._env_config)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._g = g = EnvGame.deal(self.config, self._rng)
        self.episode_illegal_actions = 0
        if self._opponents:
            self._learner = int(self._rng.integers(self.config.num_players))
            self._opponent = self._opponents[self.opponent_specs[int(self._rng.integers(len(self.opponent_specs)))]]
            self._opponent.reset(int(self._rng.integers(2**63)))
            self.agents = [self.possible_agents[self._learner]]
            self._play_opponents()
            if g.over:  # the opponents ended the game before the learner's first move: deal again
                return self.reset(options=options)
        self._edge = self._edges()
        self._observed[:] = False
        self._observed[g.actor] = True
        self._waiting[:] = 0.0
        return {self.possible_agents[g.actor]: masked_observation(g.observe(g.actor), g.legal())}, {}

    def step(
        self, action_dict: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]]:
        g = self._require_game()
        if g.over:
            raise GameOverError("the game is over: call reset() before step()")
        mover = self.possible_agents[g.actor]
        if mover not in action_dict:
            raise ValueError(f"{mover} is to move, but the action dict has only {sorted(action_dict)}")
        rewards = np.zeros(self.config.num_players)
        a, legal = g.judge(action_dict[mover], "loss", mover)
        if legal:
            g.play(a, False)
            self._play_opponents()
        else:
            self.illegal_actions += 1
            self.episode_illegal_actions += 1
            rewards += illegal_rewards(self.config.num_players, g.actor)
            g.end_illegally(a)
        edge = self._edges()
        rewards += self.shaping * (edge - self._edge)
        self._edge = edge
        if g.over and g.ended is None:
            rewards += end_rewards(g.scores(), g.game.ranks(), g.terminated, "win")
        seats = [self._learner] if self._learner >= 0 else range(self.config.num_players)
        # Paid only to seats that have observed (module doc), with what waited for them.
        self._waiting += rewards
        paid = [s for s in seats if self._observed[s] or g.over]
        reward_d = {self.possible_agents[s]: float(self._waiting[s]) for s in paid}
        self._waiting[paid] = 0.0
        self._observed[g.actor] = True
        if g.over:
            obs = {self.possible_agents[s]: masked_observation(g.observe(s), g.legal()) for s in seats}
            terminated = {**dict.fromkeys(obs, g.terminated), "__all__": g.terminated}
            truncated = {**dict.fromkeys(obs, g.truncated), "__all__": g.truncated}
            return obs, reward_d, terminated, truncated, {}
        nxt = self.possible_agents[g.actor]
        return ({nxt: masked_observation(g.observe(g.actor), g.legal())}, reward_d,
                {"__all__": False}, {"__all__": False}, {})  # fmt: skip

    def game_summary(self) -> tuple[int, float]:
        """(turns, mean final score) of the current game: over every seat in self-play,
        the learner's against frozen opponents."""
        g = self._require_game()
        scores = g.scores()
        return int(g.game.turn), float(scores[self._learner] if self._learner >= 0 else np.mean(scores))

    # ------------------------------------------------------------------ internals
    def _require_game(self) -> EnvGame:
        return require_game(self._g, "reset()")

    def _edges(self) -> np.ndarray:
        g = self._require_game()
        scores = g.scores()
        return np.array([score_edge(scores, s) for s in range(self.config.num_players)])

    def _play_opponents(self) -> None:
        """Opponent mode: let the opponents move until the learner decides or the game ends."""
        g = self._require_game()
        while self._learner >= 0 and not g.over and g.actor != self._learner:
            g.play(agent_action(self._opponent, g.game), False)


class MaskedSoloEnv(gym.Env):
    """The solo game for RLlib: :class:`~umbrella_env.envs.solo.UmbrellaSoloEnv` (dense
    reward: the change of the score, so a return is the final score) with the dict
    observation.  ``env_config``: ``plate_level``, ``max_turns`` (``shaping`` and
    ``opponents`` are refused: there is no score edge and no opponent)."""

    def __init__(self, env_config: Any = None) -> None:
        cfg = _options(env_config)
        players = cfg.get("num_players", 1)
        if type(players) is not int or players != 1 or cfg.get("opponents") or "shaping" in cfg:  # True is not 1
            raise ValueError(
                "MaskedSoloEnv is the solo game: num_players must be 1, and it takes neither opponents nor shaping "
                "(no opponent, no score edge)"
            )
        self.env = UmbrellaSoloEnv(
            plate_level=cfg.get("plate_level", 1),
            max_turns=TRAIN_MAX_TURNS if cfg.get("max_turns") is None else cfg["max_turns"],
        )
        self._env_config = env_config
        self.config = self.env.config
        self.observation_space = observation_space()
        self.action_space = spaces.Discrete(A.NUM_ACTIONS)
        self._score = 0.0
        self.illegal_actions = 0
        self.episode_illegal_actions = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        seed = runner_seed(seed, self._env_config)
        super().reset(seed=seed)  # np_random seeded as Gymnasium's checker expects (the deals are the inner env's)
        obs, info = self.env.reset(seed=seed, options=options)
        self.episode_illegal_actions = 0
        self._score = float(info["score"])
        return masked_observation(obs, info["action_mask"]), {}

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        # The solo env judges the action as it is given (a float or a bool is refused, not truncated).
        obs, reward, terminated, truncated, info = self.env.step(action)
        if info.get(ILLEGAL_KEY):
            self.illegal_actions += 1
            self.episode_illegal_actions += 1
        self._score = float(info["score"])
        return masked_observation(obs, info["action_mask"]), reward, terminated, truncated, {"score": info["score"]}

    def game_summary(self) -> tuple[int, float]:
        """(turns, score) of the current game."""
        return int(self.env.get_state()["turn"]), self._score


# --------------------------------------------------------------------------- metrics
def sub_env(env: Any, env_index: int) -> Any:
    """The sub-environment ``env_index`` of an env runner's (vector) env, unwrapped."""
    envs = getattr(env, "envs", None)
    if envs is None:
        envs = getattr(getattr(env, "unwrapped", env), "envs", None)
    inner = envs[env_index] if envs is not None else env
    return getattr(inner, "unwrapped", inner)


class UmbrellaCallbacks(RLlibCallback):
    """Logs, per finished game: the illegal actions the env received (``illegal_actions``,
    summed over the whole run), the game's length in turns (``game_turns``) and its mean
    final score (``game_score``: over the seats in self-play, the learner's against
    frozen opponents, the score in solo), both averaged over the last 100 games.

    At the algorithm's build it warns (``UserWarning``) when :class:`TurnBasedEnv` is trained
    with a ``batch_mode`` other than ``"complete_episodes"``: RLlib accepts PPO's default,
    ``"truncate_episodes"``, without a word, and an episode cut while a seat waits for its
    next observation loses that seat's last action (ray PR #44677)."""

    def on_algorithm_init(self, *, algorithm: Any = None, **kwargs: Any) -> None:
        config = getattr(algorithm, "config", None)
        if config is None or config.env is not TurnBasedEnv or config.batch_mode == "complete_episodes":
            return
        warnings.warn(
            f"TurnBasedEnv is trained with batch_mode={config.batch_mode!r}: an episode cut while a seat waits "
            "for its next observation loses that seat's last action (ray PR #44677); use "
            '.env_runners(batch_mode="complete_episodes") as python -m umbrella_env.rllib_train does',
            stacklevel=2,
        )

    def on_episode_end(self, *, env: Any = None, env_index: int = 0, metrics_logger: Any = None, **kwargs: Any) -> None:
        inner = sub_env(env, env_index)
        if metrics_logger is None or not hasattr(inner, "episode_illegal_actions"):
            return
        metrics_logger.log_value("illegal_actions", inner.episode_illegal_actions, reduce="lifetime_sum")
        turns, score = inner.game_summary()
        metrics_logger.log_value("game_turns", turns, reduce="mean", window=100)
        metrics_logger.log_value("game_score", score, reduce="mean", window=100)
