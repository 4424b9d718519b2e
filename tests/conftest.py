from __future__ import annotations

import importlib.util
import signal
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.engines import ADAPTERS

#: tests/test_ray.py (marked ``ray``) needs the ray extra: it is collected only where Ray is
#: installed (CI runs it in the Ray environment with ``-m ray``) and, without Ray, not
#: collected at all, rather than skipped: the header of the run says so.
RAY_INSTALLED = importlib.util.find_spec("ray") is not None
#: tests/test_openspiel.py (marked ``openspiel``) likewise needs the openspiel extra.
OPENSPIEL_INSTALLED = importlib.util.find_spec("pyspiel") is not None
collect_ignore = ([] if RAY_INSTALLED else ["test_ray.py"]) + ([] if OPENSPIEL_INSTALLED else ["test_openspiel.py"])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``posix`` are skipped on Windows, which has no SIGKILL or process groups,
    whose ``os.kill`` ends a process rather than delivering SIGTERM or SIGINT to it, and
    where making a symbolic link takes a privilege."""
    if sys.platform != "win32":
        return
    skip = pytest.mark.skip(reason="POSIX only: signals Windows does not deliver, or symbolic links")
    for item in items:
        if "posix" in item.keywords:
            item.add_marker(skip)


def pytest_report_header(config: pytest.Config) -> list[str]:
    missing = [("ray", "test_ray.py")] if not RAY_INSTALLED else []
    missing += [("openspiel", "test_openspiel.py")] if not OPENSPIEL_INSTALLED else []
    return [
        f'tests/{module} not collected: no {extra} extra (pip install -c constraints.txt -e ".[{extra}]")'
        for extra, module in missing
    ]


@pytest.fixture(params=sorted(ADAPTERS))
def engine(request: pytest.FixtureRequest):
    """Each rules engine in turn (reference, batched and single) behind one interface."""
    return ADAPTERS[request.param]


@pytest.fixture(autouse=True, scope="session")
def sb3_log_folder(tmp_path_factory: pytest.TempPathFactory):
    """Tests that build SB3 models themselves log into the session's temporary folder: SB3's
    default logger makes an ``SB3-<time>`` folder in /tmp at every ``learn`` (the project's
    trainers log nowhere without TensorBoard, ``training.ppo.with_logger``)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3")))
        yield


@pytest.fixture
def ctrl_c() -> Iterator[None]:
    """Ctrl-C (SIGINT) raises KeyboardInterrupt during the test, as in a terminal: a job that a
    non-interactive shell starts in the background (``pytest ... &`` in a script, some CI
    runners) inherits SIGINT ignored, and a test that sends itself SIGINT saw nothing."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.fixture
def diverge(monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """``diverge(lr=None, to=w -> w * nan)``: make torch's Adam steps (only those at learning
    rate ``lr`` when given) leave every weight they update at ``to(weight)``, for this test: a
    training run that diverges with options in their ranges (a learning rate large enough to
    diverge on its own is refused up front)."""
    import torch

    step = torch.optim.Adam.step

    def apply(*, lr: float | None = None, to: Callable[[Any], Any] = lambda w: w * float("nan")) -> None:
        def diverging(self: Any, *args: Any, **kwargs: Any) -> Any:
            out = step(self, *args, **kwargs)
            with torch.no_grad():
                for group in self.param_groups:
                    if lr is None or group["lr"] == lr:
                        for w in group["params"]:
                            w.copy_(to(w))
            return out

        monkeypatch.setattr(torch.optim.Adam, "step", diverging)

    return apply
