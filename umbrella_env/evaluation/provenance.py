"""What a report records of where its numbers came from, so that a figure can be traced and
replayed: this umbrella-env's version (and the clone's commit, with whether its tracked files
were modified, when it runs from a clone), the Python and package versions (the README shows
NumPy builds changing a heuristic's games), and the SHA-256 of every checkpoint that played
(a shipped network re-trained under the same name is another file).  ``summary.json`` holds
it as ``provenance``; ``report.md`` shows it in two lines."""

from __future__ import annotations

import importlib.metadata
import platform
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.checkpoint import file_sha256
from agents.registry import AZ_NAMES, NET_PREFIX, net_shipped_name
from agents.rllib_agent import PREFIX as RLLIB_PREFIX
from umbrella_env import __version__
from umbrella_env.cli_args import source_tree
from umbrella_env.match import is_checkpoint

#: The distributions whose versions a report records (None: not installed).
PACKAGES = (
    "numpy",
    "gymnasium",
    "pettingzoo",
    "openskill",
    "torch",
    "stable-baselines3",
    "sb3-contrib",
    "onnxruntime",
    "ray",
)


def package_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def source_commit(tree: Path | None) -> dict[str, Any] | None:
    """``{"commit": sha, "modified": bool}`` of the clone ``tree`` (None for an installed
    package, or where git cannot say)."""
    if tree is None or not (tree / ".git").exists():
        return None
    try:
        head = _git(tree, "rev-parse", "HEAD")
        changed = _git(tree, "status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": head, "modified": bool(changed)}


def _git(tree: Path, *args: str) -> str:
    # --no-optional-locks: `git status` would take the index lock to refresh it, and a git
    # command of the user's in that clone at the same moment would fail
    command = ["git", "--no-optional-locks", "-C", str(tree), *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=20, check=True)
    return done.stdout.strip()


def checkpoint_file(spec: str) -> Path | None:
    """The file an agent spec loads (a ``.zip``, ``.onnx`` or ``.pt``, a shipped network by
    name), or None (a built-in agent, a factory, an RLlib folder)."""
    name = net_shipped_name(spec) or spec.strip().lower()
    if name in AZ_NAMES:
        try:  # the shipped networks' table lives with their agent, which needs torch
            from agents.az.agent import model_file
        except ImportError:
            return None
        return model_file(name)
    if spec.startswith(RLLIB_PREFIX) or not is_checkpoint(spec):
        return None
    path = Path(spec.removeprefix(NET_PREFIX))
    return path if path.is_file() else None


def checkpoint_hashes(specs: Sequence[str], labels: Sequence[str]) -> dict[str, dict[str, str]]:
    """``{label: {"file", "sha256"}}`` of the agents ``specs`` that load a file: taken when a
    tournament has built its agents, before its games (a file replaced later, by a training
    run writing its best.zip, is not the one recorded)."""
    checkpoints: dict[str, dict[str, str]] = {}
    for spec, label in zip(specs, labels):
        path = checkpoint_file(spec)
        if path is not None:
            checkpoints[label] = {"file": str(path), "sha256": file_sha256(path)}
    return checkpoints


def provenance(checkpoints: dict[str, dict[str, str]]) -> dict[str, Any]:
    """The ``provenance`` of a report whose agents loaded ``checkpoints``
    (:func:`checkpoint_hashes`)."""
    return {
        "umbrella_env": __version__,
        "source": source_commit(source_tree()),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": package_versions(),
        "checkpoints": checkpoints,
    }


def provenance_lines(record: dict[str, Any]) -> list[str]:
    """The two lines of ``report.md`` (markdown list items) that show ``record``."""
    source = record.get("source")
    where = ""
    if source:
        where = f" (commit {source['commit'][:12]}{', tracked files modified' if source['modified'] else ''})"
    packages = ", ".join(f"{name} {version}" for name, version in record["packages"].items() if version)
    lines = [f"- umbrella-env {record['umbrella_env']}{where}; Python {record['python']}; {packages}"]
    if record["checkpoints"]:
        files = "; ".join(f"{label} `{c['sha256'][:16]}`" for label, c in record["checkpoints"].items())
        lines.append(f"- checkpoints (SHA-256, first 16 hex digits): {files}")
    return lines
