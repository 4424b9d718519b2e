"""Process pools, progress bars and the exit on a dead worker or Ctrl-C, shared by the
long-running commands (evaluate, the teacher games of train --pretrain, the agent ladder)."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from functools import wraps
from typing import Any

from umbrella_env.cli_args import command, is_terminal, notebook_kernel, sigterm_received


class WorkerDied(RuntimeError):
    """A worker process of a pool died in the middle of its job (killed by a signal, by the
    out-of-memory killer, or a crash in native code), or no worker could start (a script
    without the ``__main__`` guard): the work in flight is lost.  The commands report it in
    one line instead of the pool's ``BrokenProcessPool`` traceback."""

    def __init__(self, could_not_start: bool = False) -> None:
        if could_not_start:  # no worker ever ran its initializer
            super().__init__(
                "the worker processes could not start: the script that runs this must do so under "
                "'if __name__ == \"__main__\":' (each worker runs the script's file again as it starts)"
            )
            return
        super().__init__(
            "a worker process died in the middle of its job (killed by a signal or out of memory?); "
            "the work in flight is lost (run again, with fewer --workers if memory is short)"
        )


def command_exits(main: Callable[..., int]) -> Callable[..., int]:
    """Decorate a command's ``main`` that runs a process pool: :func:`~umbrella_env.cli_args.command`,
    and a worker that dies (:class:`WorkerDied`) ends it with one ``error:`` line on stderr
    and exit status 1, Ctrl-C with one ``interrupted`` line saying the work in flight is lost
    and 130, never a traceback (the pool's ``with`` block has already stopped the workers).
    What the command printed before stands."""

    @wraps(main)
    def run(*args: Any, **kwargs: Any) -> int:
        try:
            return main(*args, **kwargs)
        except WorkerDied as exc:
            if sigterm_received():  # a SIGTERM to the process group ended the workers too
                raise KeyboardInterrupt from exc
            print(f"error: {exc}", file=sys.stderr, flush=True)
            return 1

    return command(run, "interrupted: the work in flight is lost (what was printed above stands)")


def _init_worker(parent: int, started: Any) -> None:
    started.value = 1  # a worker got this far: a pool that breaks now lost a worker, not its start
    # One thread per worker process: the workers already use every core.
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    torch = sys.modules.get("torch")  # already imported (a caller's script that imports it, re-run under spawn):
    if torch is not None and os.environ.get("OMP_NUM_THREADS") == "1":  # it read the variables before they were set
        torch.set_num_threads(1)
    # Ctrl-C reaches the whole process group: the parent stops the pool (stop_pool), the
    # workers do not each print a KeyboardInterrupt traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if os.name == "posix":  # Windows ends a spawned worker whose parent is gone (its pipe breaks)
        threading.Thread(target=_exit_with, args=(parent,), name="umbrella-parent-watch", daemon=True).start()


def _exit_with(parent: int) -> None:
    """End this worker when the process that made its pool is gone without stopping it
    (SIGKILL, the out-of-memory killer, a killed notebook kernel): a worker holds both ends
    of the pool's pipes, so it never reads an end of file, and it would wait forever,
    holding its memory.  Waits on a pidfd where there is one (Linux, which also sees a
    parent ended but not yet reaped), else checks every second that the parent exists and
    that this worker's own parent (the creator under spawn, the forkserver, which ends with
    the creator) is unchanged.  ``parent`` is the pool's creator as the pool was made (a
    pool used in a process forked after that watches the process it was made in)."""
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is not None:
        try:
            fd = pidfd_open(parent)
        except ProcessLookupError:
            os._exit(1)
        except OSError:  # a kernel without pidfds
            pass
        else:
            watch = select.poll()  # not select(): it refuses a descriptor above 1023
            watch.register(fd, select.POLLIN)
            watch.poll()  # readable once the process has ended
            os._exit(1)
    mine = os.getppid()
    while True:
        try:
            os.kill(parent, 0)  # POSIX: signal 0 only checks that the process exists
        except ProcessLookupError:
            os._exit(1)
        except PermissionError:  # exists, as another user's: the pid was reused, the parent is gone
            os._exit(1)
        if os.getppid() != mine:  # reparented: the process that started this worker ended
            os._exit(1)
        time.sleep(1.0)


