"""Train a MaskablePPO agent (sb3-contrib) on the batched core.

    python -m umbrella_env.train --quick                      # ~2 minutes, 2 players
    python -m umbrella_env.train --players 1 --timesteps 2e6  # solo on the native vector env
    python -m umbrella_env.train --players 2 --opponents greedy self --pretrain heuristic \
        --pretrain-games 8000 --pretrain-epochs 10 --learning-rate 2e-4 --ent-coef 0.001 --timesteps 6e5

* Solo trains on :class:`~umbrella_env.envs.sb3.UmbrellaSB3VecEnv` (dense reward: the
  score). 2-4 players train on :class:`LearnerVecEnv`: every game seats the learner at a
  random seat and fills the other seats from the opponent pool (``random``, any agent
  name such as ``greedy`` or ``heuristic``, and ``self``: frozen snapshots of the
  learner, refreshed every ``--snapshot-every`` steps). Opponents move inside the env
  step; the learner is rewarded at the end of every game, **losses included** (+1 sole
  win, +0.5 shared win, -1 loss), plus a small shaping term
  ``--shaping`` x (its score change - the mean opponent score change).
* The policy sees the observation plus figure-progress features computed inside the
  network (``--features figure``, :mod:`umbrella_env.policy_features`): how complete each
  visible figure would be after each of the 64 slides.
* ``--pretrain AGENT`` first behaviour-clones a teacher agent from ``--pretrain-games``
  of its games (:mod:`umbrella_env.imitation`; ``--pretrain-cache FILE.npz`` keeps the
  games for the next run), then PPO continues from the cloned policy.
* Every ``--eval-every`` steps the policy plays ``--eval-games`` games against
  ``--eval-opponent`` (default heuristic, falling back to greedy or random if that agent
  is not available); the best model is kept as ``best.zip``. ``last.zip`` is written at
  the end; each ``.zip`` has a ``.json`` sidecar with the configuration, so a model
  trained for one configuration is refused for another.
* ``--resume PATH`` continues from a checkpoint. TensorBoard logs go to ``OUT/tb`` when
  tensorboard is installed. A progress bar shows the timesteps.
* ``--quick``: clone the heuristic from 1,000 of its games, then 100k PPO steps against
  random, greedy and self-play (about two minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from umbrella_env.core import actions as A
from umbrella_env.core import engine as E
from umbrella_env.core.config import GameConfig
from umbrella_env.core.observation import OBS_SIZE, observation_bounds, observe

try:
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv
except ImportError:  # pragma: no cover - exercised only without the train extra
    print("umbrella_env.train needs the train extra: pip install -c constraints.txt -e '.[train]'", file=sys.stderr)
    raise

from gymnasium import spaces

from umbrella_env.core.single import SingleGame
from umbrella_env.envs.common import end_rewards, score_edge
from umbrella_env.envs.sb3 import UmbrellaSB3VecEnv


# --------------------------------------------------------------------------- opponents
class OpponentPool:
    """Opponents for the non-learner seats: per game, one pool entry for all its opponents."""

    def __init__(self, specs: list[str], config: GameConfig, seed: int) -> None:
        if not specs:
            raise ValueError("the opponent pool is empty; give e.g. --opponents random self")
        self.specs = list(specs)
        self.config = config
        self.rng = np.random.default_rng(seed)
        self.snapshot: Any = None  # a PolicyAgent-like object with act_batch, for "self"
        self.agents: dict[str, Any] = {}
        for spec in self.specs:
            if spec not in ("random", "self"):
                from agents import make_agent

                self.agents[spec] = make_agent(spec, seed=int(self.rng.integers(2**31)))

    def draw(self, n: int) -> np.ndarray:
        """Pool indices for ``n`` new games ("self" falls back to random until a snapshot exists)."""
        return self.rng.integers(0, len(self.specs), n)

    def actions(self, state: E.BatchState, games: np.ndarray, kinds: np.ndarray) -> np.ndarray:
        """Actions of the opponents deciding in ``games`` (all not at the learner's decision)."""
        out = np.full(games.size, -1, dtype=np.int64)
        for k, spec in enumerate(self.specs):
            rows = np.flatnonzero(kinds == k)
            if not rows.size:
                continue
            g = games[rows]
            if spec == "random" or (spec == "self" and self.snapshot is None):
                out[rows] = E.random_legal_actions(E.take(state, g), self.rng)
            elif spec == "self":
                sub = E.take(state, g)
                out[rows] = self.snapshot.act_batch(observe(sub), E.legal_action_mask(sub))
            else:
                agent = self.agents[spec]
                for r, b in zip(rows, g):
                    game = SingleGame.from_batch(state, int(b))
                    out[r] = agent.act(game.observe(), game.legal_mask(), game.clone() if agent.needs_game else None)
        return out


class LearnerVecEnv(VecEnv):
    """``num_envs`` multiplayer games in one batch of the core, seen from the learner.

    The learner sits at a random seat of each game; opponents from ``pool`` play the
    other seats inside :meth:`step_wait`, so every observation is a learner decision.
    """

    def __init__(self, num_envs: int, config: GameConfig, pool: OpponentPool, shaping: float, seed: int) -> None:
        self.config = config
        self.pool = pool
        self.shaping = float(shaping)
        self.state = E.allocate(config, num_envs)
        self.rng = np.random.default_rng(seed)
        self.seat = np.zeros(num_envs, dtype=np.int64)
        self.kind = np.zeros(num_envs, dtype=np.int64)
        self.render_mode = None
        obs_space = spaces.Box(*observation_bounds(), dtype=np.float32)
        super().__init__(num_envs, obs_space, spaces.Discrete(A.NUM_ACTIONS))
        self._actions: np.ndarray | None = None
        self._returns = np.zeros(num_envs)
        self._lengths = np.zeros(num_envs, dtype=np.int64)
        self._edge = np.zeros(num_envs)  # score edge at the learner's pending decision (shaping)
        self.results: list[float] = []  # learner's end-of-game reward of every finished game

    # SB3 API -------------------------------------------------------------------------
    def reset(self) -> np.ndarray:
        self._new_games(np.arange(self.num_envs))
        return observe(self.state, seats=self.seat)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        assert self._actions is not None
        state = self.state
        E.step_unchecked(state, self._actions)
        self._play_opponents()
        after = self._edge_now()
        rewards = self.shaping * (after - self._edge)
        self._edge = after
        done = state.done.copy()
        idx = np.flatnonzero(done)
        final = self._end_reward(idx) if idx.size else None
        if final is not None:
            rewards[idx] += final
        self._returns += rewards
        self._lengths += 1
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if final is not None:
            terminal_obs = observe(E.take(state, idx), seats=self.seat[idx])
            for j, b in enumerate(idx):
                infos[b]["terminal_observation"] = terminal_obs[j]
                infos[b]["TimeLimit.truncated"] = bool(state.truncated[b])
                infos[b]["episode"] = {"r": float(self._returns[b]), "l": int(self._lengths[b]), "t": time.time()}
                self.results.append(float(final[j]))
            self._returns[idx] = 0
            self._lengths[idx] = 0
            self._new_games(idx)
        self._actions = None
        return observe(state, seats=self.seat), rewards.astype(np.float32), done, infos

    def action_masks(self) -> np.ndarray:
        return E.legal_action_mask(self.state)

    def close(self) -> None:
        pass

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        n = len(list(self._get_indices(indices)))
        if attr_name == "action_masks":
            return [self.action_masks] * n
        return [getattr(self, attr_name)] * n

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        raise AttributeError(f"cannot set {attr_name!r} on the games of a batched env")

    def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list[Any]:
        if method_name != "action_masks":
            raise AttributeError(f"no per-env method {method_name!r}; available: 'action_masks'")
        masks = self.action_masks()
        return [masks[i] for i in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class: Any, indices: Any = None) -> list[bool]:
        return [False] * len(list(self._get_indices(indices)))

    # internals -----------------------------------------------------------------------
    def _new_games(self, idx: np.ndarray) -> None:
        E.reset(self.state, idx, self.rng)
        self.seat[idx] = self.rng.integers(0, self.config.num_players, idx.size)
        self.kind[idx] = self.pool.draw(idx.size)
        self._play_opponents()
        self._edge[idx] = self._edge_now()[idx]  # the shaping reward counts from the learner's first decision

    def _play_opponents(self) -> None:
        """Let the opponents move until every live game waits for the learner."""
        state = self.state
        for _ in range(100_000):
            waiting = np.flatnonzero(~state.done & (E.actor(state) != self.seat))
            if not waiting.size:
                return
            acts = np.full(self.num_envs, -1, dtype=np.int64)
            acts[waiting] = self.pool.actions(state, waiting, self.kind[waiting])
            E.step_unchecked(state, acts)
        raise RuntimeError("opponents did not hand the move back to the learner")

    def _edge_now(self) -> np.ndarray:
        return score_edge(E.scores(self.state), self.seat)

    def _end_reward(self, idx: np.ndarray) -> np.ndarray:
        sub = E.take(self.state, idx)
        return end_rewards(E.scores(sub), E.ranks(sub), sub.terminated, "win")[np.arange(idx.size), self.seat[idx]]


# --------------------------------------------------------------------------- evaluation
@dataclass
class EvalResult:
    games: int
    win_rate: float  # multiplayer: share of wins (shared wins count 1/k); solo: 0
    mean_score: float

    def metric(self, solo: bool) -> float:
        """Solo: mean score.  2-4 players: win rate, ties broken by the mean score."""
        return self.mean_score if solo else self.win_rate + 1e-3 * self.mean_score

    def describe(self, solo: bool, opponent: str) -> str:
        if solo:
            return f"mean score {self.mean_score:.2f}"
        return f"win rate vs {opponent} {self.win_rate:.3f}, mean score {self.mean_score:.2f}"


def evaluate_model(model: Any, config: GameConfig, opponent: str, games: int, seed: int) -> EvalResult:
    """Play ``games`` games of the model against ``opponent`` in one batch (seats rotated).

    The learner's decisions of all games are predicted together; evaluation games use
    the standard turn limit whatever limit the training games use.
    """
    config = GameConfig(num_players=config.num_players, plate_level=config.plate_level, components=config.components)
    rng = np.random.default_rng(seed)
    state = E.init(config, games, seed=rng)
    seat = np.arange(games) % config.num_players
    opp = None
    if config.num_players > 1 and opponent != "random":
        from agents import make_agent

        opp = make_agent(opponent, seed=seed)
    while not state.done.all():
        actor = E.actor(state)
        live = ~state.done
        acts = np.full(games, -1, dtype=np.int64)
        mine = np.flatnonzero(live & (actor == seat))
        if mine.size:
            sub = E.take(state, mine)
            predicted, _ = model.predict(observe(sub), action_masks=E.legal_action_mask(sub), deterministic=True)
            acts[mine] = predicted
        theirs = np.flatnonzero(live & (actor != seat))
        if theirs.size:
            if opp is None:
                acts[theirs] = E.random_legal_actions(E.take(state, theirs), rng)
            else:
                for b in theirs:
                    game = SingleGame.from_batch(state, int(b))
                    acts[b] = opp.act(game.observe(), game.legal_mask(), game.clone() if opp.needs_game else None)
        E.step_unchecked(state, acts)
    scores = E.scores(state)[np.arange(games), seat]
    wins = 0.0
    if config.num_players > 1:
        ranks = E.ranks(state)
        winners = (ranks == 0).sum(axis=1)
        won = (ranks[np.arange(games), seat] == 0) & state.terminated
        wins = float((won / winners).sum())
    return EvalResult(games, wins / games if config.num_players > 1 else 0.0, float(scores.mean()))


def save_checkpoint(model: Any, path: Path, config: GameConfig, extra: dict[str, Any]) -> None:
    from agents.policy import metadata_path

    model.save(path)
    meta = {
        "num_players": config.num_players,
        "plate_level": config.plate_level,
        "max_turns": config.max_turns,
        "obs_size": OBS_SIZE,
        "num_actions": A.NUM_ACTIONS,
        **extra,
    }
    metadata_path(path).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")


class TrainCallback(BaseCallback):
    """Periodic evaluation (keeping the best model) and self-play snapshots."""

    def __init__(self, args: argparse.Namespace, config: GameConfig, pool: OpponentPool | None, out: Path) -> None:
        super().__init__()
        self.args, self.config, self.pool, self.out = args, config, pool, out
        self.best = -np.inf
        self.next_eval = args.eval_every
        self.next_snapshot = args.snapshot_every
        self.history: list[dict[str, Any]] = []

    def _on_step(self) -> bool:
        t = self.num_timesteps
        if self.pool is not None and "self" in self.pool.specs and t >= self.next_snapshot:
            self.next_snapshot += self.args.snapshot_every
            path = self.out / "snapshot.zip"
            save_checkpoint(self.model, path, self.config, {"timesteps": int(t)})
            from agents.policy import PolicyAgent

            self.pool.snapshot = PolicyAgent(path, deterministic=False)
        if t >= self.next_eval:
            self.next_eval += self.args.eval_every
            self.evaluate()
        return True

    def evaluate(self) -> EvalResult:
        res = evaluate_model(self.model, self.config, self.args.eval_opponent, self.args.eval_games, seed=12345)
        metric = res.metric(self.config.solo)
        label = "mean score" if self.config.solo else f"win rate vs {self.args.eval_opponent} (+ mean score / 1000)"
        self.history.append({"timesteps": int(self.num_timesteps), "metric": metric, "mean_score": res.mean_score})
        improved = metric > self.best
        if improved:
            self.best = metric
            save_checkpoint(self.model, self.out / "best.zip", self.config,
                            {"timesteps": int(self.num_timesteps), "eval": {label: metric}})
        self.logger.record("eval/metric", metric)
        print(f"[eval @ {self.num_timesteps:,} steps, {res.games} games] "
              f"{res.describe(self.config.solo, self.args.eval_opponent)}" + ("  (new best)" if improved else ""),
              flush=True)
        return res


# --------------------------------------------------------------------------- CLI
def _pick_eval_opponent(wanted: str) -> str:
    if wanted == "random":
        return wanted
    from agents import make_agent

    for name in (wanted, "greedy"):
        try:
            make_agent(name)
            return name
        except ValueError:
            continue
    return "random"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--players", type=int, default=2, help="1 (solo) to 4")
    p.add_argument("--level", type=int, default=1, help="plate level 1-4")
    p.add_argument("--timesteps", type=float, default=1_000_000, help="learner decisions to train for")
    p.add_argument("--n-envs", type=int, default=64, help="games played side by side")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=None, help="output folder (default runs/train-<players>p-l<level>-<time>)")
    p.add_argument("--opponents", nargs="+", default=["random", "self"],
                   help="opponent pool for 2-4 players: random, self, or agent names (greedy, heuristic, ...)")
    p.add_argument("--resume", type=Path, default=None, help="checkpoint .zip to continue training from")
    p.add_argument("--quick", action="store_true",
                   help="a ~2-minute run on 2 cores (2 players unless --players): clone the heuristic from "
                        "1,000 games, then 100k PPO steps against random, greedy and self-play")
    p.add_argument("--eval-every", type=int, default=50_000, help="steps between evaluations (best.zip kept)")
    p.add_argument("--eval-games", type=int, default=40, help="games per evaluation")
    p.add_argument("--eval-opponent", default="heuristic", help="opponent of the evaluation games (2-4 players)")
    p.add_argument("--snapshot-every", type=int, default=50_000, help="steps between self-play snapshots")
    p.add_argument("--shaping", type=float, default=0.1, help="weight of the score-difference shaping reward")
    p.add_argument("--max-turns", type=int, default=400, help="turn limit of training games")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--n-epochs", type=int, default=None, help="PPO epochs per rollout (default: solo 2, 2-4 players 3)")
    p.add_argument("--batch-size", type=int, default=None,
                   help="PPO minibatch size (default: solo 2048, 2-4 players 1024)")
    p.add_argument("--features", choices=("figure", "none"), default="figure",
                   help="policy input: 'figure' adds figure-progress features (umbrella_env.policy_features)")
    p.add_argument("--net", type=int, nargs="+", default=None,
                   help="hidden layer sizes of the policy and value MLPs (default: solo 128 128, 2-4 players 256 256)")
    p.add_argument("--pretrain", default=None, metavar="AGENT",
                   help="behaviour-clone this agent (e.g. heuristic) before PPO (umbrella_env.imitation)")
    p.add_argument("--pretrain-games", type=int, default=2000, help="teacher games for --pretrain")
    p.add_argument("--pretrain-cache", type=Path, default=None, metavar="FILE.npz",
                   help="reuse the teacher games stored in this file, or store them there")
    p.add_argument("--pretrain-opponents", nargs="+", default=None,
                   help="opponents of the teacher games (default: --opponents; 'self' is the teacher)")
    p.add_argument("--pretrain-epochs", type=int, default=8, help="passes over the teacher's decisions")
    p.add_argument("--pretrain-lr", type=float, default=1e-3, help="Adam learning rate of the cloning")
    p.add_argument("--pretrain-batch", type=int, default=256, help="minibatch of the cloning")
    p.add_argument("--workers", type=int, default=2, help="processes playing the teacher games")
    p.add_argument("--learning-rate", type=float, default=5e-4, help="PPO Adam learning rate")
    p.add_argument("--ent-coef", type=float, default=0.01, help="PPO entropy bonus")
    p.add_argument("--torch-threads", type=int, default=None,
                   help="torch CPU threads (default: every core this process may use; "
                        "1 is faster when other jobs share the machine)")
    return p


