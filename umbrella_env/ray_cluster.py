"""Connecting the commands to Ray: a local instance, or an existing cluster (``--address``).

Used by ``python -m umbrella_env.rllib_train`` and ``evaluate.py --backend ray``
(docs/scaling.md).  Without ``--address`` a command starts a local Ray with the CPUs of
this machine and stops it at the end; with ``--address`` it joins the cluster there and
leaves it running.  Every failure is a :class:`RayUnavailable` whose message says what to
do: the ``ray`` extra missing, an address that is not ``host:port``, nothing answering at
the address (checked with a plain TCP connection first, within :data:`CONNECT_TIMEOUT`
seconds), or something answering that is not a Ray cluster (a trial connection in a child
process, stopped after :data:`JOIN_TIMEOUT` seconds: ``ray.init`` itself would keep
retrying for minutes).
"""

from __future__ import annotations

import faulthandler
import logging
import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from umbrella_env.cli_args import install_hint
from umbrella_env.parallel import local_cpus

#: The install command of the ray extra, in every message about it missing.
RAY_INSTALL = install_hint("ray")
#: Seconds to open a TCP connection to ``--address``, and to join the cluster there.
CONNECT_TIMEOUT = 5.0
JOIN_TIMEOUT = 60.0

_ADDRESS = re.compile(r"^(?:ray://)?(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.\-]+):(?P<port>\d{1,5})$")


class RayUnavailable(RuntimeError):
    """Ray cannot be used: the extra is missing or the cluster cannot be reached."""


def import_ray(what: str) -> Any:
    """The ``ray`` module, or :class:`RayUnavailable` naming the install command."""
    try:
        import ray
    except ImportError:
        raise RayUnavailable(f"{what} needs the ray extra (Ray and RLlib): {RAY_INSTALL}") from None
    return ray


