from __future__ import annotations

import importlib.util

import pytest

from tests.engines import ADAPTERS

#: tests/test_ray.py (marked ``ray``) needs the ray extra: it is collected only where Ray is
#: installed (CI runs it in the Ray environment with ``-m ray``) and, without Ray, not
#: collected at all, rather than skipped: the header of the run says so.
RAY_INSTALLED = importlib.util.find_spec("ray") is not None
collect_ignore = [] if RAY_INSTALLED else ["test_ray.py"]


def pytest_report_header(config: pytest.Config) -> str | None:
    if RAY_INSTALLED:
        return None
    return 'tests/test_ray.py not collected: no ray extra (pip install -c constraints.txt -e ".[ray]")'


@pytest.fixture(params=sorted(ADAPTERS))
def engine(request: pytest.FixtureRequest):
    """Each rules engine in turn (reference, batched and single) behind one interface."""
    return ADAPTERS[request.param]