def _mp_context() -> Any:
    import multiprocessing as mp

    # Not fork: a parent that loaded torch (checkpoint agents, a model being trained) may not fork safely.
    return mp.get_context("forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn")


class _Pool(ProcessPoolExecutor):
    """A process pool whose ``with`` block, left by an exception (a failed job, Ctrl-C),
    stops it at once (:func:`stop_pool`) instead of waiting for every pending job.

    Its processes (the forkserver, the workers) start from :meth:`submit` with SIGINT
    blocked, so they inherit the block: a Ctrl-C while they start (before the workers
    ignore it) reaches only the parent, not a child that would print a traceback.
    """

    def __init__(self, *args: Any, started: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.started = started  # set to 1 by the first worker that runs its initializer

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
            return super().submit(fn, *args, **kwargs)
        # The mask is inherited by the processes started here; the handler defers the
        # KeyboardInterrupt until they are registered (another thread may take the signal).
        caught: list[int] = []
        handler = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            return super().submit(fn, *args, **kwargs)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            signal.signal(signal.SIGINT, handler)
            if caught and callable(handler):  # Python's default handler raises KeyboardInterrupt
                handler(signal.SIGINT, None)
            elif caught and handler == signal.SIG_DFL:
                raise KeyboardInterrupt

    def map(self, fn: Any, *iterables: Any, timeout: float | None = None, chunksize: int = 1) -> Iterator[Any]:
        """``Executor.map`` (every job submitted now, results in order, ``chunksize`` 1), except
        that a failure or Ctrl-C while reading the results leaves the pending jobs to
        :func:`stop_pool`: ``Executor.map`` cancels them itself, and Python 3.11's pool then
        sets the cancelled futures' exception as it stops, an ``InvalidStateError``
        traceback printed from its thread under the command's one-line message."""
        if timeout is not None or chunksize != 1:
            raise ValueError("this pool's map takes no timeout and chunksize 1 only")
        futures = [self.submit(fn, *args) for args in zip(*iterables)]

        def results() -> Iterator[Any]:
            for future in futures:
                yield future.result()

        return results()

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> Any:
        if exc_type is not None:
            stop_pool(self)
            if isinstance(exc, BrokenProcessPool):
                raise worker_died(self) from None
            return False
        return super().__exit__(exc_type, exc, tb)


def process_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` single-threaded processes that is safe to start after torch
    (its workers ignore Ctrl-C: the parent stops them, see :class:`_Pool`)."""
    context = _mp_context()
    started = context.Value("b", 0, lock=False)
    return _Pool(
        max_workers=workers,
        mp_context=context,
        initializer=_init_worker,
        initargs=(os.getpid(), started),
        started=started,
    )


def worker_died(pool: Any) -> WorkerDied:
    """The :class:`WorkerDied` of a broken pool of :func:`process_pool`: its workers could
    not start (no worker ran its initializer), or one died in the middle of its job."""
    started = getattr(pool, "started", None)
    return WorkerDied(could_not_start=started is not None and not started.value)


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Stop a pool at once: pending jobs cancelled, running ones abandoned (a failed game or
    Ctrl-C must not wait for the rest of the work, nor hang on a pool that will not drain)."""
    running = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)  # shutdown() forgets it
    for process in running:  # the jobs already running are abandoned
        process.terminate()
    for process in running:  # gone before the pool's queues are: a worker still starting
        process.join(timeout=5)  # would fail to open them and print a traceback
        if process.is_alive():  # SIGTERM not taken in 5 s: the pool's exit would wait for it forever
            process.kill()
            process.join(timeout=5)
    pool.shutdown(wait=False, cancel_futures=True)
    # The pool's manager thread closes its wake-up pipe as it ends; Python's exit hook, run
    # meanwhile, wrote to it ("OSError: [Errno 9] Bad file descriptor" under the command's
    # interrupted line, about one SIGTERM in ten): the workers are gone, so it ends at once.
    if manager is not None and manager is not threading.current_thread():
        manager.join(timeout=5)


def local_cpus() -> int:
    """The cores this process may run on (its affinity, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def oversubscribed(flag: str, count: int | None, what: str) -> str | None:
    """A note when ``flag`` asks for more ``what`` (processes, threads) than this process has
    CPUs (16 workers on 2 cores took 4.7x as long; 1,000 torch threads 8x), else None."""
    cpus = local_cpus()
    if count is None or count <= cpus:
        return None
    return f"note: {flag} {count} on {cpus} CPU(s): more {what} than CPUs slow the work down"


def memory_bytes() -> int | None:
    """This machine's physical memory, or None where the system does not say."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, OSError, ValueError):  # not POSIX, or an unknown name
        return None


@contextlib.contextmanager
def above_progress() -> Iterator[None]:
    """Lines printed inside go above a tqdm bar on the terminal, not onto it (the bar is
    cleared, then drawn again); with no bar, nothing changes."""
    try:
        from tqdm import tqdm
    except ImportError:  # rich's bar (Progress without tqdm) moves printed lines above itself
        yield
        return
    with tqdm.external_write_mode(file=sys.stdout):
        yield


#: Seconds between two progress lines when stderr is not a terminal (a log file).
PLAIN_PROGRESS_SECONDS = 30.0


class Progress:
    """On stderr, only when asked: a tqdm bar (else rich, else nothing) on a terminal; in
    a notebook, tqdm's widget when tqdm and ipywidgets are installed; otherwise (a log
    under nohup, CI, a notebook without them) a plain line every
    :data:`PLAIN_PROGRESS_SECONDS` and one at the end (a bar there drew nothing)."""

    def __init__(self, total: int, enabled: bool, desc: str, initial: int = 0, unit: str = "game") -> None:
        """``initial``: the count already done before (a resumed run's), shown but left out
        of the rate, so the time left is this session's; ``unit``: what is counted."""
        self._bar: Any = None
        self._rich: Any = None
        self._plain: list[float] | None = None  # [start, last line] times, for a log
        self._total, self._done, self._desc, self._initial = total, initial, desc, initial
        self._shown = initial  # the count of the last plain line
        if not enabled or sys.stderr is None:  # no stream to show it on (pythonw, a daemon)
            return
        if not is_terminal(sys.stderr) and notebook_kernel() and self._widget(total, desc, initial, unit):
            return
        if not is_terminal(sys.stderr):
            now = time.monotonic()
            self._plain = [now, now]
            return
        try:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=None, initial=initial)
            return
        except ImportError:
            pass
        try:
            from rich.progress import Progress as RichProgress

            self._rich = RichProgress(transient=True)
            self._rich.start()
            self._task = self._rich.add_task(desc, total=total, completed=initial)
        except ImportError:
            pass

    def _widget(self, total: int, desc: str, initial: int, unit: str) -> bool:
        """tqdm's notebook widget as the bar; False when tqdm or ipywidgets is missing
        (tqdm's notebook bar then fails, or draws text into the cell)."""
        if importlib.util.find_spec("ipywidgets") is None:
            return False
        try:
            from tqdm.notebook import tqdm as widget
        except ImportError:
            return False
        self._bar = widget(total=total, desc=desc, unit=unit, initial=initial)
        return True

    def update(self, n: int) -> None:
        self._done += n
        if self._bar is not None:
            self._bar.update(n)
        elif self._rich is not None:
            self._rich.update(self._task, advance=n)
        elif self._plain is not None and time.monotonic() - self._plain[1] >= PLAIN_PROGRESS_SECONDS:
            self._line()

    def _line(self, last: bool = False) -> None:
        """One plain line; ``last`` (at the close, done or stopped): without a time left."""
        assert self._plain is not None
        now = time.monotonic()
        self._plain[1] = now
        self._shown = self._done
        elapsed = now - self._plain[0]
        share = self._done / self._total if self._total else 1.0
        rate = (self._done - self._initial) / elapsed if elapsed > 0 else 0.0
        left = f", about {(self._total - self._done) / rate:.0f} s left" if rate > 0 and share < 1 and not last else ""
        print(
            f"{self._desc}: {self._done:,}/{self._total:,} ({share:.0%}), {elapsed:.0f} s{left}",
            file=sys.stderr,
            flush=True,
        )

    @property
    def plain(self) -> bool:
        """Whether it shows as plain lines (stderr is not a terminal: a log)."""
        return self._plain is not None

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
        elif self._rich is not None:
            self._rich.stop()
        elif self._plain is not None and self._done != self._shown:  # the last count, once
            self._line(last=True)
            self._plain = None