def check_address(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of ``host:port`` or ``ray://host:port``; ``None`` for ``auto`` (the
    cluster started on this machine by ``ray start``); :class:`RayUnavailable` otherwise."""
    if address == "auto":
        return None
    m = _ADDRESS.match(address.strip()) if isinstance(address, str) else None
    if m is None or not 0 < int(m.group("port")) < 65536:
        raise RayUnavailable(
            f"--address must be HOST:PORT (the head node's GCS port, 6379 by default), ray://HOST:PORT "
            f"or auto, got {address!r}"
        )
    return m.group("host").strip("[]"), int(m.group("port"))


def probe(address: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """:class:`RayUnavailable` unless a TCP connection to ``address`` opens within ``timeout`` seconds."""
    target = check_address(address)
    if target is None:
        return
    try:
        socket.create_connection(target, timeout=timeout).close()
    except OSError as exc:
        reason = "timed out" if isinstance(exc, (socket.timeout, TimeoutError)) else (exc.strerror or str(exc))
        raise RayUnavailable(
            f"no Ray cluster at --address {address}: cannot connect ({reason}, {timeout:g} s limit). Start the "
            "head node there with `ray start --head`, or leave out --address to run on a local Ray"
        ) from None


_JOIN = "import ray; ray.init(address={!r}, log_to_driver=False); print(ray.cluster_resources().get('CPU', 0))"


def try_join(address: str, timeout: float = JOIN_TIMEOUT) -> float:
    """The cluster's CPU count, from a trial connection in a child process (killed after
    ``timeout`` seconds), or :class:`RayUnavailable`."""
    try:
        out = subprocess.run([sys.executable, "-c", _JOIN.format(address)], capture_output=True, text=True,
                             timeout=timeout)  # fmt: skip
    except subprocess.TimeoutExpired:
        raise RayUnavailable(
            f"--address {address} accepts connections but no Ray cluster answered within {timeout:g} s "
            "(is it the head node's GCS port, 6379 by default?)"
        ) from None
    lines = out.stdout.strip().splitlines()
    if out.returncode != 0 or not lines:
        last = (out.stderr.strip().splitlines() or ["no output"])[-1]
        hint = ""
        if "InvalidAuthToken" in out.stderr or "AuthenticationError" in out.stderr:
            hint = (
                "; the cluster wants its token (Ray's default): set RAY_AUTH_MODE=token and give this machine "
                "the head node's token (~/.ray/auth_token, or RAY_AUTH_TOKEN)"
            )
        raise RayUnavailable(f"cannot join the Ray cluster at --address {address}: {last}{hint}")
    return float(lines[-1])


@contextmanager
def ray_session(
    address: str | None = None, *, what: str = "this command", num_cpus: int | None = None
) -> Iterator[Any]:
    """Ray, connected: to the cluster at ``address``, else a local instance with
    ``num_cpus`` (default: :func:`local_cpus`) started here and shut down on exit.  When
    Ray is already initialised in this process (a test, a notebook), that instance is
    used and left running (``address`` is still checked to answer).  A Ray started here
    leaves the process as it found it: the SIGTERM handler (an ignored SIGTERM stays ignored
    throughout), environment variables, the ``ray`` logger's level, :mod:`faulthandler`
    and Python's random generator; Ray's own threads and its session folder stay."""
    ray = import_ray(what)
    if ray.is_initialized():
        if address is not None:
            probe(address)
        yield ray
        return
    main = threading.current_thread() is threading.main_thread()
    sigterm = signal.getsignal(signal.SIGTERM) if main else None
    saved = _ProcessState()
    try:
        if address is not None:
            probe(address)
            try_join(address)
            ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR)
        else:  # address "local": a new Ray here even when RAY_ADDRESS or a `ray start` cluster would be found
            ray.init(address="local", num_cpus=num_cpus or local_cpus(), include_dashboard=False,
                     log_to_driver=False, logging_level=logging.ERROR)  # fmt: skip
        saved.started()
        random.setstate(saved.random)  # ray.init draws from Python's generator
        if callable(sigterm) or sigterm == signal.SIG_IGN:  # ray.init installs a SIGTERM handler that exits:
            signal.signal(signal.SIGTERM, sigterm)  # a command's own one, or an ignored SIGTERM, stays
        yield ray
    finally:  # also after a failed or interrupted start, which may have left a half-started Ray
        try:
            ray.shutdown()
        finally:
            saved.restore()
            if sigterm is not None:  # Python's default (Ray's handler until now, to shut down on SIGTERM)
                signal.signal(signal.SIGTERM, sigterm)


class _ProcessState:
    """What ``ray.init`` changes in the calling process and ``ray.shutdown`` leaves changed:
    environment variables (``PYTHONBREAKPOINT`` sends ``breakpoint()`` to Ray's debugger),
    the ``ray`` logger's level, :mod:`faulthandler` and Python's random generator."""

    def __init__(self) -> None:
        self.environ = dict(os.environ)
        self.changed: set[str] | None = None  # the variables ray.init set (None: all, it did not finish)
        self.ray_level = logging.getLogger("ray").level
        self.faulthandler = faulthandler.is_enabled()
        self.random = random.getstate()

    def started(self) -> None:
        """Note the environment variables ``ray.init`` changed: only those are put back, not
        what the code inside the session changes."""
        now = dict(os.environ)
        self.changed = {name for name in set(now) | set(self.environ) if now.get(name) != self.environ.get(name)}

    def restore(self) -> None:
        names = self.changed if self.changed is not None else set(os.environ) | set(self.environ)
        for name in names:
            if name in self.environ:
                os.environ[name] = self.environ[name]
            else:
                os.environ.pop(name, None)
        logging.getLogger("ray").setLevel(self.ray_level)
        if not self.faulthandler:
            faulthandler.disable()


def cluster_cpus(ray: Any) -> int:
    return int(ray.cluster_resources().get("CPU", 0))


def stop_algorithm(algo: Any) -> None:
    """``algo.stop()``, then remove the log folder RLlib made for it in ``~/ray_results`` when
    it is empty, and ``~/ray_results`` too when that leaves it empty.  Every RLlib algorithm
    built outside Tune gets a ``~/ray_results/<time><random>/`` folder (Tune's Trainable
    makes it); the commands keep their run in ``--out`` and write nothing there, so each run
    left an empty folder in the user's home."""
    try:
        algo.stop()
    finally:
        logdir = getattr(algo, "logdir", None)
        if logdir:
            folder = Path(logdir)
            for empty in (folder, folder.parent) if folder.parent.name == "ray_results" else (folder,):
                try:
                    empty.rmdir()  # refused (OSError) unless the folder is empty
                except OSError:
                    break


_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception): .+")
_PID = re.compile(r"\bpid: (\d+)")


def worker_error(ray: Any, exc: BaseException) -> str | None:
    """The cause of a Ray actor's death ``exc`` from the actor's own log on this machine: the
    last exception line with a message (``SomeError: message``) of its ``worker-*-<pid>.err``.
    RLlib ends an env runner that raised with ``sys.exit(1)``, and the driver learns only
    that the actor died (its pid is in the message).  None when the pid is not given or the
    log is not readable here (a remote node's)."""
    found = _PID.search(str(exc))
    if found is None:
        return None
    try:  # the session's log folder: not in Ray's public API, so read defensively
        logs = ray._private.worker._global_node.get_logs_dir_path()
        names = [n for n in os.listdir(logs) if n.startswith("worker-") and n.endswith(f"-{found.group(1)}.err")]
    except Exception:
        return None
    for name in names:
        try:
            with open(os.path.join(logs, name), encoding="utf-8", errors="replace") as f:
                lines = [line.rstrip() for line in f if _EXCEPTION_LINE.match(line)]
        except OSError:
            continue
        if lines:
            return lines[-1]  # the last with a message: the outermost that says what failed
    return None