N_STEPS = 32  # rollout length per game; a rollout is N_STEPS x --n-envs decisions


def build_model(args: argparse.Namespace, env: Any, tensorboard_log: str | None = None) -> Any:
    """A fresh MaskablePPO with the hyperparameters of ``args`` (see :func:`build_parser`)."""
    return MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=N_STEPS,
        batch_size=min(args.batch_size, N_STEPS * args.n_envs),
        n_epochs=args.n_epochs,
        learning_rate=args.learning_rate,
        gamma=GAMMA,
        ent_coef=args.ent_coef,
        policy_kwargs=policy_kwargs(args),
        seed=args.seed,
        device="cpu",
        tensorboard_log=tensorboard_log,
        verbose=0,
    )


def policy_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"net_arch": list(args.net)}
    if args.features == "figure":
        from umbrella_env.policy_features import FigureFeatures

        kwargs["features_extractor_class"] = FigureFeatures
    return kwargs


GAMMA = 0.99
#: Defaults that depend on the mode: (solo, 2-4 players).  Solo keeps the network small so
#: that training on the native vector env runs above 4,000 env steps/s on 2 cores.
MODE_DEFAULTS = {"n_epochs": (2, 3), "batch_size": (2048, 1024), "net": ([128, 128], [256, 256])}


