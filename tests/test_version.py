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


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.match(r"\d+(\.\d+)*", version).group().split("."))  # type: ignore[union-attr]


def test_citation_and_changelog_name_the_version() -> None:
    # A release is the newest CHANGELOG.md section; between releases the package is the next
    # one's .devN, so files written by it (their sidecars' umbrella_env_version) are told
    # apart from the release's, and the changes since are under [Unreleased].
    version = umbrella_env.__version__
    citation = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    cited = re.findall(r"(?m)^version:\s*['\"]?([^'\"\s]+)", citation)
    assert cited == [version], f"CITATION.cff version {cited}, package {version}"
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    sections = re.findall(r"(?m)^## \[([^\]]*)\]", changelog)
    released = [name for name in sections if name[:1].isdigit()]
    assert released, "CHANGELOG.md names no release"
    if ".dev" in version:
        assert sections[0] == "Unreleased", f"a development version ({version}) needs an [Unreleased] section first"
        assert _release(version) > _release(released[0]), (
            f"the development version {version} must come after the newest release, {released[0]}"
        )
    else:
        assert released[0] == version, f"the newest CHANGELOG.md release is {released[0]}, the package is {version}"
