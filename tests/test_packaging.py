"""What a user who installs the package (a wheel or an sdist, no clone) gets.

The wheel itself is built and tried from outside the tree by ``.ci/run`` (its packaging
stage); these tests check the parts that can be checked in place: the package data, the
install hints and the clone-only tools.
"""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest

from umbrella_env import cli_args
from umbrella_env.tools import gendocs, playthrough

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_package_data_lists_every_shipped_model_and_the_typing_markers() -> None:
    data = PYPROJECT["tool"]["setuptools"]["package-data"]
    for package, files in data.items():
        for name in files:
            assert (ROOT / package / name).is_file(), f"package-data names {package}/{name}, which does not exist"
    shipped = {f"models/{p.name}" for p in (ROOT / "agents" / "models").iterdir() if p.suffix in (".pt", ".json")}
    assert shipped and shipped <= set(data["agents"]), f"not in the wheel: {sorted(shipped - set(data['agents']))}"
    assert "py.typed" in data["agents"] and "py.typed" in data["umbrella_env"]


def test_the_declared_license_file_exists() -> None:
    assert PYPROJECT["project"]["license"] == "MIT"
    for name in PYPROJECT["project"]["license-files"]:
        assert "MIT License" in (ROOT / name).read_text(encoding="utf-8")


def test_the_source_tree_is_this_clone() -> None:
    assert cli_args.source_tree() == ROOT


def test_site_packages_with_another_projects_files_is_no_clone(tmp_path) -> None:
    """site-packages holds this wheel's agents/ and may hold another package's tests/ and
    pyproject.toml: only this project's own pyproject.toml makes a clone."""
    (tmp_path / "agents").mkdir()
    (tmp_path / "tests").mkdir()
    assert not cli_args.is_source_tree(tmp_path)  # no pyproject.toml
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "another"\n', encoding="utf-8")
    assert not cli_args.is_source_tree(tmp_path)
    (tmp_path / "pyproject.toml").write_text("not [toml", encoding="utf-8")
    assert not cli_args.is_source_tree(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "umbrella-env"\n', encoding="utf-8")
    assert cli_args.is_source_tree(tmp_path)
    (tmp_path / "tests").rmdir()
    assert not cli_args.is_source_tree(tmp_path)


def test_messages_name_the_clones_scripts_or_the_console_scripts(monkeypatch) -> None:
    assert cli_args.command_name("train.py", "umbrella-train") == "python train.py"
    monkeypatch.setattr(cli_args, "source_tree", lambda: None)
    assert cli_args.command_name("train.py", "umbrella-train") == "umbrella-train"


def test_install_hints_name_the_package_outside_a_clone(monkeypatch) -> None:
    """An installed user has neither constraints.txt nor a project in ".": the hint said
    ``pip install -c constraints.txt -e ".[train]"``, which fails there."""
    assert cli_args.install_hint("train") == 'pip install -c constraints.txt -e ".[train]"'
    monkeypatch.setattr(cli_args, "source_tree", lambda: None)
    assert cli_args.install_hint("train") == 'pip install "umbrella-env[train]"'
    assert cli_args.install_hint("eval") == 'pip install "umbrella-env[eval]"'


@pytest.mark.parametrize(
    ("module", "missing", "what", "extra"),
    [
        ("umbrella_env.envs.openspiel", "pyspiel", "umbrella_env.envs.openspiel", "openspiel"),
        # these three raised a bare ModuleNotFoundError
        ("umbrella_env.openspiel_bots", "pyspiel", "umbrella_env.openspiel_bots", "openspiel"),
        ("umbrella_env.envs.sb3", "stable_baselines3", "umbrella_env.envs.sb3 (UmbrellaSB3VecEnv)", "train"),
        ("umbrella_env.rllib_env", "ray", "umbrella_env.rllib_env", "ray"),
    ],
)
def test_an_adapter_without_its_extra_names_the_extra(monkeypatch, module, missing, what, extra) -> None:
    # the package unimportable (None in sys.modules), as where the extra is missing
    monkeypatch.setitem(sys.modules, missing, None)
    for name in [m for m in sys.modules if m.startswith(missing + ".")]:
        monkeypatch.delitem(sys.modules, name)  # a loaded submodule would be imported without its package
    monkeypatch.delitem(sys.modules, module, raising=False)
    with pytest.raises(cli_args.MissingExtra) as info:
        importlib.import_module(module)
    # (the module named is the first one the import missed: here a subpackage, where the
    # package is absent in a real installation)
    assert re.fullmatch(
        re.escape(f"{what} needs the {extra} extra ({missing}")
        + r"(\.\w+)* "
        + re.escape(f'is missing): pip install -c constraints.txt -e ".[{extra}]"'),
        str(info.value),
    ), str(info.value)
    assert isinstance(info.value, ImportError)  # `except ImportError` in a user's code still catches it
    assert extra in PYPROJECT["project"]["optional-dependencies"]


@pytest.mark.parametrize(
    ("tool", "argv", "words"),
    [
        (gendocs, [], "the generated pages are docs/ of a clone"),
        (gendocs, ["--check"], "the generated pages are docs/ of a clone"),
        (playthrough, ["--write"], "--write rewrites tests/golden/ of a clone"),
    ],
)
def test_clone_only_tools_refuse_an_installed_package(monkeypatch, capsys, tool, argv, words) -> None:
    """From a wheel, ``playthrough --write`` wrote into site-packages/tests and ``gendocs``
    ended in a traceback (site-packages/docs)."""
    monkeypatch.setattr(tool, "source_tree", lambda: None)
    stop_code = tool.main(argv)
    assert stop_code == 2
    assert words in capsys.readouterr().err
