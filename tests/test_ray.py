"""Scaling out on Ray: RLlib training, RLlib checkpoints as agents, tournaments as Ray tasks.

Needs the ray extra: without Ray this file is not collected (tests/conftest.py); CI runs
it in the Ray environment with ``python -m pytest -m ray``.  One local Ray with 2 CPUs
serves the whole module.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import ray
import torch
from gymnasium import spaces
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode

import umbrella_env
from agents import make_agent
from agents.rllib_agent import module_path
from agents.rllib_module import MASK_KEY, OBS_KEY, MaskedPPOModule
from tests.test_alphazero import _without
from umbrella_env.core.config import GameConfig
from umbrella_env.core.errors import ActionError
from umbrella_env.envs.common import end_rewards
from umbrella_env.evaluation import cli as evaluate_cli
from umbrella_env.evaluation.stats import summarise
from umbrella_env.evaluation.tournament import EvaluationError, run_tournament
from umbrella_env.match import AgentSpecError, build_agent, play_game
from umbrella_env.ray_cluster import stop_algorithm
from umbrella_env.rllib_env import TRAIN_MAX_TURNS, MaskedSoloEnv, TurnBasedEnv
from umbrella_env.rllib_train import build_config, build_parser
from umbrella_env.rllib_train import main as train

pytestmark = pytest.mark.ray

#: A tiny, seeded run: 2 iterations of 400 env steps, games cut at 40 turns, one final evaluation.
SMOKE = [
    *("--iterations", "2", "--train-batch", "400", "--batch-size", "200", "--max-turns", "40"),
    *("--envs-per-runner", "2", "--eval-every", "1e9", "--eval-games", "2"),
    *("--net", "64", "--seed", "0"),
]
#: the evaluation opponent of the 2-player smoke runs (a solo run has none)
VS_RANDOM = ["--eval-opponent", "random"]


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Any:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _random_legal(obs: dict[str, np.ndarray], rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(obs[MASK_KEY])))


# --------------------------------------------------------------------------- the env adapters
def test_turn_based_env_plays_the_aec_game_with_its_rewards() -> None:
    env = TurnBasedEnv({"num_players": 3, "plate_level": 2, "max_turns": 3000})
    aec = umbrella_env.env(num_players=3, plate_level=2)
    obs, _ = env.reset(seed=5)
    aec.reset(seed=5)
    rng = np.random.default_rng(5)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    while True:
        (mover,) = obs  # one observation: the seat to move, the AEC env's agent_selection
        assert mover == aec.agent_selection
        np.testing.assert_array_equal(obs[mover][OBS_KEY], aec.observe(mover)["observation"])
        np.testing.assert_array_equal(obs[mover][MASK_KEY], aec.observe(mover)["action_mask"])
        action = _random_legal(obs[mover], rng)
        obs, rewards, terminated, truncated, _ = env.step({mover: action})
        aec.step(action)
        for agent, r in rewards.items():
            returns[agent] += r
        if terminated["__all__"] or truncated["__all__"]:
            break
    assert terminated["__all__"] and set(obs) == set(env.possible_agents)  # every seat sees the end
    assert returns == aec.rewards  # shaping 0: the end rewards of the AEC env
    assert sorted(returns.values())[0] == -1.0 and env.illegal_actions == 0


def test_turn_based_env_checks_its_reset_arguments_as_the_other_envs_do() -> None:
    env = TurnBasedEnv({"num_players": 2})
    with pytest.raises(TypeError, match="options must be a dict or None, got str"):
        env.reset(options="fast")
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=-1)
    first, _ = env.reset(seed=5, options={"ignored": 1})
    again, _ = env.reset(seed=5)
    assert first.keys() == again.keys()
    assert all(np.array_equal(first[a][OBS_KEY], again[a][OBS_KEY]) for a in first)
    with pytest.raises(ValueError, match="starts a single-game env .* TurnBasedEnv has no such option"):
        env.reset(seed=6, options={"state": {}})  # not a new deal as if the option were not given
    after, _ = env.reset()  # the refused call did not reseed: this continues seed 5's stream
    ref = TurnBasedEnv({"num_players": 2})
    ref.reset(seed=5)
    expected, _ = ref.reset()
    assert after.keys() == expected.keys()
    assert all(np.array_equal(after[a][OBS_KEY], expected[a][OBS_KEY]) for a in after)
    with pytest.raises(ValueError, match="2, 3 or 4 in this env, got 1; solo games are MaskedSoloEnv"):
        TurnBasedEnv({"num_players": 1})
    assert TurnBasedEnv({"max_turns": None}).config.max_turns == TRAIN_MAX_TURNS  # None is the default
    with pytest.raises(ValueError, match="MaskedSoloEnv is the solo game: num_players must be 1"):
        MaskedSoloEnv({"num_players": True})  # was taken for 1


def test_an_illegal_action_is_counted_and_loses_the_game() -> None:
    env = TurnBasedEnv({"num_players": 2, "shaping": 0.5})
    obs, _ = env.reset(seed=1)
    (mover,) = obs
    illegal = int(np.flatnonzero(obs[mover][MASK_KEY] == 0)[0])
    with pytest.warns(UserWarning, match="not legal"):
        obs, rewards, terminated, _, _ = env.step({mover: illegal})
    assert env.illegal_actions == 1 and env.episode_illegal_actions == 1
    assert terminated["__all__"] and rewards[mover] == -1.0 and set(obs) == {"player_0", "player_1"}
    solo = MaskedSoloEnv({"plate_level": 1})
    obs, _ = solo.reset(seed=1)
    with pytest.warns(UserWarning, match="not legal"):
        solo.step(int(np.flatnonzero(obs[MASK_KEY] == 0)[0]))
    assert solo.illegal_actions == 1


@pytest.mark.parametrize(
    ("env_class", "env_config", "message"),
    [
        # these were accepted: a NaN or negative weight trained on NaN or inverted rewards ...
        (TurnBasedEnv, {"shaping": float("nan")}, "env config shaping must be a finite number >= 0, got nan"),
        (TurnBasedEnv, {"shaping": -0.5}, "env config shaping must be a finite number >= 0, got -0.5"),
        (TurnBasedEnv, {"shaping": None}, "env config shaping must be a finite number >= 0, got None"),
        # ... a bare string was one opponent per character ("unknown agent 'g'") ...
        (TurnBasedEnv, {"opponents": "greedy"}, "opponents must be a list of agent specs .* got 'greedy'"),
        (TurnBasedEnv, "greedy", "env_config must be a dict"),
        # ... and the solo env ignored a shaping weight
        (MaskedSoloEnv, {"shaping": 0.5}, "takes neither opponents nor shaping"),
    ],
)
def test_bad_env_config_values_are_refused_with_their_name(env_class: Any, env_config: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        env_class(env_config)


def test_the_solo_env_refuses_an_action_that_is_not_an_integer_id() -> None:
    from agents.heuristic import HeuristicAgent
    from umbrella_env.core.single import SingleGame

    env = MaskedSoloEnv({"plate_level": 1})
    obs, _ = env.reset(seed=1)
    legal = int(np.flatnonzero(obs[MASK_KEY])[0])
    state = env.env.get_state()
    for bad in (legal + 0.7, True, "x"):  # the floats and bools were truncated to an id; "x" failed in int()
        with pytest.raises(ActionError, match="action must be an integer id"):
            env.step(bad)
        assert env.env.get_state() == state  # refused: nothing played
    agent, start = HeuristicAgent(seed=0), env.game_summary()[1]
    for _ in range(200):  # RLlib's actions (NumPy ints), on the unchanged game, until the score moves
        game = SingleGame.from_dict(env.env.get_state())
        action = agent.act(obs[OBS_KEY], obs[MASK_KEY].astype(bool), game)
        obs, _, terminated, _, info = env.step(np.int64(action))
        if info["score"] != start or terminated:
            break
    assert env.illegal_actions == 0 and info["score"] != start
    assert info["score"] == env.game_summary()[1] == env.env.get_state()["scores"][0]  # the summary follows the game


def test_frozen_opponents_play_inside_the_step_and_only_the_learner_observes() -> None:
    env = TurnBasedEnv({"num_players": 3, "opponents": ["greedy"], "max_turns": 3000})
    rng = np.random.default_rng(2)
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        learner = env.agents
        assert len(learner) == 1
        total = 0.0
        done = False
        while not done:
            assert list(obs) == learner
            obs, rewards, terminated, truncated, _ = env.step({learner[0]: _random_legal(obs[learner[0]], rng)})
            assert list(rewards) == learner
            total += rewards[learner[0]]
            done = terminated["__all__"] or truncated["__all__"]
        assert total == -1.0  # a random learner loses to greedy opponents, and is told so
    with pytest.raises(AgentSpecError, match="unknown agent"):
        TurnBasedEnv({"num_players": 2, "opponents": ["nobody"]})


@pytest.mark.parametrize("num_players", [2, 4])
def test_rllib_episodes_keep_every_shaping_reward(num_players: int) -> None:
    """RLlib drops a reward paid to a seat before its first observation: the opponents'
    first moves changed its score edge, and 12 of 20 seeded games lost some of it."""
    for seed in range(6):
        env = TurnBasedEnv({"num_players": num_players, "shaping": 0.1, "max_turns": 3000})
        obs, infos = env.reset(seed=seed)
        start = env._edges()
        episode = MultiAgentEpisode()
        episode.add_env_reset(observations=obs, infos=infos)
        rng = np.random.default_rng(seed)
        while True:
            (mover,) = obs
            action = _random_legal(obs[mover], rng)
            obs, rewards, terminated, truncated, _ = env.step({mover: action})
            episode.add_env_step(observations=obs, actions={mover: action}, rewards=rewards, infos={},
                                 terminateds=terminated, truncateds=truncated)  # fmt: skip
            if terminated["__all__"]:
                break
        g = env._g
        end = end_rewards(g.scores(), g.game.ranks(), True, "win")
        for seat, agent in enumerate(env.possible_agents):
            expected = 0.1 * (env._edges()[seat] - start[seat]) + end[seat]
            got = episode.agent_episodes[agent].get_return()
            assert got == pytest.approx(expected, abs=1e-9), (seed, agent)


def test_rllib_episodes_give_every_seat_its_moves_and_the_loser_its_minus_one() -> None:
    args = build_parser().parse_args(["--num-env-runners", "0", "--envs-per-runner", "1", "--shaping", "0",
                                      "--max-turns", "3000", "--net", "32", "--features", "none"])  # fmt: skip
    algo = build_config(args).build_algo()
    logdir = Path(algo.logdir)
    assert logdir.is_dir() and logdir.parent.name == "ray_results"  # RLlib's own folder for every algorithm
    try:
        episodes = algo.env_runner.sample(num_episodes=1, random_actions=False)
    finally:
        stop_algorithm(algo)
    assert not logdir.exists()  # every run left it, empty, in the user's home
    finished = [e for e in episodes if e.is_done]
    assert finished
    for episode in finished:
        assert episode.is_terminated  # a whole game (no truncation at 3000 turns)
        last = {aid: sa.get_rewards()[-1] for aid, sa in episode.agent_episodes.items()}
        assert sorted(last.values()) in ([-1.0, 1.0], [0.5, 0.5])
        moves = sum(len(sa) for sa in episode.agent_episodes.values())
        assert moves == episode.env_t  # one decision per env step, each in exactly one seat's episode


def test_a_user_config_that_cuts_turn_based_episodes_is_warned() -> None:
    """RLlib's PPO default, truncate_episodes, was accepted without a word from a user's own
    config, though a cut episode loses a waiting seat's last action."""
    args = build_parser().parse_args(["--num-env-runners", "0", "--envs-per-runner", "1", "--net", "32",
                                      "--features", "none"])  # fmt: skip
    with pytest.warns(UserWarning, match=r"batch_mode='truncate_episodes'.*complete_episodes"):
        algo = build_config(args).env_runners(batch_mode="truncate_episodes").build_algo()
    stop_algorithm(algo)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="TurnBasedEnv is trained")
        stop_algorithm(build_config(args).build_algo())  # the command's own config: no warning


