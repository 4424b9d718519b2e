"""umbrella_env.parallel: the process pool the commands play their games in."""

from __future__ import annotations

import sys
import threading
import time

import pytest

from umbrella_env.parallel import process_pool


def slow_identity(x: int) -> int:
    time.sleep(0.5)
    return x


def first_job_last(x: int) -> int:
    """Job 0 takes 1.5 s, the others none: they finish before it."""
    time.sleep(1.5 if x == 0 else 0.0)
    return x


def test_map_results_come_in_order() -> None:
    with process_pool(2) as pool:
        assert list(pool.map(slow_identity, range(5))) == list(range(5))
        assert list(pool.map(first_job_last, range(4))) == list(range(4))  # in order, not as they finish
        with pytest.raises(ValueError, match="chunksize 1 only"):
            pool.map(slow_identity, range(5), chunksize=2)


def test_ctrl_c_while_reading_map_results_prints_no_thread_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    """Executor.map cancelled its pending jobs itself, then the stopped pool set their
    exception: an InvalidStateError traceback from the pool's thread under the command's
    one-line "interrupted" message (train.py during teacher games, 5 times of 5)."""
    raised: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: raised.append(args.exc_value))
    with pytest.raises(KeyboardInterrupt):
        with process_pool(2) as pool:
            for i, _ in enumerate(pool.map(slow_identity, range(40))):
                if i == 1:
                    raise KeyboardInterrupt
    deadline = time.monotonic() + 3
    while pool._executor_manager_thread is not None and pool._executor_manager_thread.is_alive():
        assert time.monotonic() < deadline, "the pool's thread did not stop"
        time.sleep(0.05)
    assert raised == []


_TORCH_SCRIPT = """
import torch  # at the top, as a user's script: a spawned worker imports it before its initializer runs

from umbrella_env.parallel import process_pool

if __name__ == "__main__":
    with process_pool(2) as pool:
        print(sorted(pool.submit(torch.get_num_threads).result() for _ in range(4)))
"""


@pytest.mark.train
def test_workers_of_a_script_that_imports_torch_use_one_thread_each(tmp_path) -> None:
    """The workers' OMP_NUM_THREADS=1 came after torch had read the variables (the caller's
    script, imported again in each worker, imports torch at its top): every worker ran torch
    on every core, the workers oversubscribing the machine."""
    import os
    import subprocess
    import sys

    script = tmp_path / "user_script.py"
    script.write_text(_TORCH_SCRIPT, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[1, 1, 1, 1]"


def test_a_resumed_progress_line_times_what_is_left_by_this_sessions_rate(monkeypatch, capsys) -> None:
    """A resumed alphazero run counted its earlier iterations as done in this session's time:
    80% done after 3 s said "about 1 s left" where 12 s were."""
    from umbrella_env import parallel

    clock = [100.0]
    monkeypatch.setattr(parallel.time, "monotonic", lambda: clock[0])
    bar = parallel.Progress(2560, True, "self-play games", initial=1920)  # stderr is not a terminal here
    assert bar.plain
    clock[0] += 30.0
    bar.update(128)  # 128 games in 30 s: 512 left take 120 s
    bar.close()
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "self-play games: 2,048/2,560 (80%), 30 s, about 120 s left"


def _in_a_kernel(monkeypatch) -> None:
    import types

    kernel = types.SimpleNamespace(kernel=object())
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: kernel))


def test_in_a_notebook_progress_is_tqdms_widget(monkeypatch, capsys) -> None:
    """In an IPython kernel stderr is no terminal, and the progress was a plain line every
    30 s: with tqdm and ipywidgets it is tqdm's notebook widget."""
    import importlib.util
    import types

    from umbrella_env import parallel

    made: list[dict] = []

    class Widget:
        def __init__(self, **kwargs) -> None:
            made.append({"kwargs": kwargs, "updates": []})

        def update(self, n: int) -> None:
            made[-1]["updates"].append(n)

        def close(self) -> None:
            made[-1]["closed"] = True

    _in_a_kernel(monkeypatch)
    monkeypatch.setitem(sys.modules, "tqdm.notebook", types.SimpleNamespace(tqdm=Widget))
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: object() if name == "ipywidgets" else real(name, *a)
    )
    bar = parallel.Progress(10, True, "evaluation games", initial=2)
    assert not bar.plain
    bar.update(3)
    bar.close()
    assert made == [{"kwargs": {"total": 10, "desc": "evaluation games", "unit": "game", "initial": 2}, "updates": [3],
                     "closed": True}]  # fmt: skip
    assert capsys.readouterr().err == ""


