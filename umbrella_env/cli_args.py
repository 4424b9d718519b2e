"""Option types shared by the command-line tools: one place for what a ``--seed`` and a
path (``--out``, ``--resume``, ...) accept, the words of a number out of its range
(:func:`int_problem`, :func:`real_problem`: every command's options and every agent's),
how a usage line names the command, how a command takes SIGTERM, and the install command
of an extra (:func:`install_hint`).

Every command that takes a seed parses it with :func:`seed_option`, so a bad seed gets the
same answer everywhere, from argparse before any work: exit status 2 and
``argument --seed: expected an integer from 0 to ..., got '-1'``.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import errno
import functools
import importlib
import io
import math
import os
import random
import select
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from numbers import Integral, Real
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from umbrella_env.core.config import MAX_TURNS_LIMIT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


def game_options_problem(players: Any, level: Any, max_turns: Any = None) -> str | None:
    """Why ``--players``, ``--level`` and ``--max-turns`` (None: not taken) cannot make a
    game, in the options' words, or None: every command checks them here before any work
    (the core's :class:`~umbrella_env.core.config.GameConfig` says ``num_players``)."""

    def is_int(value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    if not is_int(players) or not 1 <= players <= 4:
        return f"--players must be 1 (solo), 2, 3 or 4, got {players!r}"
    if not is_int(level) or not 1 <= level <= 4:
        return f"--level (plate level) must be 1, 2, 3 or 4, got {level!r}"
    if max_turns is not None and (not is_int(max_turns) or not 1 <= max_turns <= MAX_TURNS_LIMIT):
        return f"--max-turns must be an int in [1, {MAX_TURNS_LIMIT}], got {max_turns!r}"
    return None


def int_problem(name: str, value: Any, minimum: int = 1, maximum: int | None = None) -> str | None:
    """Why ``value`` is not an integer from ``minimum`` (to ``maximum`` when given) for the
    option ``name``, or None.  NumPy integers count; a bool does not."""
    bad = isinstance(value, (bool, np.bool_)) or not isinstance(value, Integral) or value < minimum
    if not bad and (maximum is None or value <= maximum):
        return None
    want = f">= {minimum}" if maximum is None else f"from {minimum} to {maximum:,}"
    return f"{name} must be an integer {want}, got {value!r}"


#: The most steps (``--timesteps``, ``--eval-every``) a trainer takes: years at the few
#: thousand decisions per second training runs here, so a larger figure is a typo (1e19 for
#: 1e9), refused rather than trained forever.
MAX_TIMESTEPS = 10**12


def real_problem(
    name: str, value: Any, *, minimum: float | None = None, maximum: float | None = None, positive: bool = False
) -> str | None:
    """Why ``value`` is not a finite number (> 0 when ``positive``; within [``minimum``,
    ``maximum``] when given) for the option ``name``, or None.  A bool is not a number."""
    try:
        ok = not isinstance(value, (bool, np.bool_)) and isinstance(value, Real) and math.isfinite(value)
    except OverflowError:  # an int too large for a float
        ok = False
    ok = ok and not (positive and value <= 0)
    ok = ok and (minimum is None or value >= minimum) and (maximum is None or value <= maximum)
    if ok:
        return None
    if positive and maximum is not None:
        want = f"a number in (0, {maximum}]"
    elif positive:
        want = "a finite number > 0"
    elif minimum is not None and maximum is not None:
        want = f"a number in [{minimum}, {maximum}]"
    elif minimum is not None:
        want = f"a finite number >= {minimum}"
    elif maximum is not None:
        want = f"a finite number <= {maximum}"
    else:
        want = "a finite number"
    return f"{name} must be {want}, got {value!r}"


def first_problem(problems: Iterable[str | None]) -> str | None:
    """The first of ``problems`` that is not None (:func:`int_problem`, :func:`real_problem`,
    ...): a command checks all its numbers in one list and reports the first bad one."""
    return next((problem for problem in problems if problem), None)


class MissingExtra(ImportError):
    """A module needs an optional extra that is not installed (its message names the
    extra's install command, :func:`install_hint`): a command reports it in one line, where
    any other ImportError is a bug and keeps its traceback."""


#: The project's name in its ``pyproject.toml``.
DISTRIBUTION = "umbrella-env"


def is_source_tree(root: Path) -> bool:
    """Whether ``root`` is a clone of this project: this project's ``pyproject.toml`` (not
    another package's, which site-packages may hold beside this wheel's ``agents/``),
    ``agents/`` and ``tests/``."""
    try:
        project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8")).get("project", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    return project.get("name") == DISTRIBUTION and (root / "agents").is_dir() and (root / "tests").is_dir()


@functools.lru_cache(maxsize=1)
def source_tree() -> Path | None:
    """The root of the clone this package runs from, or None for an installed package (a
    wheel in site-packages): what decides the install hint, the name of the top-level
    commands in messages, and whether the tools that rewrite the clone's files (golden
    playthroughs, generated docs) can run."""
    root = Path(__file__).resolve().parents[1]
    return root if is_source_tree(root) else None


def command_name(script: str, console: str) -> str:
    """A top-level command as a message names it: ``python train.py`` (``script``) in a
    clone, the console script ``umbrella-train`` (``console``) for an installed package."""
    return f"python {script}" if source_tree() is not None else console


def install_hint(extra: str) -> str:
    """The command that installs the optional dependencies ``extra`` ("train", "eval",
    "onnx", "ray", "bench", "openspiel"): in a clone, editable with the constraints file that pins torch;
    for an installed package, the package with its extra (a user without the clone has
    neither ``constraints.txt`` nor ``.``).  The words of every "needs the ... extra" message."""
    if source_tree() is not None:
        return f'pip install -c constraints.txt -e ".[{extra}]"'
    return f'pip install "umbrella-env[{extra}]"'


def missing_extra(module: str, exc: ImportError, what: str, extra: str = "train") -> NoReturn:
    """For a module whose imports need an optional extra: run as a command (``module`` is
    ``"__main__"``, ``python -m ...``), one line naming the extra and its install command,
    exit status 2, even for ``--help``; imported, :class:`MissingExtra` with the same words
    (a command above it reports it in one line)."""
    if isinstance(exc, MissingExtra):  # a module below already said what is missing
        message = str(exc)
    else:
        message = f"{what} needs the {extra} extra ({exc.name or exc} is missing): {install_hint(extra)}"
    if module == "__main__":
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(2)
    raise MissingExtra(message) from exc


def import_command(module: str, prog: str) -> Callable[..., int] | None:
    """The ``main`` of the command module ``module``, or None after one line (``prog: error:
    ...``) when the module needs an optional extra that is missing (:class:`MissingExtra`):
    how a console script or a dispatcher starts a command whose imports need torch (any other
    ImportError is a bug and keeps its traceback)."""
    try:
        return importlib.import_module(module).main
    except MissingExtra as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return None


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """A command's ``--help``: the description as written, and each option's default after its
    help, unless it has none to show (None, a flag's False) or the help already says it."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if not action.option_strings or default is None or default is argparse.SUPPRESS or isinstance(default, bool):
            return text
        if "default" in text:
            return text
        shown = " ".join(map(str, default)) if isinstance(default, (list, tuple)) else str(default)
        return f"{text} (default {shown.replace('%', '%%')})"


class ShortUsageParser(argparse.ArgumentParser):
    """argparse's parser whose errors show a one-line usage: a command of many options
    printed all of them (20 to 41 lines) above its one-line error.  ``--help`` shows them."""

    def print_usage(self, file: Any = None) -> None:
        self._print_message(f"usage: {self.prog} [options]  (--help lists them)\n", file)


def seed_option(upper: int | None = None, why: str = "") -> Callable[[str], int]:
    """The argparse ``type=`` of a seed option: an integer >= 0 (NumPy's generators take no
    negative seed), at most ``upper`` when the seed feeds a library with a smaller range
    (``why`` says which, in parentheses after the range).  Anything else is refused with an
    :class:`argparse.ArgumentTypeError` naming the valid range and the text given."""
    valid = "an integer >= 0" if upper is None else f"an integer from 0 to {upper:,}"
    if why:
        valid += f" ({why})"

    def seed(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = -1
        if value < 0 or (upper is not None and value > upper):
            raise argparse.ArgumentTypeError(f"expected {valid}, got {text!r}")
        return value

    return seed


def path_option(text: str) -> Path:
    """The argparse ``type=`` of a path option: any non-empty text.  An empty one (most often
    an unset shell variable, ``--out "$DIR"``) is refused: as a ``Path`` it would be ``.``,
    and a run or a report would land in the current folder."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a path, got {text!r} (an unset shell variable?)")
    return Path(text)


def program_name(module_command: str, scripts: tuple[str, ...] = ()) -> str:
    """The command as the user typed it, for a usage line: one of ``scripts`` when the
    process was started by it (an installed script such as ``umbrella-evaluate``, or a
    script of the clone such as ``evaluate.py``, shown as ``python evaluate.py``), else
    ``module_command`` (``python -m ...``, whose ``argv[0]`` is the module's file, or a call
    from Python)."""
    name = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    if name not in scripts:
        return module_command
    return f"python {name}" if name.endswith(".py") else name


#: The system's refusals to write (a full disk, a read-only or forbidden place, a file too
#: large): :func:`command` reports them in one line.  Any other OSError is a bug's, and keeps
#: its traceback.
SYSTEM_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO, errno.EFBIG})