def test_the_own_script_example_of_the_docs_runs_and_its_checkpoint_plays(tmp_path: Path) -> None:
    import re

    from umbrella_env.rllib_train import metadata, save_checkpoint

    doc = (Path(__file__).resolve().parents[1] / "docs" / "scaling.md").read_text(encoding="utf-8")
    [code] = [b for b in re.findall(r"```python\n(.*?)```", doc, re.S) if "build_config(args)" in b]
    given = '["--players", "2", "--num-env-runners", "1"]'
    assert given in code and "range(3)" in code
    small = [*SMOKE, "--players", "2", "--num-env-runners", "0", "--out", str(tmp_path / "unused")]
    space: dict[str, Any] = {}
    exec(code.replace(given, repr(small)).replace("range(3)", "range(1)").replace("stop_algorithm(algo)", ""), space)
    algo = space["algo"]
    try:
        assert np.isfinite(space["result"]["learners"]["shared"]["policy_loss"])
        save_checkpoint(algo, tmp_path / "mine", metadata(GameConfig(num_players=2), "shared"))  # as the docs say
    finally:
        stop_algorithm(algo)
    agent = build_agent(f"rllib:{tmp_path / 'mine'}", GameConfig(num_players=2))
    assert play_game([agent, build_agent("random", GameConfig(num_players=2))], GameConfig(num_players=2), seed=0).turns