def test_in_a_notebook_without_ipywidgets_progress_is_plain_lines(monkeypatch) -> None:
    import importlib.util

    from umbrella_env import parallel

    _in_a_kernel(monkeypatch)
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ipywidgets" else real(name, *a))
    assert parallel.Progress(10, True, "evaluation games").plain


_KILLED_SCRIPT = """
import os
import time

from umbrella_env.parallel import process_pool

if __name__ == "__main__":
    pool = process_pool(2)
    jobs = [pool.submit(time.sleep, 600) for _ in range(2)]
    while len(pool._processes) < 2:
        time.sleep(0.05)
    print(*pool._processes, flush=True)
    time.sleep(600)
"""


@pytest.mark.posix
def test_workers_end_when_the_process_of_their_pool_is_killed(tmp_path) -> None:
    """Review of resource use: after a SIGKILL of the command (the out-of-memory killer, a
    killed notebook kernel) its pool's workers lived on forever, 270 MB each, blocked on the
    pool's pipes, of which they hold both ends."""
    import os
    import signal
    import subprocess
    import sys

    script = tmp_path / "killed.py"
    script.write_text(_KILLED_SCRIPT, encoding="utf-8")
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    workers: list[int] = []
    try:
        assert parent.stdout is not None
        workers = [int(pid) for pid in parent.stdout.readline().split()]
        assert len(workers) == 2
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(timeout=30)
        deadline = time.monotonic() + 30
        alive = workers
        while alive and time.monotonic() < deadline:
            time.sleep(0.1)
            alive = [pid for pid in workers if _running(pid)]
        assert alive == []
    finally:
        parent.kill()
        for pid in workers:
            if _running(pid):
                os.kill(pid, signal.SIGKILL)


def _running(pid: int) -> bool:
    """Whether the process ``pid`` runs (a zombie, ended but not yet reaped by init, does not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:  # no /proc (macOS): ask the kernel
        import os

        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def test_stopping_a_pool_waits_for_its_manager_thread() -> None:
    """The manager thread, still closing its wake-up pipe as Python's exit hook wrote to it,
    printed ``OSError: [Errno 9] Bad file descriptor`` after about one SIGTERM in ten; the
    join meant to prevent it read the thread after shutdown() had forgotten it (diff review)."""
    from umbrella_env.parallel import stop_pool

    pool = process_pool(2)
    pool.submit(time.sleep, 60)
    manager = pool._executor_manager_thread  # type: ignore[attr-defined]
    assert manager is not None
    stop_pool(pool)
    assert not manager.is_alive()


_UNGUARDED_SCRIPT = """
from umbrella_env.evaluation import run_tournament

run_tournament(["greedy", "random"], 2, games=8, workers=2)  # no 'if __name__ == "__main__":'
"""


def test_workers_that_cannot_start_are_told_apart_from_killed_ones(tmp_path) -> None:
    """Review of the notebook user: a script without the __main__ guard (its workers, which
    run it again, cannot start) was told 'killed by a signal or out of memory?'."""
    import subprocess
    import sys

    from umbrella_env.parallel import WorkerDied

    script = tmp_path / "unguarded.py"
    script.write_text(_UNGUARDED_SCRIPT, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert "the worker processes could not start" in done.stderr and "if __name__ ==" in done.stderr
    assert "in the middle of its job" in str(WorkerDied())  # a worker that started, then died


def test_lines_printed_above_a_bar_are_not_written_onto_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A trainer's evaluation line came after the bar's last drawing, on the same terminal
    line ("... 741.33step/s][eval @ 4,096 steps ..."): the bar is now cleared first, and drawn
    again after the line."""
    import io

    tqdm = pytest.importorskip("tqdm", reason="the bar is tqdm's (the eval and train extras)").tqdm
    from umbrella_env.parallel import above_progress

    stream = io.StringIO()
    monkeypatch.setattr(sys, "stdout", stream)
    bar = tqdm(total=10, file=stream, disable=False, ascii=True, mininterval=0)  # a terminal's bar
    bar.update(3)
    with above_progress():
        print("[eval] a line")
    bar.close()
    before, after = stream.getvalue().split("[eval] a line\n")
    assert before.endswith("\r") and before.rstrip("\r").endswith(" ")  # the bar's line blanked, then the line
    assert after.startswith("\r 30%|###")  # and the bar drawn again below it