def default_threads() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def resolve_defaults(args: argparse.Namespace) -> argparse.Namespace:
    """Fill the options left at ``None`` with :data:`MODE_DEFAULTS` for ``args.players``."""
    for key, (solo, multi) in MODE_DEFAULTS.items():
        if getattr(args, key) is None:
            setattr(args, key, solo if args.players == 1 else multi)
    return args


#: ``--quick``: clone the heuristic from 1,000 of its games, then 100k PPO steps (~2 minutes on 2 cores).
QUICK = {
    "timesteps": 100_000, "n_envs": 64, "eval_every": 50_000, "eval_games": 60, "snapshot_every": 50_000,
    "pretrain": "heuristic", "pretrain_games": 1000, "pretrain_epochs": 8,
    "opponents": ["random", "greedy", "self"], "learning_rate": 2e-4, "ent_coef": 0.001,
}


def clone_teacher(model: Any, args: argparse.Namespace, config: GameConfig) -> list[dict[str, float]]:
    """``--pretrain``: the teacher's games (from ``--pretrain-cache`` when it holds them),
    behaviour cloning, and one evaluation of the cloned policy; returns the cloning history."""
    from umbrella_env.imitation import Demonstrations, collect, pretrain, source

    opponents = ["self"] if config.solo else (args.pretrain_opponents or args.opponents)
    cache = args.pretrain_cache
    if cache is not None and cache.is_file():
        demos = Demonstrations.load(cache)
        demos.check_source(source(config, args.pretrain, opponents, args.pretrain_games, args.seed, args.shaping, GAMMA),
                           cache)
        print(f"loaded {len(demos):,} teacher decisions from {cache}", flush=True)
    else:
        demos = collect(config, args.pretrain, opponents, args.pretrain_games, args.seed, args.shaping, GAMMA,
                        workers=args.workers, progress=not args.no_progress)
        if cache is not None:
            demos.save(cache)
    history = pretrain(model, demos, args.pretrain_epochs, batch_size=args.pretrain_batch, seed=args.seed,
                       learning_rate=args.pretrain_lr)
    res = evaluate_model(model, config, args.eval_opponent, args.eval_games, seed=12345)
    print(f"[eval after pretraining, {res.games} games] {res.describe(config.solo, args.eval_opponent)}", flush=True)
    return history


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = resolve_defaults(parser.parse_args(argv))
    if args.quick:
        for key, value in QUICK.items():
            if getattr(args, key) == parser.get_default(key):
                setattr(args, key, value)
    try:
        config = GameConfig(num_players=args.players, plate_level=args.level, max_turns=args.max_turns)
        if args.n_envs < 1 or args.timesteps < 1:
            raise ValueError("--n-envs and --timesteps must be positive")
        if args.pretrain is not None:
            from agents import make_agent

            make_agent(args.pretrain)  # an unknown teacher is refused here, naming the valid agents
            if args.pretrain_games < 1 or args.pretrain_epochs < 1 or args.workers < 1:
                raise ValueError("--pretrain-games, --pretrain-epochs and --workers must be positive")
        if args.pretrain_cache is not None and args.pretrain is None:
            raise ValueError("--pretrain-cache needs --pretrain AGENT (the teacher whose games it holds)")
        args.eval_opponent = _pick_eval_opponent(args.eval_opponent) if config.num_players > 1 else "random"
        out = args.out or Path("runs") / f"train-{config.num_players}p-l{config.plate_level}-{time.strftime('%Y%m%d-%H%M%S')}"
        out.mkdir(parents=True, exist_ok=True)
        pool = None
        if config.solo:
            env: VecEnv = UmbrellaSB3VecEnv(num_envs=args.n_envs, plate_level=config.plate_level,
                                            max_turns=config.max_turns)
            env.seed(args.seed)
        else:
            pool = OpponentPool(args.opponents, config, seed=args.seed)
            env = LearnerVecEnv(args.n_envs, config, pool, args.shaping, seed=args.seed)
        if args.resume is not None:
            from agents.policy import read_metadata

            meta = read_metadata(args.resume)
            if (meta["num_players"], meta["plate_level"]) != (config.num_players, config.plate_level):
                raise ValueError(
                    f"--resume {args.resume} was trained for {meta['num_players']} players, level "
                    f"{meta['plate_level']}; this run is {config.num_players} players, level {config.plate_level}"
                )
    except (ValueError, OSError) as exc:
        parser.error(str(exc))
    import torch

    args.torch_threads = args.torch_threads or default_threads()
    torch.set_num_threads(max(1, args.torch_threads))
    tb = None
    try:
        import tensorboard  # noqa: F401

        tb = str(out / "tb")
    except ImportError:
        pass
    if args.resume is not None:
        model = MaskablePPO.load(args.resume, env=env, device="cpu", tensorboard_log=tb)
    else:
        model = build_model(args, env, tb)
    pretrain_history = None
    if args.pretrain is not None:
        try:
            pretrain_history = clone_teacher(model, args, config)
        except ValueError as exc:  # a cache made for another run
            parser.error(str(exc))
    callback = TrainCallback(args, config, pool, out)
    progress = not args.no_progress
    if progress:
        try:
            import rich  # noqa: F401
            import tqdm  # noqa: F401
        except ImportError:
            progress = False
    print(f"training {config.num_players}-player level {config.plate_level} for {int(args.timesteps):,} steps "
          f"on {args.n_envs} games -> {out}", flush=True)
    t0 = time.perf_counter()
    model.learn(int(args.timesteps), callback=callback, progress_bar=progress, reset_num_timesteps=args.resume is None)
    elapsed = time.perf_counter() - t0
    final = callback.evaluate()
    save_checkpoint(model, out / "last.zip", config, {"timesteps": int(model.num_timesteps)})
    summary = {
        "players": config.num_players,
        "level": config.plate_level,
        "timesteps": int(model.num_timesteps),
        "seconds": round(elapsed, 1),
        "env_steps_per_second": round(model.num_timesteps / elapsed, 1),
        "eval_opponent": args.eval_opponent,
        "pretrain": pretrain_history,
        "history": callback.history,
        "best_metric": callback.best,
        "final_metric": final.metric(config.solo),
    }
    (out / "train_summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(f"done: {int(model.num_timesteps):,} steps in {elapsed:.0f} s "
          f"({model.num_timesteps / elapsed:,.0f} env steps/s); best model: {out / 'best.zip'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
