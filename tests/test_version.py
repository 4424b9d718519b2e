"""The version is written once (umbrella_env/__init__.py) and every other place agrees with it."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

import umbrella_env

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def test_installed_distribution_has_the_package_version() -> None:
    installed = importlib.metadata.version("umbrella-env")
    assert umbrella_env.__version__ == installed, (
        f"umbrella_env.__version__ is {umbrella_env.__version__!r} but the installed distribution is {installed!r}: "
        "reinstall (pip install -e .) after changing the version"
    )


def test_version_is_pep440() -> None:
    # The public-version pattern of PEP 440 (release, pre, post, dev segments).
    pattern = r"\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?"
    assert re.fullmatch(pattern, umbrella_env.__version__), umbrella_env.__version__


def test_pyproject_reads_the_version_from_the_package() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"], "pyproject.toml must not write the version a second time"
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "umbrella_env.__version__"}


def test_version_is_a_literal_setuptools_can_read_without_importing() -> None:
    # setuptools evaluates `attr:` statically when the assignment is a plain literal;
    # otherwise it imports umbrella_env (and so gymnasium) inside the isolated build env.
    tree = ast.parse((ROOT / "umbrella_env" / "__init__.py").read_text(encoding="utf-8"))
    values = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__version__" for t in node.targets)
    ]
    assert len(values) == 1, f"expected one assignment to __version__, found {len(values)}"
    assert isinstance(values[0], ast.Constant) and values[0].value == umbrella_env.__version__


def test_citation_and_changelog_name_the_version() -> None:
    citation = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    cited = re.findall(r"(?m)^version:\s*['\"]?([^'\"\s]+)", citation)
    assert cited == [umbrella_env.__version__], f"CITATION.cff version {cited}, package {umbrella_env.__version__}"
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    released = re.findall(r"(?m)^## \[(\d[^\]]*)\]", changelog)
    assert released and released[0] == umbrella_env.__version__, (
        f"the newest CHANGELOG.md release is {released[:1]}, the package is {umbrella_env.__version__}"
    )
