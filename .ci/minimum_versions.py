"""Print the package's base dependencies pinned to their declared minimums (``numpy>=1.24``
-> ``numpy==1.24``), for the CI stage that tests the envs on the oldest versions pyproject.toml
admits.  Dependencies with an environment marker (``tomli`` before Python 3.11) are left out."""

import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

pyproject = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
pins = []
for requirement in pyproject["project"]["dependencies"]:
    if ";" in requirement:
        continue
    match = re.fullmatch(r"([A-Za-z0-9_.\-\[\]]+)>=([0-9][0-9A-Za-z.]*)", requirement.replace(" ", ""))
    if match is None:
        sys.exit(f"cannot pin {requirement!r} to its minimum: expected NAME>=VERSION")
    pins.append(f"{match[1]}=={match[2]}")
print(" ".join(pins))