def notebook_kernel() -> bool:
    """Whether this runs in an IPython kernel (Jupyter, VS Code's notebooks): there
    ``input()`` asks the notebook for a line, the process's stdin has none to read, and
    stderr is no terminal but the notebook shows a progress widget.  IPython is only looked
    at, never imported."""
    get_ipython = getattr(sys.modules.get("IPython"), "get_ipython", None)
    try:
        shell = get_ipython() if callable(get_ipython) else None
    except Exception:  # an IPython half set up: no kernel to ask
        return False
    return getattr(shell, "kernel", None) is not None


def is_terminal(stream: Any) -> bool:
    """Whether ``stream`` is a terminal: False for None (pythonw), a closed stream, or an
    object that is not a file."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def say(*parts: Any, file: Any = None) -> None:
    """``print`` (flushed) for a command's status lines, which a reader that went away
    cannot break: when the other end of a pipe is closed (``| head``, or ``| tee`` ended by
    the same Ctrl-C as the command) the stream is silenced (sent to ``/dev/null``) and the
    command carries on, so what it saves after the line is still saved."""
    stream = sys.stdout if file is None else file
    try:
        print(*parts, file=stream, flush=True)
    except BrokenPipeError:
        silence(stream)


def _stdout_closed() -> bool:
    """Whether stdout's reader went away; if so, stdout is silenced.  Buffered, the flush
    fails again (a failed write's text is still buffered); unbuffered (``python -u``), the
    pipe reports the error to ``poll``."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:
        silence(sys.stdout)
        return True
    try:
        poller = select.poll()  # not on Windows: AttributeError
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        closed = any(events & select.POLLERR for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll, no descriptor (a test's capture)
        return False
    if closed:
        silence(sys.stdout)
    return closed


def silence(stream: Any) -> None:
    """Send ``stream``'s file descriptor to ``/dev/null`` (Python's advice for a broken pipe:
    the flush at exit would raise again)."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError, AttributeError):  # no descriptor (a test's capture, None): nothing to silence
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


#: The ASCII form of each symbol the commands print (tables, intervals, bounds, errors), for
#: an output whose encoding lacks it: a Windows code page when the output is a file or a
#: pipe (cp1252 has no "−", cp932 no "–"), ``LANG=C``.  Any other such character prints as "?".
ASCII_SYMBOLS = {
    "\u2212": "-",  # minus
    "\u2013": "-",  # en dash (a missing figure)
    "\u2014": "-",
    "\u00b1": "+/-",
    "\u2265": ">=",
    "\u2264": "<=",
    "\u00d7": "x",
    "\u00b7": ".",
    "\u00bd": "1/2",
    "\u2588": "#",
    "\u00a7": "section ",
    "\u2026": "...",
    "\u2192": "->",
}

#: The codec error handlers of :data:`ASCII_SYMBOLS` (:func:`printable_symbols`), by the
#: handler they replace: under ``surrogateescape`` (a POSIX locale that is not UTF-8) the
#: bytes of a file name that is not text still print as they were.
ASCII_ERRORS = {
    "strict": "umbrella_env.ascii_symbols",
    "backslashreplace": "umbrella_env.ascii_symbols",
    "surrogateescape": "umbrella_env.ascii_symbols_surrogateescape",
}


def _ascii_symbols(exc: UnicodeError, surrogates: bool = False) -> tuple[str | bytes, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    text = exc.object[exc.start : exc.end]
    if surrogates and all("\udc80" <= ch <= "\udcff" for ch in text):  # surrogateescape's own
        return bytes(ord(ch) - 0xDC00 for ch in text), exc.end
    return "".join(ASCII_SYMBOLS.get(ch, "?") for ch in text), exc.end


codecs.register_error(ASCII_ERRORS["strict"], _ascii_symbols)
codecs.register_error(ASCII_ERRORS["surrogateescape"], lambda exc: _ascii_symbols(exc, surrogates=True))

#: :func:`printable_symbols` in several threads (commands called from threads): the streams
#: are changed by the first to enter and put back by the last to leave.
_PRINTABLE_LOCK = threading.Lock()
_printable: dict[str, Any] = {"depth": 0, "changed": []}


@contextlib.contextmanager
def printable_symbols() -> Iterator[None]:
    """Inside, stdout and stderr print a symbol their encoding lacks in its ASCII form
    (:data:`ASCII_SYMBOLS`): stdout's strict encoding ended a command in a
    UnicodeEncodeError at its first "\u00b1" (an evaluation's standings, after every game had
    been played, before its report was written), stderr's showed ``\\u2212``.  UTF-8 streams,
    and streams that are not plain text files (a test's capture), are left as they are; each
    is put back when the last command inside leaves."""
    with _PRINTABLE_LOCK:
        if _printable["depth"] == 0:
            _printable["changed"] = _make_printable()
        _printable["depth"] += 1
    try:
        yield
    finally:
        with _PRINTABLE_LOCK:
            _printable["depth"] -= 1
            if _printable["depth"] == 0:
                for stream, errors in _printable["changed"]:
                    with contextlib.suppress(ValueError, OSError):  # a closed pipe: the command says so
                        stream.reconfigure(errors=errors)
                _printable["changed"] = []


def _make_printable() -> list[tuple[io.TextIOWrapper, str]]:
    """Give stdout and stderr the handler of :data:`ASCII_ERRORS` where they need one; the
    streams changed, with their handlers before."""
    changed: list[tuple[io.TextIOWrapper, str]] = []
    for stream in (sys.stdout, sys.stderr):
        if not isinstance(stream, io.TextIOWrapper) or stream.errors not in ASCII_ERRORS:
            continue
        try:
            if codecs.lookup(stream.encoding).name.startswith("utf"):
                continue
            errors = stream.errors
            stream.reconfigure(errors=ASCII_ERRORS[errors])
        except (LookupError, ValueError, OSError):  # an unknown codec, a closed or broken stream
            continue
        changed.append((stream, errors))
    return changed


#: What :func:`process_state_kept` puts back: how deep commands are nested, the random
#: streams from before the outermost one, and torch's thread count and generator state
#: (None: not read yet).
_KEPT: dict[str, Any] = {"depth": 0, "streams": None, "torch": None}
_KEPT_LOCK = threading.Lock()


def _torch_state(torch: Any) -> tuple[int, Any]:
    """torch's process-wide settings a command may change: its thread count and generator."""
    return torch.get_num_threads(), torch.random.get_rng_state()


def set_torch(threads: int | None = None, seed: int | None = None) -> None:
    """Set torch's thread count and seed its global generator for a command: the commands'
    one way to (a trainer, a benchmark), so that :func:`process_state_kept` knows what to put
    back even when the command imported torch itself."""
    torch = importlib.import_module("torch")  # an optional dependency: the train extra's
    with _KEPT_LOCK:
        if _KEPT["depth"] and _KEPT["torch"] is None:
            _KEPT["torch"] = _torch_state(torch)
    if threads is not None:
        torch.set_num_threads(threads)
    if seed is not None:
        torch.manual_seed(seed)


@contextlib.contextmanager
def process_state_kept() -> Iterator[None]:
    """Inside, a command may change what is the whole process's (a trainer sets torch's
    thread count and seeds it, Stable-Baselines3 seeds ``random``, NumPy's global generator
    and torch's); on leaving the outermost one, each is put back as it was, so a command
    called from Python (a notebook's loop over runs) leaves the caller's settings and random
    streams as it found them.  torch's are read on entering when it is already imported, or
    else by :func:`set_torch` before its first change; torch is never imported here.
    Commands run at the same time on threads of one process share these process-wide
    settings: the last one to finish puts back what the first one found."""
    entered = False
    try:
        with _KEPT_LOCK:
            if _KEPT["depth"] == 0:
                torch = sys.modules.get("torch")
                has_torch = torch is not None and hasattr(torch, "get_num_threads")  # not half-imported
                _KEPT["streams"] = (random.getstate(), np.random.get_state())
                _KEPT["torch"] = _torch_state(torch) if has_torch else None
            _KEPT["depth"] += 1
            entered = True
        yield
    finally:
        if entered:
            with _KEPT_LOCK:  # the count first: an interrupt in the restore below cannot leave it raised
                _KEPT["depth"] -= 1
                outermost = _KEPT["depth"] == 0
                streams, saved = (_KEPT["streams"], _KEPT["torch"]) if outermost else (None, None)
                if outermost:
                    _KEPT["streams"] = _KEPT["torch"] = None
            if streams is not None:
                random.setstate(streams[0])
                np.random.set_state(streams[1])
            if saved is not None:
                torch = sys.modules["torch"]
                threads, rng = saved
                if torch.get_num_threads() != threads:
                    torch.set_num_threads(threads)
                torch.random.set_rng_state(rng)


def exit_status(exc: SystemExit) -> int:
    """The exit status a shell would see for ``exc``: its code when an int, 0 for None, and
    1 for a message (Python prints the message and exits with 1)."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def command(main: Callable[..., int], interrupted: str = "interrupted") -> Callable[..., int]:
    """A command's ``main``, which never ends in a traceback for what the user or the system
    did: Ctrl-C, or SIGTERM (``kill``, ``timeout``, a scheduler: the command runs inside
    :func:`sigterm_as_interrupt`, so a pool's ``with`` block stops its workers rather than
    leaving them orphaned), that no handler of the command took (the command's own handlers
    say what was kept) ends in the line ``interrupted`` and exit status 130; an OSError of
    :data:`SYSTEM_ERRNOS` (a full disk) in one line naming the file, and exit status 1; a
    closed output pipe (``| head``) in exit status 1 without a word (status lines that must
    not stop a save: :func:`say`); argparse's exit (bad options, ``--help``) in its status,
    returned, not raised, to a caller in Python.  What the command changed of the process
    (torch's threads, the global random streams) is put back (:func:`process_state_kept`).
    (The commands that run a process pool take
    :func:`umbrella_env.parallel.command_exits`, built on this one.)"""

    @functools.wraps(main)
    def run(*args: Any, **kwargs: Any) -> int:
        try:
            with sigterm_as_interrupt(), printable_symbols(), process_state_kept():
                status = main(*args, **kwargs)
            if sys.stdout is not None:  # buffered output meets a closed pipe here, not at exit
                sys.stdout.flush()
            return status
        except SystemExit as exc:  # argparse: a usage error (2) or --help (0), said already
            return exit_status(exc)
        except KeyboardInterrupt:
            say(f"\n{interrupted}", file=sys.stderr)
            return 130
        except BrokenPipeError:  # the reader of the output went away (| head): no traceback
            if not _stdout_closed():
                raise  # another pipe's (a bug's, or a worker's): its traceback stays
            return 1
        except OSError as exc:
            if exc.errno not in SYSTEM_ERRNOS:
                raise
            where = f": {exc.filename}" if exc.filename else ""
            print(f"error: {exc.strerror or exc}{where}", file=sys.stderr)
            return 1

    return run


#: Set when SIGTERM arrives inside :func:`sigterm_as_interrupt` (cleared on entering it).
_SIGTERM = threading.Event()


def sigterm_received() -> bool:
    """Whether SIGTERM arrived inside :func:`sigterm_as_interrupt`: a scheduler that signals
    the whole process group also ends a command's worker processes, and the command may
    see their death before its own interrupt."""
    return _SIGTERM.is_set()


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Inside, SIGTERM (``kill``, ``timeout``, a cluster scheduler) raises
    :class:`KeyboardInterrupt`, so the long commands stop as on Ctrl-C: what they wrote is
    kept and said, exit status 130 (SIGTERM's default ended them without a word, a run
    folder half written).  The previous handler is restored on leaving; off the main thread
    it does nothing.  (``ray_session`` keeps the handler Ray's start replaces.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: Any) -> None:
        _SIGTERM.set()
        raise KeyboardInterrupt(f"signal {signum} (SIGTERM)")

    _SIGTERM.clear()  # this command's signal only, not an earlier one's in the same process
    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        if previous is not None:  # None: a handler not set from Python, which cannot be put back
            signal.signal(signal.SIGTERM, previous)
