from __future__ import annotations

import pytest

from tests.engines import ADAPTERS


@pytest.fixture(params=sorted(ADAPTERS))
def engine(request: pytest.FixtureRequest):
    """Each rules engine in turn (reference and batched) behind one interface."""
    return ADAPTERS[request.param]