# --------------------------------------------------------------------------- training
@pytest.fixture(scope="module")
def run_2p(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("rllib") / "run-2p"
    assert train([*SMOKE, *VS_RANDOM, "--players", "2", "--num-env-runners", "1", "--out", str(out)]) == 0
    return out


def test_two_player_smoke_run_sends_no_illegal_action(run_2p: Path) -> None:
    summary = json.loads((run_2p / "summary.json").read_text(encoding="utf-8"))
    assert summary["iterations"] == 2 and summary["env_steps"] >= 800
    assert summary["illegal_actions"] == 0  # counted by the env adapters, reported by every env runner
    rows = [json.loads(line) for line in (run_2p / "progress.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["iteration"] for r in rows if not r.get("eval")] == [1, 2]
    assert all(r["illegal_actions"] == 0 for r in rows if not r.get("eval"))
    for row in (r for r in rows if not r.get("eval")):  # the learner's figures were kept nowhere
        figures = [row[k] for k in ("policy_loss", "vf_loss", "entropy", "mean_kl_loss")]
        assert all(isinstance(v, float) for v in figures) and len(set(figures)) == 4, row  # each its own
        assert row["entropy"] > 0 and row["vf_loss"] >= 0, row
        assert sorted(row["seat_returns"]) == ["player_0", "player_1"], row
        assert any(v != 0 for v in row["seat_returns"].values()), row  # the games paid their seats
    meta = json.loads((run_2p / "best" / "umbrella.json").read_text(encoding="utf-8"))
    assert (meta["num_players"], meta["plate_level"], meta["module_id"]) == (2, 1, "shared")


def test_solo_smoke_run_with_cloning_sends_no_illegal_action_and_its_checkpoint_plays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "solo"
    clone = ["--pretrain", "heuristic", "--pretrain-games", "3", "--pretrain-epochs", "2", "--workers", "1"]
    assert train([*SMOKE, *clone, "--players", "1", "--num-env-runners", "0", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["illegal_actions"] == 0 and summary["iterations"] == 2
    assert [row["epoch"] for row in summary["pretrain"]] == [1, 2]
    agent = build_agent(f"rllib:{out / 'best'}", GameConfig(num_players=1))
    result = play_game([agent], GameConfig(num_players=1), seed=3)
    assert result.turns > 0
    # The interrupted command with --resume added: its cloning options, equal to the recorded
    # ones, are accepted and not done again (they were refused); a differing one is refused.
    record = json.loads((out / "last" / "umbrella.json").read_text(encoding="utf-8"))["pretraining"]
    assert record == {"pretrain": "heuristic", "pretrain_games": 3, "pretrain_epochs": 2, "pretrain_lr": 0.001,
                      "pretrain_batch": 256}  # fmt: skip
    capsys.readouterr()
    again = [*_without(SMOKE, "--iterations"), "--iterations", "3", *clone, "--players", "1", "--num-env-runners", "0",
             "--resume", str(out / "last"), "--out", str(out)]  # fmt: skip
    assert train(again) == 0
    said = capsys.readouterr().out
    assert (
        "the run's cloning, done at its start; a resume does not clone again" in said and "cloned heuristic" not in said
    )
    assert json.loads((out / "last" / "umbrella.json").read_text(encoding="utf-8"))["pretraining"] == record
    differing = [*again[:-2], "--pretrain-games", "4", "--iterations", "4", "--out", str(tmp_path / "x")]
    assert train(differing) == 2
    assert "--pretrain-games 4 differs from the run's cloning (3)" in capsys.readouterr().err


@pytest.mark.filterwarnings("ignore:.*is not legal in phase")
def test_the_illegal_action_count_would_see_an_unmasked_policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The same run with the masking switched off: the env adapters must count what arrives.
    monkeypatch.setattr("agents.rllib_module.masked_logits", lambda logits, mask: logits)
    out = tmp_path / "unmasked"
    assert (
        train([*SMOKE, *VS_RANDOM, "--players", "2", "--num-env-runners", "0", "--iterations", "1", "--out", str(out)])
        == 0
    )
    assert json.loads((out / "summary.json").read_text(encoding="utf-8"))["illegal_actions"] > 0


def _raise_keyboard_interrupt(*args: Any, **kwargs: Any) -> Any:
    raise KeyboardInterrupt


def test_ctrl_c_while_cloning_ends_in_one_line_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Ctrl-C in the teacher games
    monkeypatch.setattr("umbrella_env.training.imitation.collect", _raise_keyboard_interrupt)
    out = tmp_path / "run"
    clone = ["--pretrain", "heuristic", "--pretrain-games", "3", "--workers", "1"]
    try:
        status = train([*SMOKE, *VS_RANDOM, *clone, "--players", "2", "--num-env-runners", "0", "--out", str(out)])
    except KeyboardInterrupt:
        status = None  # it used to leave the command as a traceback
    assert status == 130
    err = capsys.readouterr().err
    assert "interrupted: nothing was written" in err and "Traceback" not in err
    assert not out.exists()


@pytest.mark.posix
def test_sigterm_in_training_keeps_the_run_as_ctrl_c_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``kill`` / ``timeout`` left a half-written run (no summary.json) that the same --out then refused."""
    from ray.rllib.algorithms.ppo import PPO

    real_train, calls = PPO.train, []
    handler = signal.getsignal(signal.SIGTERM)

    def train_then_sigterm(self: Any) -> Any:  # SIGTERM arrives during the second iteration
        calls.append(1)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGTERM)
        return real_train(self)

    monkeypatch.setattr(PPO, "train", train_then_sigterm)
    out = tmp_path / "run"
    status = train([*SMOKE, *VS_RANDOM, "--players", "2", "--num-env-runners", "0", "--iterations", "5",
                    "--out", str(out)])  # fmt: skip
    assert status == 130
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["interrupted"] is True and summary["iterations"] == 1
    assert signal.getsignal(signal.SIGTERM) == handler and "stopped: " in capsys.readouterr().out  # put back


def test_ctrl_c_in_training_then_in_the_final_evaluation_keeps_the_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ray.rllib.algorithms.ppo import PPO

    real_train, calls = PPO.train, []

    def train_once(self: Any) -> Any:  # Ctrl-C in the second iteration
        calls.append(1)
        return real_train(self) if len(calls) == 1 else _raise_keyboard_interrupt()

    monkeypatch.setattr(PPO, "train", train_once)
    monkeypatch.setattr("umbrella_env.rllib_train.evaluate", _raise_keyboard_interrupt)  # a second Ctrl-C
    out = tmp_path / "run"
    try:
        status = train([*SMOKE, *VS_RANDOM, "--players", "2", "--num-env-runners", "0", "--out", str(out)])
    except KeyboardInterrupt:
        status = None  # the second Ctrl-C used to leave as a traceback, without summary.json
    assert status == 130
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["interrupted"] is True and summary["iterations"] == 1 and summary["final_eval"] is None
    assert (out / "last" / "umbrella.json").is_file() and not (out / "best").exists()
    assert "stopped: " in capsys.readouterr().out


# --------------------------------------------------------------------------- checkpoints as agents
def test_an_rllib_checkpoint_plays_legal_games_as_an_agent(run_2p: Path, tmp_path: Path) -> None:
    config = GameConfig(num_players=2)
    spec = f"rllib:{run_2p / 'best'}"
    for seed in range(3):  # play_game raises AgentError on any illegal action
        result = play_game([build_agent(spec, config), make_agent("random", seed=seed)], config, seed)
        assert result.turns > 0
    sampled = make_agent(spec, seed=1, deterministic=False)
    obs = umbrella_env.env(num_players=2)
    obs.reset(seed=4)
    mask = obs.observe("player_0")["action_mask"]
    assert all(mask[sampled.act(obs.observe("player_0")["observation"], mask)] for _ in range(20))
    report = tmp_path / "eval"
    assert evaluate_cli.main(["--agents", spec, "random", "--games", "4", "--workers", "1", "--out", str(report),
                              "--no-progress"]) == 0  # fmt: skip
    assert (report / "report.md").is_file()


@pytest.mark.posix
def test_a_ray_started_for_library_code_leaves_the_process_as_it_found_it(tmp_path: Path) -> None:
    # ray.init replaced an ignored SIGTERM by a handler that exits (kept after the shutdown),
    # set PYTHONBREAKPOINT to Ray's debugger, the ray logger's level, faulthandler, and drew
    # from Python's generator; a child process, as this one runs its own Ray
    script = tmp_path / "user.py"
    script.write_text(
        textwrap.dedent("""
        import faulthandler, logging, os, random, signal
        from umbrella_env.ray_cluster import ray_session
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        logging.getLogger("ray").setLevel(logging.INFO)
        random.seed(5)
        state = lambda: (signal.getsignal(signal.SIGTERM), logging.getLogger("ray").level,
                         faulthandler.is_enabled(), dict(os.environ))
        before = state()
        with ray_session(num_cpus=1, what="a test"):
            assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
            inside = random.random()
        random.seed(5)
        assert random.random() == inside
        after = state()
        assert after[:3] == before[:3], (before[:3], after[:3])
        assert after[3] == before[3], set(after[3].items()) ^ set(before[3].items())
        import ray
        def failing(**options):  # a start that fails half-way (or is interrupted)
            os.environ["PYTHONBREAKPOINT"] = "ray.util.rpdb._driver_set_trace"
            signal.signal(signal.SIGTERM, lambda *args: None)
            raise RuntimeError("raylet failed to start")
        ray.init = failing
        try:
            with ray_session(num_cpus=1, what="a test"):
                raise AssertionError("not reached")
        except RuntimeError:
            pass
        after = state()
        assert after[:3] == before[:3] and after[3] == before[3], "a failed start left its changes"
        os.kill(os.getpid(), signal.SIGTERM)  # ignored, as the user chose
        print("alive")
    """)
    )
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0 and run.stdout.strip().endswith("alive"), run.stderr[-2000:]


@pytest.mark.parametrize("deterministic", [True, False])
def test_an_rllib_agent_refuses_outputs_that_are_not_finite(run_2p: Path, deterministic: bool) -> None:
    # finite weights whose outputs overflow: argmax of NaN played the first legal action, and
    # sampling failed inside NumPy ("probabilities contain NaN")
    import torch

    from agents.checks import OutputsNotFinite

    agent = make_agent(f"rllib:{run_2p / 'best'}", seed=0, deterministic=deterministic)
    with torch.no_grad():
        for weights in agent.module.parameters():
            weights.fill_(3e38)
    env = umbrella_env.env(num_players=2)
    env.reset(seed=4)
    obs, mask = env.observe("player_0")["observation"], env.observe("player_0")["action_mask"]
    with pytest.raises(OutputsNotFinite, match="RLlib checkpoint .* gave outputs that are not finite"):
        agent.act(obs, mask)


def test_an_rllib_checkpoint_of_another_configuration_is_refused(run_2p: Path, tmp_path: Path) -> None:
    spec = f"rllib:{run_2p / 'best'}"
    with pytest.raises(AgentSpecError, match="trained for num_players=2, but this game has num_players=3"):
        build_agent(spec, GameConfig(num_players=3))
    with pytest.raises(AgentSpecError, match="trained for plate_level=1, but this game has plate_level=2"):
        build_agent(spec, GameConfig(num_players=2, plate_level=2))
    with pytest.raises(ValueError, match="not a folder"):
        make_agent(f"rllib:{tmp_path / 'missing'}")
    (tmp_path / "other").mkdir()
    with pytest.raises(ValueError, match="has no umbrella.json"):
        make_agent(f"rllib:{tmp_path / 'other'}")
    # "rllib:" alone was the current folder; the run folder was "not written by rllib_train"
    with pytest.raises(ValueError, match="no path given"):
        make_agent("rllib:")
    with pytest.raises(ValueError, match=r"is a run folder: give one of its checkpoints, .*best' or .*last'"):
        make_agent(f"rllib:{run_2p}")
    # a damaged module state said "could not be loaded: " and nothing more
    damaged = tmp_path / "damaged"
    shutil.copytree(run_2p / "best", damaged)
    for state in module_path(damaged, "shared").glob("module_state*"):
        state.write_bytes(b"not a pickle") if state.is_file() else shutil.rmtree(state)
    with pytest.raises(ValueError, match=r"could not be loaded: \w+"):
        make_agent(f"rllib:{damaged}")


def test_an_rllib_agent_refuses_inputs_of_the_wrong_shape(run_2p: Path) -> None:
    agent = make_agent(f"rllib:{run_2p / 'best'}")
    env = umbrella_env.env(num_players=2)
    env.reset(seed=4)
    seen = env.observe("player_0")
    obs, mask = seen["observation"], seen["action_mask"]
    expected = r"expected observations \[n, 899\] and action masks \[n, 968\]"
    for bad_obs, bad_mask in [(obs[:10], mask), (obs, mask[:10]), (obs[None], mask[None])]:
        with pytest.raises(ValueError, match=expected):  # these were torch errors from inside the network
            agent.act(bad_obs, bad_mask)
    with pytest.raises(ValueError, match=expected):  # one mask for two observations was broadcast silently
        agent.act_batch(np.stack([obs, obs]), mask[None])
    assert mask[agent.act(obs, mask)]
    import copy
    import pickle

    for clone in (pickle.loads(pickle.dumps(agent)), copy.deepcopy(agent)):  # it held the torch module: no pickle
        assert clone.act(obs, mask) == agent.act(obs, mask)


# --------------------------------------------------------------------------- tournaments on Ray
def test_the_ray_backend_gives_the_process_pool_report(run_2p: Path) -> None:
    agents = ["random", "greedy", f"rl=rllib:{run_2p / 'best'}"]
    pool = run_tournament(agents, 2, 1, games=4, seed=11, workers=1)
    on_ray = run_tournament(agents, 2, 1, games=4, seed=11, backend="ray")
    assert len(pool.records) == 12 and on_ray.records == pool.records
    timing = "elapsed_seconds"  # the one entry of a summary that is not a result
    # compared as JSON text: an agent with no Elo interval has nan bounds, and nan != nan
    assert json.dumps({k: v for k, v in summarise(on_ray).items() if k != timing}) == json.dumps(
        {k: v for k, v in summarise(pool).items() if k != timing}
    )


def test_a_checkpoint_replaced_between_two_ray_tournaments_is_loaded_again(run_2p: Path, tmp_path: Path) -> None:
    # The module's Ray serves both tournaments, so its workers are reused (as in a notebook):
    # they used to keep the agents of the first tournament, and played the replaced checkpoint's old policy.
    other = tmp_path / "other"
    shutil.copytree(run_2p / "best", other)
    where = module_path(other, "shared")
    module = RLModule.from_checkpoint(where)
    with torch.no_grad():
        for p in module.pi.parameters():
            p.neg_()  # another policy, the same configuration
    module.save_to_path(where)
    path = tmp_path / "current"
    shutil.copytree(run_2p / "best", path)
    agents = ["greedy", f"rl=rllib:{path}"]
    first = run_tournament(agents, 2, 1, games=8, seed=3, backend="ray")
    shutil.rmtree(path)
    shutil.copytree(other, path)
    pool = run_tournament(agents, 2, 1, games=8, seed=3, workers=1)
    assert pool.records != first.records  # the replaced checkpoint plays otherwise
    assert run_tournament(agents, 2, 1, games=8, seed=3, backend="ray").records == pool.records


# --------------------------------------------------------------------------- failures
class _FailingAgent:
    """Plays legal moves, then raises: an opponent that breaks in the middle of training."""

    name, needs_game = "failing", False

    def __init__(self) -> None:
        self.calls = 0

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: np.ndarray, action_mask: np.ndarray, game: Any = None) -> int:
        self.calls += 1
        if self.calls > 20:
            raise RuntimeError("the opponent broke")
        return int(np.flatnonzero(action_mask)[0])


def failing_agent() -> _FailingAgent:
    return _FailingAgent()


@pytest.mark.parametrize("runners", [0, 1])
def test_a_failing_env_stops_the_run_with_its_cause(
    runners: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A remote env runner (runners=1) used to be restarted silently by RLlib, and the run then
    # sampled nothing, forever; its error is read from the dead actor's own log.
    out = tmp_path / "run"
    argv = [*SMOKE, *VS_RANDOM, "--players", "2", "--num-env-runners", str(runners)]
    argv += ["--opponents", "tests.test_ray:failing_agent", "--out", str(out)]
    assert train(argv) == 1
    err = capsys.readouterr().err
    assert "training failed: iteration 1 failed" in err and "RuntimeError('the opponent broke')" in err
    assert "AgentError: agent" in err
    if runners == 0:  # a local env runner: our own traceback of RLlib's frames was printed before the message
        assert "sync_vector_multi_agent_env.py" not in err
    assert not out.exists()  # nothing written: no folder left behind
    out.mkdir()  # a folder the user made: the failed run leaves it empty, so a retry is accepted
    assert train(argv) == 1
    assert out.is_dir() and not any(out.iterdir())


def test_a_failing_evaluation_opponent_stops_the_run_with_its_cause(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    argv = [*SMOKE, "--iterations", "1", "--players", "2", "--num-env-runners", "0", "--out", str(out)]
    assert train([*argv, "--eval-opponent", "tests.test_ray:failing_agent"]) == 1  # it was an AgentError traceback
    err = capsys.readouterr().err
    assert "training failed: the evaluation at" in err and "RuntimeError('the opponent broke')" in err
    assert "Traceback" not in err and (out / "last" / "umbrella.json").is_file()


def test_a_folder_with_a_previous_run_is_refused(run_2p: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert train([*SMOKE, "--out", str(run_2p)]) == 2  # it would have replaced best/ and progress.jsonl
    assert "holds a previous run" in capsys.readouterr().err


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_run_resumes_from_its_checkpoint_in_another_folder_or_its_own(
    run_2p: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """There was no --resume: a stopped or finished run could only start again from scratch."""
    meta = json.loads((run_2p / "last" / "umbrella.json").read_text(encoding="utf-8"))
    assert (meta["iteration"], meta["net"], meta["features"]) == (2, [64], "figure")
    resume = [*_without(SMOKE, "--iterations", "--net"), *VS_RANDOM, "--iterations", "3", "--num-env-runners", "0"]
    out = tmp_path / "b"
    assert train([*resume, "--resume", str(run_2p / "last"), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert f"resumed {run_2p / 'last'} at iteration 2, {meta['timesteps']:,} env steps" in said
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["iterations"] == 3 and summary["resumed_from"] == str(run_2p / "last")
    assert summary["env_steps"] == meta["timesteps"] + summary["session_env_steps"] > meta["timesteps"]
    before, after = _lines(run_2p / "progress.jsonl"), _lines(out / "progress.jsonl")
    assert after[: len(before)] == before  # the run's lines up to its checkpoint, then this session's
    assert [r["iteration"] for r in after if not r.get("eval")] == [1, 2, 3]
    seconds = [r["seconds"] for r in after]
    assert seconds == sorted(seconds)  # they go on counting
    assert (out / "best" / "umbrella.json").is_file()  # kept, or replaced by a better evaluation
    assert json.loads((out / "last" / "umbrella.json").read_text(encoding="utf-8"))["iteration"] == 3
    # --max-turns left out: the checkpoint's 40, not the option's default 400 (a new game, unsaid)
    assert train([*_without(resume, "--max-turns", "--iterations"), "--iterations", "3", "--resume",
                  str(run_2p / "last"), "--out", str(tmp_path / "turns")]) == 0  # fmt: skip
    assert json.loads((tmp_path / "turns" / "last" / "umbrella.json").read_text(encoding="utf-8"))["max_turns"] == 40
    own = tmp_path / "own"  # the run continued in its own folder
    shutil.copytree(run_2p, own)
    assert train([*resume, "--resume", str(own / "last"), "--out", str(own)]) == 0
    assert [r["iteration"] for r in _lines(own / "progress.jsonl") if not r.get("eval")] == [1, 2, 3]


def test_a_resume_takes_the_checkpoints_training_options_unless_given(
    run_2p: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resume took --shaping, --ent-coef, --train-batch, ... from the command line: left
    out, they were the options' defaults (a train batch of 4,000 for a run of 400), unsaid,
    and umbrella.json did not record the shaping (RLlib audit, 2026-12-07)."""
    meta = json.loads((run_2p / "last" / "umbrella.json").read_text(encoding="utf-8"))
    assert (meta["train_batch"], meta["batch_size"], meta["shaping"], meta["ent_coef"]) == (400, 200, 0.1, 0.01)
    run = tmp_path / "run"  # the run's settings made other than the options' defaults
    shutil.copytree(run_2p, run)
    edited = {**meta, "shaping": 0.2, "learning_rate": 3e-4, "n_epochs": 2, "batch_size": 100}
    (run / "last" / "umbrella.json").write_text(json.dumps(edited), encoding="utf-8")
    bare = [*_without(SMOKE, "--iterations", "--net", "--train-batch", "--batch-size"), *VS_RANDOM]
    out = tmp_path / "bare"
    from umbrella_env import rllib_train
    from umbrella_env.training.options import resume_seed

    built: list[tuple[Any, Any]] = []  # (seed, PPOConfig) of the run: what RLlib trains with, not only the record
    real_build = rllib_train.build_config
    monkeypatch.setattr(
        rllib_train, "build_config", lambda a, seed=None: built.append((seed, real_build(a, seed))) or built[-1][1]
    )
    # --train-batch 300 alone: the checkpoint's batch of 100 fits it (the default 500 did not)
    assert train([*bare, "--iterations", "3", "--num-env-runners", "0", "--ent-coef", "0.02", "--train-batch", "300",
                  "--resume", str(run / "last"), "--out", str(out)]) == 0  # fmt: skip
    seed, config = built[-1]
    assert (config.lr, config.num_epochs, config.entropy_coeff, config.minibatch_size) == (3e-4, 2, 0.02, 100)
    assert config.train_batch_size_per_learner == 300
    assert seed == config.seed == resume_seed(0, meta["timesteps"]) != 0  # --seed 0, dealt anew (not the first games)
    said = capsys.readouterr().out
    assert "note: the checkpoint's run trained with --ent-coef 0.01; this run uses 0.02" in said
    assert "note: the checkpoint's run trained with --train-batch 400; this run uses 300" in said
    after = json.loads((out / "last" / "umbrella.json").read_text(encoding="utf-8"))
    taken = ("train_batch", "batch_size", "shaping", "ent_coef", "learning_rate", "n_epochs")
    assert tuple(after[k] for k in taken) == (300, 100, 0.2, 0.02, 3e-4, 2)
    for bad, words in (
        ({"shaping": "x"}, "is damaged: the checkpoint records --shaping as 'x', which is not a value of --shaping"),
        ({"shaping": 5.0}, "--resume: with the settings the checkpoint records: --shaping must be a number in [0, 1]"),
    ):
        (run / "last" / "umbrella.json").write_text(json.dumps({**edited, **bad}), encoding="utf-8")
        assert train([*bare, "--iterations", "3", "--ent-coef", "0.02", "--resume", str(run / "last"),
                      "--out", str(tmp_path / "no")]) == 2  # fmt: skip
        said = capsys.readouterr()
        assert words in said.err and said.err.count("--resume:") == 1 and "note:" not in said.out


def test_a_resume_trains_against_the_checkpoints_opponents_unless_told_otherwise(
    run_2p: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A resume of a run against frozen opponents, without --opponents, went on in self-play
    and said nothing (review of the RLlib resume)."""
    resume = [*_without(SMOKE, "--iterations", "--net"), *VS_RANDOM, "--num-env-runners", "0"]
    frozen = tmp_path / "frozen"  # self-play, then against greedy
    assert train([*resume, "--iterations", "3", "--opponents", "greedy", "--resume", str(run_2p / "last"),
                  "--out", str(frozen)]) == 0  # fmt: skip
    said = capsys.readouterr().out
    assert "(vs frozen greedy)" in said
    assert "note: the checkpoint's run trained shared-policy self-play; this run trains vs frozen greedy" in said
    meta = json.loads((frozen / "last" / "umbrella.json").read_text(encoding="utf-8"))
    assert meta["opponents"] == ["greedy"]
    on = tmp_path / "on"  # the checkpoint's opponents, unsaid
    assert train([*resume, "--iterations", "4", "--resume", str(frozen / "last"), "--out", str(on)]) == 0
    said = capsys.readouterr().out
    assert "(vs frozen greedy)" in said and "note: the checkpoint's run" not in said
    assert json.loads((on / "last" / "umbrella.json").read_text(encoding="utf-8"))["opponents"] == ["greedy"]
    back = tmp_path / "back"  # and back to self-play, said so
    assert train([*resume, "--iterations", "4", "--opponents", "self", "--resume", str(frozen / "last"),
                  "--out", str(back)]) == 0  # fmt: skip
    said = capsys.readouterr().out
    assert "(shared-policy self-play)" in said and "this run trains shared-policy self-play" in said
    assert json.loads((back / "last" / "umbrella.json").read_text(encoding="utf-8"))["opponents"] == []


def _recorded_saves(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """The (folder name, iteration) of every checkpoint rllib_train saves from now on."""
    from umbrella_env import rllib_train

    saved: list[tuple[str, int]] = []
    real = rllib_train.save_checkpoint

    def save(algo: Any, path: Path, meta: dict[str, Any]) -> None:
        saved.append((path.name, meta["iteration"]))
        real(algo, path, meta)

    monkeypatch.setattr(rllib_train, "save_checkpoint", save)
    return saved


def test_a_resume_keeps_the_best_measured_the_same_way_and_only_that(run_2p: Path, tmp_path: Path, capsys) -> None:
    """Review of the resume: best/ and the best metric carried over must hold against the new
    evaluations, and only when measured alike (an evaluation against another opponent could
    never replace a best against random)."""
    src = tmp_path / "src"
    shutil.copytree(run_2p, src)
    rows = _lines(src / "progress.jsonl")
    for row in rows:
        if row.get("eval"):
            row["metric"] = 1e9  # no new evaluation can beat it
    cut = '{"iteration": 3, "env_s'  # a line cut short by a kill
    (src / "progress.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows) + cut, encoding="utf-8")
    resume = [*_without(SMOKE, "--iterations", "--net"), *VS_RANDOM, "--iterations", "3", "--num-env-runners", "0"]
    assert train([*resume, "--resume", str(src / "last"), "--out", str(tmp_path / "same")]) == 0
    summary = json.loads((tmp_path / "same" / "summary.json").read_text(encoding="utf-8"))
    assert summary["best_eval"]["metric"] == 1e9 and summary["best_eval"]["iteration"] == 2
    assert json.loads((tmp_path / "same" / "best" / "umbrella.json").read_text(encoding="utf-8"))["iteration"] == 2
    capsys.readouterr()
    other = [*_without(resume, "--eval-games"), "--eval-games", "3"]
    assert train([*other, "--resume", str(src / "last"), "--out", str(tmp_path / "other")]) == 0
    assert "were measured another way" in capsys.readouterr().out
    summary = json.loads((tmp_path / "other" / "summary.json").read_text(encoding="utf-8"))
    assert summary["best_eval"]["iteration"] == 3 and summary["best_eval"]["metric"] < 1e9


def test_a_resume_from_best_in_its_own_folder_first_writes_last_anew(
    run_2p: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """last/ of the abandoned run stayed beside the cut progress.jsonl until the first save:
    a kill then left a resume of last/ mixing two runs."""
    own = tmp_path / "own"
    shutil.copytree(run_2p, own)
    first = json.loads((own / "best" / "umbrella.json").read_text(encoding="utf-8"))["iteration"]
    saved = _recorded_saves(monkeypatch)
    argv = [
        *_without(SMOKE, "--iterations", "--net"),
        *VS_RANDOM,
        "--num-env-runners",
        "0",
        "--checkpoint-every",
        "100",
    ]
    assert train([*argv, "--iterations", str(first + 2), "--resume", str(own / "best"), "--out", str(own)]) == 0
    assert saved == [("last", first), ("last", first + 1), ("last", first + 2)]  # anew, --checkpoint-every, final


def test_a_resume_is_refused_before_ray_starts_for_what_it_cannot_continue(
    run_2p: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    last = str(run_2p / "last")
    base = [*_without(SMOKE, "--iterations", "--net"), "--num-env-runners", "0"]
    other = tmp_path / "other"
    shutil.copytree(run_2p / "last", other)
    meta = json.loads((other / "umbrella.json").read_text(encoding="utf-8"))
    (other / "umbrella.json").write_text(json.dumps({**meta, "trainer": "something else"}), encoding="utf-8")
    broken = tmp_path / "broken"
    shutil.copytree(run_2p, broken)
    (broken / "progress.jsonl").write_text('{"iteration": "x"}\n{"iteration": 1}\n', encoding="utf-8")
    damaged = {}
    for name, change in (
        ("net", {"net": 64}),
        ("netsize", {"net": [10**6]}),
        ("features", {"features": "nope"}),
        ("opponents", {"opponents": "greedy"}),
        ("nobody", {"opponents": ["nobody"]}),
    ):
        damaged[name] = tmp_path / name
        shutil.copytree(run_2p / "last", damaged[name])
        (damaged[name] / "umbrella.json").write_text(json.dumps({**meta, **change}), encoding="utf-8")
    from umbrella_env import rllib_train

    def no_ray(*args: Any, **kwargs: Any) -> Any:  # the module's Ray is up: a session started fails the test
        raise AssertionError("Ray started before the refusal")

    monkeypatch.setattr(rllib_train, "ray_session", no_ray)
    inside = [*base, "--iterations", "3", "--resume", last, "--out", str(run_2p / "last" / "run")]
    assert train(inside) == 2 and "is inside the checkpoint --resume reads" in capsys.readouterr().err
    for argv, words in (
        ([*base, "--iterations", "2", "--resume", last], "has trained"),
        ([*base, "--iterations", "3", "--net", "32", "--resume", last], "--net 32 differs from the checkpoint's (64)"),
        ([*base, "--iterations", "3", "--players", "3", "--resume", last], "was trained for num_players=2"),
        (
            [*base, "--iterations", "3", "--pretrain", "heuristic", "--resume", last],
            "--pretrain: the checkpoint's run cloned no teacher",
        ),
        ([*base, "--iterations", "3", "--resume", str(other)], "was not written by python -m umbrella_env.rllib_train"),
        ([*base, "--iterations", "3", "--resume", str(broken / "last")], "line 1 of the run's progress"),
        (
            [*base, "--iterations", "3", "--resume", str(damaged["net"])],
            "its net must be a list of layer sizes, got 64",
        ),
        ([*base, "--iterations", "3", "--resume", str(damaged["netsize"])], "its net layer sizes must be from 1 to"),
        (
            [*base, "--iterations", "3", "--resume", str(damaged["features"])],
            "its features must be one of figure, none",
        ),
        ([*base, "--iterations", "3", "--resume", str(tmp_path / "none")], "--resume: RLlib checkpoint"),
        (
            [*base, "--iterations", "3", "--resume", str(damaged["opponents"])],
            "its opponents must be a list of agent specs, got 'greedy'",
        ),
        (
            [*base, "--iterations", "3", "--resume", str(damaged["nobody"])],
            "the checkpoint's run trained against 'nobody', which cannot be built here",
        ),
        ([*base, "--iterations", "3", "--opponents", "self", "greedy", "--resume", last], "stands alone"),
    ):
        out = tmp_path / "out"
        assert train([*argv, "--out", str(out)]) == 2, argv
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err, err
        assert not out.exists()  # refused before anything is written


def test_checkpoint_every_writes_last_between_the_evaluations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    saved = _recorded_saves(monkeypatch)
    out = tmp_path / "c"
    assert train([*SMOKE, *VS_RANDOM, "--num-env-runners", "0", "--checkpoint-every", "100", "--out", str(out)]) == 0
    assert saved == [("last", 1), ("last", 2)]  # the checkpoint after iteration 1, then the final evaluation's
    said = capsys.readouterr().out
    lines = [line for line in said.splitlines() if line.startswith(("iter", "[checkpoint", "[eval"))]
    assert [line.split()[0] for line in lines] == ["iter", "[checkpoint", "iter", "[eval"]  # none before the final eval


def test_env_runners_play_different_deals() -> None:
    # RLlib seeds sub-env j of runner w with seed + w + j: runner 1's env 1 and runner 2's env 0
    # both get seed + 2, and used to play the same deals.
    from ray.rllib.env.env_context import EnvContext

    def first_deal(worker: int, seed: int) -> np.ndarray:
        env = TurnBasedEnv(EnvContext({"num_players": 2}, worker_index=worker))
        obs, _ = env.reset(seed=seed)
        return next(iter(obs.values()))[OBS_KEY]

    assert not np.array_equal(first_deal(1, 2), first_deal(2, 2))
    assert np.array_equal(first_deal(1, 2), first_deal(1, 2))
    assert np.array_equal(
        first_deal(0, 7), next(iter(TurnBasedEnv({"num_players": 2}).reset(seed=7)[0].values()))[OBS_KEY]
    )


# --------------------------------------------------------------------------- bad input
def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_bad_ray_options_are_refused_with_a_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "never"
    assert train(["--num-env-runners", "-1", "--out", str(out)]) == 2
    assert "--num-env-runners must be 0" in capsys.readouterr().err
    assert train(["--num-env-runners", "3", "--out", str(out)]) == 2
    assert "needs 3 CPUs (one per env runner), the Ray cluster has 2" in capsys.readouterr().err
    for argv, message in [
        (["--timesteps", "nan"], "--timesteps must be a number in [1, 1000000000000], got nan"),
        (["--eval-every", "inf"], "--eval-every must be a number in [1, 1000000000000], got inf"),
        (["--timesteps", "1e99"], "--timesteps must be a number in [1, 1000000000000], got 1e+99"),  # trained forever
        (["--ent-coef", "nan"], "--ent-coef must be a finite number >= 0, got nan"),
        (["--shaping", "-1"], "--shaping must be a number in [0, 1], got -1.0"),
        (["--shaping", "1.5"], "--shaping must be a number in [0, 1], got 1.5"),  # the returns overflowed
        (["--learning-rate", "2"], "--learning-rate must be a number in (0, 1], got 2.0"),
        (["--pretrain", "heuristic", "--pretrain-lr", "1e30"], "--pretrain-lr must be a number in (0, 1], got 1e+30"),
        (
            ["--seed", str(2**32)],
            "argument --seed: expected an integer from 0 to 2,147,483,647 (RLlib adds the env runner's index)",
        ),
        (["--players", "1", "--eval-opponent", "greedy"], "--eval-opponent: for 2-4 players"),
        # they were ignored (too many env runners: the old code stopped at the CPU check, not training for ever)
        (["--workers", "4", "--pretrain-games", "9", "--num-env-runners", "3"], "--pretrain-games, --workers: for the"),
    ]:
        assert train([*argv, "--out", str(out)]) == 2, argv
        assert message in capsys.readouterr().err, argv
    address = f"127.0.0.1:{_closed_port()}"
    t0 = time.perf_counter()
    assert train(["--address", address, "--out", str(out)]) == 2
    assert f"no Ray cluster at --address {address}" in capsys.readouterr().err
    with pytest.raises(EvaluationError, match=f"no Ray cluster at --address {address}"):
        run_tournament(["random", "greedy"], 2, games=2, backend="ray", address=address)
    assert time.perf_counter() - t0 < 30
    assert train(["--address", "not an address", "--out", str(out)]) == 2
    assert "--address must be HOST:PORT" in capsys.readouterr().err
    with pytest.raises(EvaluationError, match="--address is the Ray cluster of --backend ray"):
        run_tournament(["random", "greedy"], 2, games=2, address=address)
    assert not out.exists()


def test_the_masking_module_refuses_an_observation_without_a_mask() -> None:
    from gymnasium import spaces

    with pytest.raises(ValueError, match="keys 'observations' and 'action_mask'"):
        MaskedPPOModule(observation_space=spaces.Box(0, 1, (4,)), action_space=spaces.Discrete(3), model_config={})


@pytest.mark.parametrize("observations", [spaces.MultiBinary(899), spaces.Box(0, 1, (1, 899)), spaces.Discrete(3)])
def test_the_masking_module_refuses_observations_that_are_not_a_flat_box(observations) -> None:
    # a Discrete one raised an IndexError, a Box of shape (1, 899) built a network of one input
    space = spaces.Dict({OBS_KEY: observations, MASK_KEY: spaces.Box(0, 1, (3,))})
    with pytest.raises(ValueError) as info:
        MaskedPPOModule(observation_space=space, action_space=spaces.Discrete(3), model_config={})
    assert str(info.value) == f"MaskedPPOModule needs a one-dimensional Box 'observations' space, got {observations}"


@pytest.mark.parametrize("extra", [["--learning-rate", "0.002"], ["--pretrain", "heuristic", "--pretrain-games", "4",
                                   "--workers", "1", "--pretrain-lr", "0.002"]])  # fmt: skip
def test_a_diverging_run_stops_in_one_line_naming_the_option(
    extra: list[str], tmp_path: Path, diverge: Callable[..., None], capsys: pytest.CaptureFixture[str]
) -> None:
    # it used to end in a dead env runner's "probability tensor contains either inf, nan" after
    # an update to NaN weights, or to clone the teacher into NaN weights and train on
    diverge()  # the local learner's Adam (and the cloning's): NaN weights after the first step
    out = tmp_path / "run"
    argv = [*SMOKE, *VS_RANDOM, "--players", "2", "--num-env-runners", "0", *extra, "--out", str(out)]
    assert train(argv) == 1
    err = capsys.readouterr().err
    option = "--pretrain-lr" if "--pretrain" in extra else "--learning-rate"
    stage = "behaviour cloning" if "--pretrain" in extra else "the PPO update of iteration 1"
    assert f"error: training diverged in {stage}: " in err and f"lower {option} (now 0.002)" in err
    assert "Traceback" not in err and not out.exists()


@pytest.mark.parametrize("runners", [0, 1])
def test_outputs_that_explode_in_the_env_runners_are_a_divergence(
    runners: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    diverge: Callable[..., None],
    capsys: pytest.CaptureFixture[str],
) -> None:
    # weights finite but huge after an update pass the checks of the update; the env runners'
    # sampler then refuses their outputs: a divergence of that update, not a failing env
    from umbrella_env import rllib_train

    diverge(to=lambda w: w * 1e30)
    monkeypatch.setattr(rllib_train, "check_update", lambda *args: None)  # its losses were computed before
    out = tmp_path / "run"
    argv = [*SMOKE, "--players", "1", "--num-env-runners", str(runners), "--learning-rate", "0.002", "--out", str(out)]
    logging.disable(logging.DEBUG)  # the caller's setting, which the failing run put back to NOTSET
    try:
        assert train(argv) == 1
        assert logging.root.manager.disable == logging.DEBUG
    finally:
        logging.disable(logging.NOTSET)
    err = capsys.readouterr().err
    assert "error: training diverged in the PPO update of iteration 1: the policy's outputs are not finite" in err
    assert "iteration 2 could not sample actions from them" in err and "lower --learning-rate (now 0.002)" in err


def test_an_update_whose_outputs_explode_stops_before_its_evaluation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, diverge: Callable[..., None], capsys: pytest.CaptureFixture[str]
) -> None:
    # finite but huge weights passed the checks of the update; an evaluation due after it
    # saved them as last/ (and best/), and only the next iteration's env runners failed
    from umbrella_env import rllib_train

    diverge(to=lambda w: torch.where(w >= 0, 1e30, -1e30))  # finite weights, outputs that overflow
    monkeypatch.setattr(rllib_train, "check_losses", lambda *args, **kwargs: None)  # the losses before them
    out = tmp_path / "run"
    argv = [*SMOKE, "--players", "1", "--num-env-runners", "0", "--eval-every", "1", "--learning-rate", "0.002",
            "--out", str(out)]  # fmt: skip
    assert train(argv) == 1
    err = capsys.readouterr().err
    assert "error: training diverged in the PPO update of iteration 1: the policy's outputs are not finite" in err
    assert "could not sample" not in err and not out.exists()


def test_a_resume_seeds_rllib_anew_so_it_does_not_deal_the_first_sessions_games_again() -> None:
    """RLlib seeds its env runners from --seed alone: a resumed session with the same seed
    dealt the first session's games again. A resume's seed is derived with the checkpoint's
    step count, as train.py's."""
    import argparse

    from umbrella_env import rllib_train
    from umbrella_env.training.options import resume_seed

    args = argparse.Namespace(seed=0)
    assert rllib_train.run_seed(args, None) == 0
    resume = rllib_train.Resume(Path("x"), {"timesteps": 800, "iteration": 2}, [])
    assert rllib_train.run_seed(args, resume) == resume_seed(0, 800) != 0
    parsed = rllib_train.build_parser().parse_args([*SMOKE, "--players", "2"])
    assert rllib_train.build_config(parsed, 123).seed == 123 and rllib_train.build_config(parsed).seed == 0


def test_the_solo_env_passes_gymnasiums_own_checker() -> None:
    """MaskedSoloEnv.reset never seeded np_random, and gymnasium's check_env failed on it."""
    from gymnasium.utils.env_checker import check_env

    check_env(MaskedSoloEnv({"num_players": 1}), skip_render_check=True)


def test_the_benchmark_prints_its_rows_without_rllibs_notices(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """rllib_bench printed RLlib's "You are running PPO on the new API stack!" warning above
    its rows (RLlib audit, 2026-12-07): rllib_train silenced it, the benchmark did not."""
    from umbrella_env import rllib_bench

    assert rllib_bench.main(["--runners", "0", "--steps", "400", "--bench-iterations", "1", "--train-batch", "400",
                             "--batch-size", "200", "--max-turns", "40"]) == 0  # fmt: skip
    out, err = capfd.readouterr()
    assert "sampling env steps/s" in out and '"env_runners": 0' in out
    assert "new API stack" not in out + err + caplog.text  # pytest's logging plugin takes the records
