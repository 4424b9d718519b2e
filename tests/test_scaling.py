"""Scaling out, the parts that need no Ray: the PettingZoo Parallel env, and the messages
of the Ray commands when the ray extra is missing (tests/test_ray.py has the rest)."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test

import umbrella_env
from umbrella_env.core.errors import ActionError
from umbrella_env.envs.parallel import parallel_env

REPO = Path(__file__).resolve().parents[1]
RAY_INSTALL = 'pip install -c constraints.txt -e ".[ray]"'


@pytest.mark.parametrize("players", [2, 3, 4])
def test_parallel_env_passes_the_parallel_api_test(players: int) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the API test reports problems as warnings: none allowed
        parallel_api_test(parallel_env(num_players=players, plate_level=players), num_cycles=4000)


def test_parallel_env_is_exported_and_plays_the_aec_game_to_its_end() -> None:
    env = umbrella_env.parallel_env(num_players=2)
    aec = umbrella_env.env(num_players=2)
    observations, infos = env.reset(seed=7)
    aec.reset(seed=7)
    rng = np.random.default_rng(7)
    steps = 0
    while env.agents:
        mover = aec.agent_selection
        assert {info["active_agent"] for info in infos.values()} == {mover}  # from reset on
        movers = [a for a, o in observations.items() if o["action_mask"].any()]
        assert movers == [mover]  # only the agent to move has legal actions
        np.testing.assert_array_equal(observations[mover]["observation"], aec.observe(mover)["observation"])
        action = int(rng.choice(np.flatnonzero(observations[mover]["action_mask"])))
        actions = {a: (action if a == mover else 0) for a in env.agents}  # the others' actions are ignored
        observations, rewards, terminations, truncations, infos = env.step(actions)
        aec.step(action)
        steps += 1
    assert terminations == {"player_0": True, "player_1": True} and not any(truncations.values())
    assert sorted(rewards.values()) in ([-1.0, 1.0], [0.5, 0.5])  # the loser's -1 arrives with the last step
    assert rewards == aec.rewards and steps > 100


def test_parallel_env_refuses_a_step_without_the_movers_action_and_changes_nothing() -> None:
    env = umbrella_env.parallel_env(num_players=2)
    observations, infos = env.reset(seed=3)
    mover = infos["player_0"]["active_agent"]
    other = next(a for a in env.agents if a != mover)
    before = env.aec_env.unwrapped.get_state()
    with pytest.raises(ActionError, match=f"no action for '{mover}', the agent to move"):
        env.step({other: 0})
    with pytest.raises(ActionError, match="actions must be a dict of agent -> action, got list"):
        env.step([0, 0])
    assert env.aec_env.unwrapped.get_state() == before


_WITHOUT_RAY = """
import json, sys, contextlib, io
sys.modules["ray"] = None  # as if the ray extra were not installed
out = {}
from umbrella_env.rllib_train import main as train
err = io.StringIO()
with contextlib.redirect_stderr(err):
    out["train"] = [train(["--iterations", "1"]), err.getvalue()]
from umbrella_env.evaluation.cli import main as evaluate
err = io.StringIO()
with contextlib.redirect_stderr(err):
    out["evaluate"] = [evaluate(["--agents", "random", "greedy", "--games", "2", "--backend", "ray",
                                 "--out", sys.argv[1] + "/eval", "--no-progress"]), err.getvalue()]
from agents import make_agent
try:
    make_agent("rllib:" + sys.argv[1] + "/ckpt")
    out["agent"] = "loaded"
except ValueError as exc:
    out["agent"] = str(exc)
print(json.dumps(out))
"""


def test_without_the_ray_extra_every_ray_entry_point_names_the_install_command(tmp_path: Path) -> None:
    pytest.importorskip("openskill")  # evaluate.py itself needs the eval extra
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    meta = {"num_players": 2, "plate_level": 1, "obs_size": 899, "num_actions": 968, "module_id": "shared"}
    (ckpt / "umbrella.json").write_text(json.dumps(meta), encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", _WITHOUT_RAY, str(tmp_path)], cwd=REPO, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    for command in ("train", "evaluate"):
        status, message = out[command]
        assert status == 2 and RAY_INSTALL in message, (command, message)
    assert "python -m umbrella_env.rllib_train needs the ray extra" in out["train"][1]
    assert "evaluate.py --backend ray needs the ray extra" in out["evaluate"][1]
    assert RAY_INSTALL in out["agent"] and "RLlib checkpoint" in out["agent"]
    assert not (tmp_path / "eval").exists() or not any((tmp_path / "eval").iterdir())


def test_parallel_env_steps_return_infos_of_their_own() -> None:
    """A step's infos keep the mover they named: PettingZoo's wrapper handed out (and wrote
    active_agent into) the AEC env's info dicts, so later steps rewrote earlier infos."""
    env = umbrella_env.parallel_env(num_players=2)
    observations, infos = env.reset(seed=0)
    kept = []
    for _ in range(6):
        mover = infos["player_0"]["active_agent"]
        action = int(np.flatnonzero(observations[mover]["action_mask"])[0])
        observations, _, _, _, infos = env.step({mover: action})
        kept.append((infos, infos["player_0"]["active_agent"]))
    assert [i["player_0"]["active_agent"] for i, _ in kept] == [named for _, named in kept]
    infos["player_1"]["mine"] = 1
    assert all("mine" not in i and "active_agent" not in i for i in env.unwrapped.infos.values())
