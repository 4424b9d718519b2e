"""The package's type hints as a user's type checker reads them: ``mypy --strict`` accepts
``tests/typed_user.py`` (the public API as documented, the forms the runtime accepts), and
the hints are precise enough to reject a mistake (they are not Any)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytest.importorskip("mypy", reason="mypy comes with the dev extra")


def _mypy(tmp_path: Path, source: Path) -> subprocess.CompletedProcess[str]:
    # MYPYPATH: type checkers do not follow the import hook of an editable install (README)
    env = {**os.environ, "MYPYPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-error-summary",
           "--cache-dir", str(tmp_path / "cache"), str(source)]  # fmt: skip
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)


def test_documented_user_code_type_checks_strictly(tmp_path: Path) -> None:
    # list-only seeds, an int-only agent protocol and untyped dicts used to be rejected here
    wrong = tmp_path / "wrong.py"
    wrong.write_text(
        (ROOT / "tests" / "typed_user.py").read_text(encoding="utf-8")
        + "\n\ndef mistake() -> None:\n"
        + '    UmbrellaSoloVectorEnv(2).reset(seed="12")\n'  # a str is no seed sequence
        + "    umbrella_env.env(num_player=3)\n",  # env(**kwargs) took any keyword
        encoding="utf-8",
    )
    both = _mypy(tmp_path, wrong)
    assert both.returncode == 1, both.stdout + both.stderr
    lines = [line for line in both.stdout.splitlines() if ": error:" in line]
    assert len(lines) == 2, both.stdout
    assert 'Argument "seed" to "reset" of "UmbrellaSoloVectorEnv"' in lines[0], both.stdout
    assert 'Unexpected keyword argument "num_player" for "env"' in lines[1], both.stdout
