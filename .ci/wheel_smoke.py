"""Try the installed wheel as a user without the clone would (run from outside the tree).

Called by ``.ci/run`` in a fresh virtual environment holding the wheel with the ``eval``
extra and no torch: the package is imported from site-packages, its data files are there,
the envs and the agents without torch work, the console scripts run, and what needs the
clone or the train extra says so in one line.
"""

import importlib.resources
import subprocess
import sys
import tempfile
from pathlib import Path

import gymnasium as gym
import numpy as np
from pettingzoo.test import api_test

import agents
import umbrella_env
from agents import make_agent
from umbrella_env.core.config import GameConfig
from umbrella_env.match import play_game

TWO = GameConfig(num_players=2)


def run(*argv: str, code: int = 0) -> subprocess.CompletedProcess:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    if done.returncode != code:
        sys.exit(f"{' '.join(argv)}: exit {done.returncode}, expected {code}\n{done.stdout}\n{done.stderr}")
    return done


def main() -> None:
    here = Path(umbrella_env.__file__).resolve()
    if "site-packages" not in here.parts:
        sys.exit(f"umbrella_env imported from {here}, not from the installed wheel")
    models = importlib.resources.files(agents) / "models"
    for name in ("az-2p", "az-2p-net", "az-solo"):
        for suffix in (".pt", ".json"):
            if not (models / f"{name}{suffix}").is_file():
                sys.exit(f"the wheel has no agents/models/{name}{suffix}")
    for package in (umbrella_env, agents):
        if not (importlib.resources.files(package) / "py.typed").is_file():
            sys.exit(f"the wheel has no {package.__name__}/py.typed")

    api_test(umbrella_env.env(num_players=3), num_cycles=50)
    env = gym.make("umbrella_env/Solo-v0")
    _, info = env.reset(seed=0)
    env.step(int(np.flatnonzero(info["action_mask"])[0]))
    for name, options in (("random", {}), ("greedy", {}), ("heuristic", {}), ("search", {"simulations": 2})):
        result = play_game([make_agent(name, **options), make_agent("random")], TWO, seed=0)  # moves checked
        if result.turns < 1:
            sys.exit(f"agent {name!r}: no game played")
    try:
        make_agent("az-2p")
    except ValueError as exc:
        if 'pip install "umbrella-env[train]"' not in str(exc):
            sys.exit(f"make_agent('az-2p') without torch: {exc}")
    else:
        sys.exit("make_agent('az-2p') loaded without torch")

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp, "eval")
        run("umbrella-evaluate", "--agents", "random", "greedy", "--players", "2", "--games", "4", "--out", str(out))
        report = (out / "report.md").read_text(encoding="utf-8")
        if "umbrella-evaluate --agents random greedy" not in report:
            sys.exit("the report does not name the command that replays it (umbrella-evaluate)")
    for script in ("umbrella-play", "umbrella-evaluate"):
        run(script, "--help")
    # outside a clone the usage lines name the console scripts, not the clone's train.py/evaluate.py
    usage = run(sys.executable, "-m", "umbrella_env.evaluation", "--help").stdout
    if not usage.startswith("usage: umbrella-evaluate "):
        sys.exit("python -m umbrella_env.evaluation does not name umbrella-evaluate")
    refusal = run(sys.executable, "-m", "umbrella_env.training", "--help", code=2).stderr
    if not refusal.startswith("umbrella-train: error:"):
        sys.exit("python -m umbrella_env.training does not name umbrella-train")
    for script in ("umbrella-train", "umbrella-export"):
        if 'pip install "umbrella-env[train]"' not in run(script, "--help", code=2).stderr:
            sys.exit(f"{script} without torch does not name the package's train extra")
    refused = run(sys.executable, "-m", "umbrella_env.tools.gendocs", "--check", code=2)
    if "clone of the repository" not in refused.stderr:
        sys.exit(f"gendocs outside a clone: {refused.stderr}")
    print(f"wheel smoke test passed ({here.parent})")


if __name__ == "__main__":
    main()
