"""The package structure is the layering: every import points downward.

    0  umbrella_env.core                      the rules (engines, observation, state I/O, rendering)
    1  umbrella_env, umbrella_env.envs        PettingZoo / Gymnasium / vector adapters
    2  umbrella_env.tools, umbrella_env.demo  development tools over the environment library
    3  agents                                 agents, importing only layers 0-1
    4  umbrella_env.match, .parallel, .training, .evaluation, .play, .export, .ray_cluster,
       .rllib_env, .rllib_train, .rllib_bench, .openspiel_bots

Two checks: a static one over every ``import`` statement of every module, function-local
imports included (so no upward import can hide inside a function), and a dynamic one that
imports each lower layer in a fresh interpreter and lists what it loaded.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

#: (layer, module prefix), most specific prefix first.
LAYERS: list[tuple[int, str]] = [
    (0, "umbrella_env.core"),
    (1, "umbrella_env.envs"),
    (2, "umbrella_env.tools"),
    (2, "umbrella_env.demo"),
    (4, "umbrella_env.match"),
    (4, "umbrella_env.parallel"),
    (4, "umbrella_env.training"),
    (4, "umbrella_env.evaluation"),
    (4, "umbrella_env.play"),
    (4, "umbrella_env.export"),
    (4, "umbrella_env.scripts"),
    (4, "umbrella_env.ray_cluster"),
    (4, "umbrella_env.openspiel_bots"),
    (4, "umbrella_env.rllib_bench"),
    (4, "umbrella_env.rllib_env"),
    (4, "umbrella_env.rllib_train"),
    (1, "umbrella_env"),
    (3, "agents"),
]
NAMES = {0: "the rules core", 1: "the environment library", 2: "the dev tools", 3: "agents", 4: "the top layer"}


def layer_of(module: str) -> int | None:
    for layer, prefix in LAYERS:
        if module == prefix or module.startswith(prefix + "."):
            return layer
    return None


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path, here: str = "") -> list[tuple[int, str]]:
    """(line, module) of every import in the file, nested ones included; a relative one
    (``from ..training import x``) resolved from ``here``, the file's module name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join([*base, *([module] if module else [])])
            if not module:
                continue
            out.append((node.lineno, module))
            # "from umbrella_env import training" imports a subpackage
            out += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return out


def allowed(mine: int, theirs: int) -> bool:
    """Whether layer ``mine`` may import layer ``theirs``: downward, and agents (3) only the
    environment library (0-1), not the dev tools (2)."""
    return theirs <= mine and not (mine == 3 and theirs == 2)


SOURCES = sorted(p for d in ("umbrella_env", "agents") for p in (REPO / d).rglob("*.py"))


def test_the_layer_table_covers_every_module() -> None:
    assert SOURCES
    assert [str(p) for p in SOURCES if layer_of(module_name(p)) is None] == []


def test_every_import_points_downward() -> None:
    wrong = []
    for path in SOURCES:
        here = module_name(path)
        mine = layer_of(here)
        for line, target in imported_modules(path, here):
            theirs = layer_of(target)
            if theirs is not None and mine is not None and not allowed(mine, theirs):
                wrong.append(
                    f"{path.relative_to(REPO)}:{line}: {here} ({NAMES[mine]}) imports {target} ({NAMES[theirs]})"
                )
    assert wrong == []


def test_the_static_check_sees_a_function_local_upward_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from agents import make_agent\n    return make_agent\n", encoding="utf-8")
    assert (2, "agents") in imported_modules(bad)


def test_the_static_check_resolves_relative_imports_and_keeps_agents_off_the_tools(tmp_path: Path) -> None:
    """A relative import was skipped (``from ..training import options`` in the core passed),
    and agents could import the dev tools (layer 2), which the layer table forbids."""
    bad = tmp_path / "config.py"
    bad.write_text("def f():\n    from ..training import options\n    from . import engine\n", encoding="utf-8")
    found = imported_modules(bad, "umbrella_env.core.config")
    assert (2, "umbrella_env.training") in found and (2, "umbrella_env.training.options") in found
    assert (3, "umbrella_env.core.engine") in found
    pairs = {
        ("umbrella_env.core.config", "umbrella_env.training.options"): False,
        ("agents.greedy", "umbrella_env.tools.playthrough"): False,
        ("agents.greedy", "umbrella_env.envs.common"): True,
    }
    for (importer, imported), expected in pairs.items():
        mine, theirs = layer_of(importer), layer_of(imported)
        assert mine is not None and theirs is not None and allowed(mine, theirs) is expected


_PROBE = """
import importlib, json, pkgutil, sys
for name in {names!r}:
    module = importlib.import_module(name)
    for info in pkgutil.walk_packages(getattr(module, "__path__", []), name + "."):
        if not info.name.endswith("__main__") and info.name not in {skip!r}:
            importlib.import_module(info.name)
print(json.dumps(sorted(sys.modules)))
"""


def _loaded_by(names: list[str], skip: tuple[str, ...] = ()) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE.format(names=names, skip=set(skip))],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    ("names", "highest"),
    [
        (["umbrella_env.core", "umbrella_env.envs"], 1),
        (["agents.base", "agents.registry", "agents.common", "agents.greedy", "agents.heuristic", "agents.search"], 3),
    ],
    ids=["environment-library", "agents"],
)
def test_a_fresh_interpreter_loads_no_higher_layer(names: list[str], highest: int) -> None:
    # The SB3 VecEnv adapter subclasses SB3's VecEnv and the OpenSpiel adapter registers
    # pyspiel games: they need the train and openspiel extras by design (the static test
    # above still checks their imports; tests/test_openspiel.py imports the second).
    loaded = _loaded_by(names, skip=("umbrella_env.envs.sb3", "umbrella_env.envs.openspiel"))
    higher = [m for m in loaded if (layer := layer_of(m)) is not None and not allowed(highest, layer)]
    assert higher == []
    if highest < 3:  # the environment library needs no deep-learning stack either
        assert [m for m in loaded if m.split(".")[0] in ("torch", "stable_baselines3", "sb3_contrib")] == []
