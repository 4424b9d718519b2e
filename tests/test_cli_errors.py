"""Every command answers bad input in words (exit status 2 and a message), before it
builds or writes anything; one test per case of the reliability issue."""

from __future__ import annotations

import argparse
import importlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from umbrella_env.cli_args import program_name, seed_option, sigterm_as_interrupt, sigterm_received
from umbrella_env.core.config import GameConfig
from umbrella_env.evaluation import cli as evaluate_cli
from umbrella_env.evaluation import tournament
from umbrella_env.match import AgentSpecError, build_agent
from umbrella_env.play import main as play_main

REPO = Path(__file__).resolve().parents[1]

#: The trainers' answer to a seed out of range (Stable-Baselines3 takes seeds below 2**32).
SB3_SEED = (
    "argument --seed: expected an integer from 0 to 4,294,967,295 (the range both trainers take, Stable-Baselines3's)"
)

#: Not an agent factory: a module attribute that is not callable, and one whose result has no act().
NOT_CALLABLE = 42


def not_an_agent() -> object:
    return object()


def _evaluate(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = evaluate_cli.main(argv)
    return code, capsys.readouterr().err


def _no_game(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any game played fails the test: a refusal must come before the tournament."""

    def played(*args: object, **kwargs: object) -> None:
        raise AssertionError("the tournament started before the refusal")

    monkeypatch.setattr(evaluate_cli, "run_tournament", played)


def test_evaluate_refuses_a_negative_seed(capsys, tmp_path) -> None:
    code, err = _evaluate(["--agents", "random", "greedy", "--seed", "-1", "--out", str(tmp_path / "r")], capsys)
    assert code == 2 and "argument --seed: expected an integer >= 0, got '-1'" in err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("text", ["-1", "x", "1.5", ""])
def test_the_seed_option_names_the_valid_range_and_the_text_given(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=f"expected an integer >= 0, got {text!r}"):
        seed_option()(text)
    with pytest.raises(argparse.ArgumentTypeError, match=re.escape(f"from 0 to 9 (a limit), got {text!r}")):
        seed_option(9, "a limit")(text)
    assert seed_option()("0") == 0 and seed_option(9)("9") == 9 and seed_option()(str(2**70)) == 2**70
    with pytest.raises(argparse.ArgumentTypeError, match="expected an integer from 0 to 9, got '10'"):
        seed_option(9)("10")


@pytest.mark.posix
def test_sigterm_inside_a_command_is_an_interrupt_and_the_handler_is_put_back() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt, match="SIGTERM"), sigterm_as_interrupt():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler runs between two bytecodes: it never gets here
    assert signal.getsignal(signal.SIGTERM) == before
    assert sigterm_received()
    with sigterm_as_interrupt():  # the next command starts without the last one's signal
        assert not sigterm_received()


class _Unhandled(Exception):
    """SIGTERM reached the test's own handler: the command did not take it."""


@pytest.mark.posix
def test_evaluate_stopped_by_sigterm_says_so_in_one_line(tmp_path, capsys, monkeypatch) -> None:
    """A ``kill`` ended evaluate without a word (SIGTERM's default), like a crash."""
    real = tournament._play_chunk

    def sigterm_then_play(*args, **kwargs):  # the signal arrives while the games are played
        os.kill(os.getpid(), signal.SIGTERM)
        return real(*args, **kwargs)

    def unhandled(signum, frame):
        raise _Unhandled

    monkeypatch.setattr(tournament, "_play_chunk", sigterm_then_play)
    argv = ["--agents", "random", "greedy", "--games", "4", "--workers", "1", "--no-progress"]
    previous = signal.signal(signal.SIGTERM, unhandled)  # a command that does not take it fails the test
    try:
        code = evaluate_cli.main([*argv, "--out", str(tmp_path / "r")])
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert code == 130
    assert "interrupted: the games played are not reported" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("argv0", "expected"),
    [
        ("/venv/bin/umbrella-evaluate", "umbrella-evaluate"),
        ("evaluate.py", "python evaluate.py"),
        ("/x/umbrella_env/evaluation/__main__.py", "python evaluate.py"),
        ("/x/umbrella_env/evaluation/cli.py", "python evaluate.py"),  # python -m: the module's file
        ("-c", "python evaluate.py"),
        ("/venv/bin/pytest", "python evaluate.py"),
    ],
)
def test_usage_lines_name_the_command_as_typed(monkeypatch, capsys, argv0: str, expected: str) -> None:
    """``umbrella-evaluate --help`` printed ``usage: python evaluate.py``."""
    monkeypatch.setattr(sys, "argv", [argv0])
    assert program_name("python evaluate.py", ("umbrella-evaluate", "evaluate.py")) == expected
    assert evaluate_cli.main(["--players", "1"]) == 2
    assert capsys.readouterr().err.startswith(f"usage: {expected} ")


@pytest.mark.parametrize(
    ("module", "argv"),
    [
        ("umbrella_env.evaluation.cli", ["--agents", "random", "greedy"]),
        ("umbrella_env.evaluation.ladder", ["--solo-games", "2"]),
        ("umbrella_env.evaluation.tune_heuristic", ["--games", "1"]),
        ("umbrella_env.tools.differential", ["--states", "1"]),
        ("umbrella_env.demo", []),
    ],
)
def test_every_command_answers_a_bad_seed_alike_before_any_work(module, argv, capsys, tmp_path, monkeypatch) -> None:
    """One seed policy for the commands: argparse refuses the text with the range, exit status 2."""
    monkeypatch.chdir(tmp_path)  # a command that got past the check would write here
    main = importlib.import_module(module).main
    try:
        code = main([*argv, "--seed", "-3"])
    except SystemExit as exc:
        code = exc.code
    assert code == 2
    assert "argument --seed: expected an integer >= 0, got '-3'" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("module", "argv"),
    [
        ("umbrella_env.evaluation.cli", ["--agents", "random", "greedy", "--games", "2", "--out", ""]),
        ("umbrella_env.demo", ["--gif", ""]),
        ("umbrella_env.demo", ["--frames", " "]),
        ("umbrella_env.demo", ["--svg", ""]),
        pytest.param("umbrella_env.export", ["agents/models/az-2p.pt", ""], marks=pytest.mark.train),  # needs torch
        pytest.param("umbrella_env.training.alphazero", ["--out", ""], marks=pytest.mark.train),
        pytest.param("umbrella_env.training.ppo", ["--out", ""], marks=pytest.mark.train),
    ],
)
def test_an_empty_path_is_refused_not_taken_for_the_current_folder(module, argv, capsys, tmp_path, monkeypatch) -> None:
    """``--out ""`` (an unset shell variable) wrote a whole report or run into the current folder."""
    monkeypatch.chdir(tmp_path)
    main = importlib.import_module(module).main
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    assert code == 2
    assert "expected a path, got" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_evaluate_refuses_an_unwritable_out_folder_before_playing(capsys, tmp_path, monkeypatch) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    real_access = os.access
    # Permission bits do not stop root (CI runs as root), so the check's view of them is simulated.
    monkeypatch.setattr(os, "access", lambda path, mode: False if Path(path) == locked else real_access(path, mode))
    _no_game(monkeypatch)
    code, err = _evaluate(["--agents", "random", "greedy", "--games", "2", "--out", str(locked / "r")], capsys)
    assert code == 2 and "is not writable" in err
    assert not (locked / "r").exists()


def test_evaluate_refuses_an_out_path_that_is_a_file(capsys, tmp_path) -> None:
    target = tmp_path / "report.md"
    target.write_text("x", encoding="utf-8")
    code, err = _evaluate(["--agents", "random", "greedy", "--games", "2", "--out", str(target / "sub")], capsys)
    assert code == 2 and "is a file, not a folder" in err


@pytest.mark.parametrize(
    ("attr", "message"),
    [("NOT_CALLABLE", "not an agent factory"), ("not_an_agent", "not an agent")],
)
def test_evaluate_refuses_a_factory_that_does_not_make_an_agent(capsys, tmp_path, attr, message) -> None:
    spec = f"tests.test_cli_errors:{attr}"
    code, err = _evaluate(["--agents", "random", spec, "--games", "2", "--out", str(tmp_path / "r")], capsys)
    assert code == 2 and message in err and spec in err


def test_play_refuses_a_checkpoint_of_another_configuration(tmp_path) -> None:
    """One check for evaluate and play: the match runner's build_agent reads the sidecar."""
    ckpt = tmp_path / "solo.zip"
    ckpt.write_bytes(b"PK")
    ckpt.with_suffix(".json").write_text(
        '{"num_players": 1, "plate_level": 1, "obs_size": 899, "num_actions": 968}', encoding="utf-8"
    )
    with pytest.raises(AgentSpecError, match="num_players=1.*num_players=2"):
        build_agent(str(ckpt), GameConfig(num_players=2))
    out = io.StringIO()
    code = play_main(["--players", "2", "--opponents", str(ckpt), "--seed", "1"], stdin=io.StringIO(""), stdout=out)
    assert code == 2 and "num_players=1" in out.getvalue()


def test_play_refuses_a_negative_seed() -> None:
    out = io.StringIO()
    assert play_main(["--seed", "-5"], stdin=io.StringIO(""), stdout=out) == 2
    assert "argument --seed: expected an integer >= 0, got '-5'" in out.getvalue()


@pytest.mark.train
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--seed", "-1"], f"{SB3_SEED}, got '-1'"),
        (["--seed", "4294967296"], f"{SB3_SEED}, got '4294967296'"),  # SB3's limit
        (["--eval-games", "0"], "--eval-games must be an integer >= 1, got 0"),
        (["--eval-opponent", "nosuch"], "unknown agent 'nosuch'"),
        (["--timesteps", "0"], "--timesteps must be a number in [1, 1000000000000], got 0.0"),
        (
            ["--timesteps", "nan"],
            "--timesteps must be a number in [1, 1000000000000], got nan",
        ),  # used to crash after the env was built
        (["--timesteps", "inf"], "--timesteps must be a number in [1, 1000000000000], got inf"),
        (["--timesteps", "1e99"], "--timesteps must be a number in [1, 1000000000000], got 1e+99"),  # trained forever
        (["--players", "1", "--shaping", "0.5"], "--shaping applies to 2-4 players only"),  # solo rewards the score
        (["--workers", "2"], "--workers needs --pretrain AGENT"),
        (["--n-envs", "4", "--batch-size", "200"], "--batch-size 200 is larger than a rollout (32 steps x --n-envs 4"),
        # a minibatch of one decision made PPO's advantage normalization NaN, then a torch traceback
        (["--batch-size", "1"], "--batch-size 1 leaves minibatches of 1 decision in each rollout of 2048"),
        (["--players", "1", "--n-envs", "1", "--batch-size", "31"], "--batch-size 31 leaves minibatches of 1"),
        (["--pretrain", "heuristic", "--pretrain-cache", "teacher"], "expected a file name ending in .npz"),
        # checkpoints made for another game are refused before training, not when first played
        (["--players", "3", "--eval-opponent", "az-2p-net"], "trained for num_players=2"),
        (["--players", "3", "--opponents", "random", "az-2p-net"], "trained for num_players=2"),
        (["--players", "3", "--pretrain", "az-2p-net"], "trained for num_players=2"),
    ],
)
def test_train_refuses_bad_options_before_training_and_leaves_no_folder(tmp_path, capsys, argv, message) -> None:
    from umbrella_env.training import ppo

    out = tmp_path / "run"
    info_code = ppo.main(argv + ["--out", str(out)])
    assert info_code == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.train
def test_train_scripts_at_the_top_level_run_from_a_clone() -> None:
    import subprocess

    for script in ("train.py", "evaluate.py"):
        out = subprocess.run([sys.executable, script, "--help"], cwd=REPO, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert "--seed" in out.stdout


def test_rllib_bench_help_lists_its_own_options_and_refuses_bad_ones_without_ray(capsys) -> None:
    from umbrella_env import rllib_bench

    assert rllib_bench.main(["--help"]) == 0
    out = capsys.readouterr().out
    for option in ("--runners", "--steps", "--bench-iterations", "--players", "--num-env-runners"):
        assert option in out
    assert "python -m umbrella_env.rllib_bench" in out and "Where the time of RLlib training goes" in out
    for argv, message in [
        (["--steps", "0"], "--steps must be an integer >= 1, got 0"),
        (["--bench-iterations", "0"], "--bench-iterations must be an integer >= 1, got 0"),
        (["--runners", "1", "-1"], "--runners must be an integer >= 0, got -1"),
        (["--learning-rate", "nan"], "--learning-rate must be a number in (0, 1], got nan"),
        (["--out", "x", "--eval-games", "4"], "--eval-games, --out: not used by this benchmark"),
    ]:
        assert rllib_bench.main(argv) == 2
        assert message in capsys.readouterr().err  # the option is refused before Ray is looked for


def test_rllib_bench_ctrl_c_is_one_line_and_exit_130(monkeypatch, capsys) -> None:
    # Ctrl-C used to end the benchmark in a traceback; Ray itself is stood in for here
    from contextlib import nullcontext

    from umbrella_env import rllib_bench

    def measure(args, runners, steps, iterations):
        if runners == 2:
            raise KeyboardInterrupt
        return {"env_runners": runners}

    monkeypatch.setattr(rllib_bench, "import_ray", lambda prog: None)
    monkeypatch.setattr(rllib_bench, "ray_session", lambda address, what: nullcontext(None))
    monkeypatch.setattr(rllib_bench, "cluster_cpus", lambda ray: 4)
    monkeypatch.setattr(rllib_bench, "measure", measure)
    assert rllib_bench.main(["--runners", "1", "2"]) == 130
    out, err = capsys.readouterr()
    assert '{"env_runners": 1}' in out
    assert "Traceback" not in err and "interrupted: 1 of 2 measurement(s) done" in err


#: The commands that run a process pool (parallel.command_exits): the module, the function
#: the test replaces to stop it mid-work, and the arguments.
POOL_COMMANDS = [
    ("umbrella_env.evaluation.ladder", "pair_match", ["--pair-games", "1"]),
    ("umbrella_env.evaluation.tune_heuristic", "tune", ["--games", "1"]),
    pytest.param(
        "umbrella_env.training.bench_alphazero",
        "selfplay_chunk",
        ["--games", "1", "--peer-games", "0"],
        marks=pytest.mark.train,  # imports torch
    ),
]


@pytest.mark.parametrize(("module", "where", "argv"), POOL_COMMANDS)
def test_pool_commands_ctrl_c_is_one_line_and_exit_130(module: str, where: str, argv: list[str], monkeypatch, capsys):
    # the ladder, the heuristic tuner and the self-play benchmark used to end Ctrl-C in a traceback
    mod = importlib.import_module(module)

    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(mod, where, stop)
    assert mod.main(argv) == 130
    err = capsys.readouterr().err
    assert err.strip().splitlines() == ["interrupted: the work in flight is lost (what was printed above stands)"]


@pytest.mark.posix
@pytest.mark.parametrize(("module", "where", "argv"), POOL_COMMANDS)
def test_pool_commands_stopped_by_sigterm_say_so_and_exit_130(module, where, argv, monkeypatch, capsys) -> None:
    """SIGTERM ended the ladder (and every command but evaluate's and train.py's) with its
    default action: no word, exit 143, and the pool's workers left running as orphans."""
    mod = importlib.import_module(module)

    def unhandled(signum, frame):
        raise _Unhandled

    def sigterm(*args, **kwargs):  # the signal arrives while the work runs
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler runs between two bytecodes: it never gets here
        raise AssertionError("SIGTERM was not delivered")

    monkeypatch.setattr(mod, where, sigterm)
    previous = signal.signal(signal.SIGTERM, unhandled)
    try:
        assert mod.main(argv) == 130
        assert signal.getsignal(signal.SIGTERM) is unhandled  # the command put the handler back
    finally:
        signal.signal(signal.SIGTERM, previous)
    err = capsys.readouterr().err
    assert err.strip().splitlines() == ["interrupted: the work in flight is lost (what was printed above stands)"]


@pytest.mark.parametrize(
    ("module", "argv", "message"),
    [
        ("umbrella_env.tools.differential", ["--states", "-5"], "--states must be an integer >= 1, got -5"),
        ("umbrella_env.tools.differential", ["--seed", "-1"], "argument --seed: expected an integer >= 0, got '-1'"),
        ("umbrella_env.evaluation.ladder", ["--pair-games", "-3"], "--pair-games must be an integer >= 0, got -3"),
        (
            "umbrella_env.evaluation.ladder",
            ["--solo-games", "2", "--jobs", "0"],
            "--workers must be an integer >= 1, got 0",
        ),
        ("umbrella_env.evaluation.ladder", ["--solo-games", "2", "--level", "7"], "must be 1, 2, 3 or 4, got 7"),
        (  # refused before any game (it used to play random-greedy, then end in a traceback)
            "umbrella_env.evaluation.ladder",
            ["--pair-games", "1", "--agents", "random", "greedy", "search:simulations=0"],
            "--agents 'search:simulations=0': simulations must be an integer from 1 to 1,000,000, got 0",
        ),
        pytest.param(
            "umbrella_env.training.bench",
            ["--bench-timesteps", "0"],
            "--bench-timesteps must be an integer >= 1, got 0",
            marks=pytest.mark.train,  # imports torch
        ),
        pytest.param(
            "umbrella_env.training.bench",
            ["--n-envs", "0"],
            "--n-envs must be an integer from 1 to 1,000,000, got 0",
            marks=pytest.mark.train,
        ),
        # train.py options a benchmark would ignore, and values that crashed or hung it
        pytest.param(
            "umbrella_env.training.bench",
            ["--out", "x", "--quick"],
            "--out, --quick: not used by this benchmark",
            marks=pytest.mark.train,
        ),
        pytest.param(
            "umbrella_env.training.bench",
            ["--level", "9"],
            "--level (plate level) must be 1, 2, 3 or 4, got 9",
            marks=pytest.mark.train,
        ),
        *(  # PPO named the core's num_players / plate_level, not its options
            pytest.param(module, argv, message, marks=pytest.mark.train)
            for module in ("umbrella_env.training.ppo", "umbrella_env.training.bench_alphazero")
            for argv, message in (
                (["--players", "5"], "--players must be 1 (solo), 2, 3 or 4, got 5"),
                (["--level", "0"], "--level (plate level) must be 1, 2, 3 or 4, got 0"),
            )
        ),
        pytest.param(
            "umbrella_env.training.bench",
            ["--rounds", "0"],
            "--rounds must be an integer >= 1, got 0",
            marks=pytest.mark.train,
        ),
        pytest.param(  # it timed a whole rollout per round (6,144 steps for 10 asked)
            "umbrella_env.training.bench",
            ["--bench-timesteps", "10", "--rounds", "3"],
            "--bench-timesteps 10 is less than one rollout per round: each round times whole rollouts, so give at "
            "least --rounds 3 x 32 steps x --n-envs 64 = 6,144",
            marks=pytest.mark.train,
        ),
        pytest.param(
            "umbrella_env.training.bench_alphazero",
            ["--peer-games", "-1"],
            "--peer-games must be an integer >= 0, got -1",
            marks=pytest.mark.train,
        ),
        pytest.param(
            "umbrella_env.training.bench_alphazero",
            ["--max-considered", "1"],
            "--max-considered must be an integer >= 2, got 1",
            marks=pytest.mark.train,
        ),
        ("umbrella_env.tools.bench_core", ["--seconds", "nan"], "--seconds must be a finite number > 0, got nan"),
        ("umbrella_env.tools.bench_core", ["--batches", "0"], "--batches must be an integer from 1 to 1,000,000"),
        # NumPy's MemoryError, after the reference engine's timing
        (
            "umbrella_env.tools.bench_core",
            ["--batches", "4096", "1000000000"],
            "--batches must be an integer from 1 to 1,000,000, got 1000000000",
        ),
        ("umbrella_env.tools.bench_single", ["--repeat", "0"], "--repeat must be an integer >= 1, got 0"),
        (
            "umbrella_env.tools.bench_envs",
            ["--num-envs", "0"],
            "--num-envs must be an integer from 1 to 100,000, got 0",
        ),
        (
            "umbrella_env.tools.bench_envs",
            ["--num-envs", "1000000000"],
            "--num-envs must be an integer from 1 to 100,000, got 1000000000",
        ),
    ],
)
def test_check_and_benchmark_tools_refuse_bad_options(module: str, argv: list[str], message: str, capsys) -> None:

    info_code = importlib.import_module(module).main(argv)
    assert info_code == 2 and message in capsys.readouterr().err


def test_bench_envs_without_its_peer_needs_no_pygame(monkeypatch, capsys) -> None:
    from umbrella_env.tools import bench_envs

    monkeypatch.setitem(sys.modules, "pettingzoo.classic", None)  # as without pygame: the import fails
    info_code = bench_envs.main(["--seconds", "0.01", "--num-envs", "4"])
    assert info_code == 2 and "or give --skip-peer to time our envs only" in capsys.readouterr().err
    assert bench_envs.main(["--seconds", "0.01", "--num-envs", "4", "--skip-peer"]) == 0
    rows = capsys.readouterr().out.splitlines()[1:]
    assert [r.split("  ")[0] for r in rows] == [
        "umbrella AEC, 2 players", "umbrella AEC, 4 players", "umbrella solo (gymnasium.make)",
        "umbrella vector env, 4 envs",
    ]  # fmt: skip
    assert all(float(r.split()[-1].replace(",", "")) > 0 for r in rows), rows  # steps/s, no ratio column


@pytest.mark.skipif(
    not Path("/proc/self").is_dir(), reason="needs Linux's /proc, where not even root can create a folder"
)
@pytest.mark.parametrize(
    "tool", ["evaluate", *(pytest.param(t, marks=pytest.mark.train) for t in ("ppo", "alphazero"))]
)  # the trainers import torch
def test_every_run_folder_that_cannot_be_created_is_refused_before_any_work(tool: str, capsys, monkeypatch) -> None:
    # /proc passes the permission-bit check as root, yet refuses mkdir: the tools probe for real.
    out = ["--out", "/proc/umbrella-env-test/run"]
    if tool == "evaluate":
        _no_game(monkeypatch)
        code, err = _evaluate(["--agents", "random", "greedy", "--games", "2", *out], capsys)
    else:
        trainer = importlib.import_module(f"umbrella_env.training.{tool}")
        info_code = trainer.main(out)
        code, err = info_code, capsys.readouterr().err
    assert code == 2
    assert (
        "--out '/proc/umbrella-env-test/run' cannot hold the" in err
        and "'/proc' does not take a new file or folder" in err
    )


def test_a_folder_given_as_an_agent_is_named_a_folder(capsys, tmp_path) -> None:
    code, err = _evaluate(["--agents", str(tmp_path), "random", "--games", "2", "--out", str(tmp_path / "r")], capsys)
    assert code == 2 and f"agent {str(tmp_path)!r} is a folder: a checkpoint is a file (.zip, .pt or .onnx)" in err
    assert f"'rllib:{tmp_path}'" in err


@pytest.mark.train
def test_the_trainers_usage_above_an_error_is_one_line(capsys) -> None:
    """The whole option list (20 lines for train.py, 41 with --algo alphazero) came above
    each one-line error."""
    from umbrella_env.training import cli

    for argv in (["--bogus"], ["--algo", "alphazero", "--bogus"]):
        assert cli.main(argv) == 2
        err = capsys.readouterr().err.splitlines()
        assert len(err) == 2 and err[0].endswith("[options]  (--help lists them)"), err
        assert err[1].endswith("error: unrecognized arguments: --bogus")


def test_the_ladder_takes_workers_as_every_command_does(capsys) -> None:
    from umbrella_env.evaluation import ladder

    assert ladder.main(["--solo-games", "2", "--workers", "0"]) == 2
    assert "--workers must be an integer >= 1, got 0" in capsys.readouterr().err


def test_evaluate_names_every_kind_of_agent_for_an_unknown_one(capsys, tmp_path) -> None:
    code, err = _evaluate(["--agents", "random", "nonsense", "--games", "2", "--out", str(tmp_path / "r")], capsys)
    assert code == 2 and "unknown agent 'nonsense'" in err
    for kind in ("az-2p-net", "net:PATH.pt", "rllib:FOLDER", "package.module:factory", ".zip"):
        assert kind in err


def test_evaluate_explains_a_label_it_cannot_read(capsys, tmp_path) -> None:
    code, err = _evaluate(["--agents", "my agent=random", "greedy", "--games", "2", "--out", str(tmp_path)], capsys)
    assert code == 2 and "the label before '=' may use only letters, digits" in err


@pytest.mark.train
def test_a_factory_agent_made_for_another_game_is_bad_input_before_any_game(capsys, tmp_path) -> None:
    # A factory that loads the shipped solo model, named for a 2-player tournament: refused while
    # the agents are built (exit 2), as the same model named directly is; it used to fail in the
    # first game with exit status 1.
    factory = "umbrella_env.training.alphazero:az_solo_128"
    code, err = _evaluate(["--agents", factory, "random", "--games", "2", "--out", str(tmp_path / "r")], capsys)
    assert code == 2 and "was trained for num_players=1" in err
    assert not (tmp_path / "r").exists()


def test_evaluate_refuses_workers_that_the_ray_backend_would_ignore(capsys, tmp_path) -> None:
    argv = ["--agents", "random", "greedy", "--backend", "ray", "--workers", "2", "--out", str(tmp_path / "r")]
    code, err = _evaluate(argv, capsys)
    assert code == 2 and "--workers sizes the local process pool" in err


def test_ladder_specs_read_flags_and_none() -> None:
    from umbrella_env.evaluation.ladder import parse_spec

    assert parse_spec("heuristic:look_ahead=False,top_k=4") == ("heuristic", {"look_ahead": False, "top_k": 4})
    assert parse_spec("x.pt:search=true,max_considered=none,seconds=0.5") == (
        "x.pt",
        {"search": True, "max_considered": None, "seconds": 0.5},
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [  # Python's "unexpected keyword argument" named no option; the others were accepted silently
        ("search:foo=1", "--agents 'search:foo=1': agent 'search' takes no option 'foo'; its options: simulations, "),
        ("search:simulations=2,simulations=3", "--agents 'search:simulations=2,simulations=3': option 'simulations' "
         "given twice"),
        ("heuristic:", "--agents 'heuristic:': nothing after ':' (give key=value options, or leave out the ':')"),
    ],
)  # fmt: skip
def test_the_ladder_refuses_options_an_agent_does_not_take(spec, message, capsys) -> None:
    from umbrella_env.evaluation import ladder

    info_code = ladder.main(["--solo-games", "1", "--agents", spec])
    assert info_code == 2 and message in capsys.readouterr().err


def test_make_agent_names_the_options_of_an_agent() -> None:
    from agents import make_agent

    with pytest.raises(
        TypeError, match=r"^agent 'heuristic' takes no option 'bar'; its options: name, weights, depth, "
    ):
        make_agent("heuristic", bar=3)
    with pytest.raises(TypeError, match=r"^agent 'greedy' takes no option 'simulations'; its options: name$"):
        make_agent("greedy", simulations=3)


def test_play_explains_that_it_takes_no_agent_options() -> None:
    out = io.StringIO()
    assert play_main(["--opponents", "search:simulations=100"], stdin=io.StringIO(""), stdout=out) == 2
    assert "agent 'search:simulations=100': this command takes no agent options (name:key=value is the " in (
        out.getvalue()
    )


def test_a_command_ends_ctrl_c_and_a_full_disk_in_one_line(capsys) -> None:
    """``cli_args.command``: what no handler of the command took (Ctrl-C while a trainer builds
    its model, a full disk under a checkpoint) is one line, not a traceback; another OSError
    is a bug's and keeps its traceback."""
    import errno

    from umbrella_env.cli_args import command

    def raising(exc: BaseException):
        @command
        def main() -> int:
            raise exc

        return main

    assert raising(KeyboardInterrupt())() == 130
    assert capsys.readouterr().err.strip() == "interrupted"
    full = OSError(errno.ENOSPC, "No space left on device", "runs/x/last.zip")
    assert raising(full)() == 1
    assert capsys.readouterr().err.strip() == "error: No space left on device: runs/x/last.zip"
    with pytest.raises(FileNotFoundError):
        raising(FileNotFoundError(errno.ENOENT, "No such file or directory", "x"))()
    with pytest.raises(BrokenPipeError):  # not stdout's (it is open): another pipe's, a bug's traceback
        raising(BrokenPipeError(errno.EPIPE, "Broken pipe"))()


_CLOSED_PIPE_PROGRAM = """
import pathlib, sys
from umbrella_env.cli_args import command, say

@command
def main() -> int:
    if sys.argv[2] == "say":
        say("interrupted at 2,048 steps: saving last.zip")  # the reader is gone: silenced
        pathlib.Path(sys.argv[1]).write_text("saved")  # what the line announced is still done
        print("done")  # and later plain prints go nowhere
        return 130
    if sys.argv[2] == "buffered":
        print("a status line")  # buffered: the closed pipe shows only when the command ends
        return 0
    print("a status line", flush=True)  # a plain print into the closed pipe
    pathlib.Path(sys.argv[1]).write_text("not reached")
    return 0

sys.exit(main())
"""


@pytest.mark.parametrize("how", ["say", "print", "buffered"])
@pytest.mark.parametrize("unbuffered", ["1", ""])
def test_a_closed_output_pipe_neither_stops_a_save_nor_prints_a_traceback(tmp_path, how: str, unbuffered: str) -> None:
    # `train.py ... | tee log` and Ctrl-C: tee died with the command, the "interrupted" line
    # raised BrokenPipeError before last.zip was saved, and Python printed a traceback.

    target = tmp_path / "last.zip"
    child = subprocess.Popen(
        [sys.executable, "-c", _CLOSED_PIPE_PROGRAM, str(target), how],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": unbuffered},  # a user's Python buffers a pipe; some CIs do not
    )
    child.stdout.close()  # the reader goes away before the first line
    err = child.stderr.read()
    child.wait(timeout=60)
    assert "Traceback" not in err and "Exception ignored" not in err, err
    if how == "say":
        assert child.returncode == 130 and target.read_text() == "saved"
    else:
        assert child.returncode == 1 and not target.exists()


def test_commands_print_symbols_their_output_cannot_encode_in_ascii(monkeypatch) -> None:
    from umbrella_env.cli_args import ASCII_SYMBOLS, command

    @command
    def main() -> int:
        print("row \u2212 column: 0.50 \u00b1 0.02, \u2265 27, \u2013, \u00a73, \u00e9")
        return 0

    for encoding, errors in [("cp1252", "strict"), ("ascii", "surrogateescape"), ("cp932", "strict")]:
        raw = io.BytesIO()
        stream = io.TextIOWrapper(raw, encoding=encoding, errors=errors)
        monkeypatch.setattr(sys, "stdout", stream)
        assert main() == 0
        assert stream.errors == errors  # put back
        text = raw.getvalue().decode(encoding)
        assert text.startswith("row ") and "0.50 " in text and " 27" in text
        if encoding == "ascii":
            assert text == "row - column: 0.50 +/- 0.02, >= 27, -, section 3, ?\n"
    assert set(ASCII_SYMBOLS) >= {"\u2212", "\u2013", "\u00b1", "\u2265"}
    utf8 = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    monkeypatch.setattr(sys, "stdout", utf8)
    assert main() == 0 and utf8.errors == "strict"

    @command
    def file_name() -> int:  # a file name that is not text in the locale keeps its bytes
        print(os.fsdecode(b"d\xc3\xa9") if sys.getfilesystemencoding() == "ascii" else "d\udcc3\udca9 \u00b1")
        return 0

    raw = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(raw, encoding="ascii", errors="surrogateescape"))
    assert file_name() == 0
    assert raw.getvalue().startswith(b"d\xc3\xa9")


def test_commands_in_two_threads_keep_the_ascii_symbols_until_both_end(monkeypatch) -> None:
    """The first command to end put back the strict handler while the other still printed:
    a UnicodeEncodeError in the second."""
    import threading

    from umbrella_env.cli_args import command

    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="cp1252", errors="strict", write_through=True)
    monkeypatch.setattr(sys, "stdout", stream)
    first_done, second_in = threading.Event(), threading.Event()

    results: list[int] = []

    @command
    def second() -> int:
        second_in.set()
        first_done.wait(10)
        print("0.50 \u2212 0.02")  # after the first command ended
        return 0

    thread = threading.Thread(target=lambda: results.append(second()))

    @command
    def first() -> int:
        thread.start()  # the second starts while the first runs
        second_in.wait(10)
        return 0

    assert first() == 0
    first_done.set()
    thread.join(10)
    assert results == [0] and b"0.50 - 0.02" in raw.getvalue() and stream.errors == "strict"


@pytest.mark.parametrize("encoding", ["cp1252", "cp932", "C"])
def test_evaluate_and_the_ladder_run_whatever_the_output_encoding(tmp_path, encoding: str) -> None:
    """Output to a file or a pipe on Windows is in the ANSI code page: evaluate.py ended in a
    UnicodeEncodeError at its standings' first "\u2212" (cp932: "\u2013"), after every game,
    before its report; the ladder at its first "\u2265", ``--help`` under ``LANG=C``."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING", "PYTHONUTF8", "LC_ALL", "LANG")}
    env.update({"LC_ALL": "C", "PYTHONUTF8": "0"} if encoding == "C" else {"PYTHONIOENCODING": encoding})
    out = tmp_path / "eval"
    runs = [
        [str(REPO / "evaluate.py"), "--agents", "random", "greedy", "--players", "1", "--games", "2", "--workers",
         "1", "--no-progress", "--out", str(out)],
        ["-m", "umbrella_env.evaluation.ladder", "--agents", "random", "greedy", "--solo-games", "1"],
        ["-m", "umbrella_env.evaluation.ladder", "--help"],
    ]  # fmt: skip
    for argv in runs:
        done = subprocess.run([sys.executable, *argv], env=env, capture_output=True, timeout=300)
        assert done.returncode == 0 and b"Error" not in done.stderr, done.stderr.decode(errors="replace")
    assert (out / "report.md").is_file()


def test_evaluate_writes_its_report_when_the_reader_of_its_output_went_away(tmp_path) -> None:
    """``evaluate.py ... | head -1``: rich's table met the closed pipe and ended the process
    (exit status 1) after every game, before the report was written."""
    out = tmp_path / "eval"
    child = subprocess.Popen(
        [sys.executable, str(REPO / "evaluate.py"), "--agents", "random", "greedy", "heuristic", "--players", "2",
         "--games", "40", "--workers", "1", "--no-progress", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    child.stdout.close()  # the reader goes away before the standings
    err = child.stderr.read()
    child.wait(timeout=300)
    assert "Traceback" not in err and child.returncode == 1, err  # every command's status for a closed pipe
    assert (out / "report.md").is_file() and (out / "games.jsonl").is_file()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_evaluate_writes_its_report_when_its_output_is_a_full_disk(tmp_path) -> None:
    """``evaluate.py ... > file`` on a full disk: printing the standings raised ENOSPC, a
    traceback after every game, and the report (on another disk) was never written."""
    out = tmp_path / "eval"
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, str(REPO / "evaluate.py"), "--agents", "random", "greedy", "--players", "2",
             "--games", "3", "--workers", "1", "--no-progress", "--out", str(out)],  # 3: a note "rounded up" first
            stdout=full, stderr=subprocess.PIPE, text=True, timeout=300,
        )  # fmt: skip
    assert "Traceback" not in done.stderr and done.returncode == 1, done.stderr
    said = f"error: the standings could not be printed (No space left on device); they are in the report: {out}"
    assert said in done.stderr
    assert (out / "report.md").is_file() and (out / "games.jsonl").is_file()


def test_the_benchmarks_end_ctrl_c_in_one_line(monkeypatch, capsys) -> None:
    from umbrella_env.tools import bench_core

    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(bench_core, "bench_batched", stop)
    assert bench_core.main(["--players", "2", "--batches", "1", "--seconds", "0.01"]) == 130
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip() == "interrupted"


def test_evaluate_on_a_full_disk_keeps_no_part_of_the_report(tmp_path, capsys, monkeypatch) -> None:
    """The standings are printed before the report is written; a report the disk cannot take
    leaves the folder as it was, in one line and exit status 1 (a 0-byte report.md stayed,
    without the games, and blocked the next run as a previous report; with --overwrite the
    previous report was gone)."""
    import errno

    from umbrella_env.evaluation import report

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")  # matplotlib's: no file name

    out = tmp_path / "r"
    argv = ["--agents", "random", "greedy", "--games", "2", "--out", str(out), "--no-progress"]
    with monkeypatch.context() as patch:
        patch.setattr(report, "write_plots", full)
        assert evaluate_cli.main(argv) == 1
    captured = capsys.readouterr()
    assert "greedy" in captured.out  # the standings
    assert captured.err.strip() == (
        f"error: the report could not be written to {out}: No space left on device; the folder is as it was "
        "(the standings are above)"
    )
    assert not out.exists()  # made for the report, removed with it
    assert evaluate_cli.main(argv) == 0  # not refused as a previous report
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert {"report.md", "games.jsonl", "summary.json", "winrates.png"} <= set(before)
    with monkeypatch.context() as patch:
        patch.setattr(report, "write_plots", full)
        assert evaluate_cli.main([*argv, "--seed", "9", "--overwrite"]) == 1
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # the previous report, whole


def test_runs_started_together_get_their_own_default_folders() -> None:
    """Two commands started in the same second without --out wrote into one folder (named to
    the second), the second replacing the first's files: the default folder names the process."""
    code = "from umbrella_env.paths import default_run_dir; print(default_run_dir('eval'))"
    runs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True) for _ in range(2)]
    names = [run.communicate()[0].strip() for run in runs]
    assert names[0] != names[1]
    assert all(re.fullmatch(r"runs/eval-\d{8}-\d{6}-\d+", name) for name in names)


@pytest.mark.train
def test_train_refuses_more_games_than_the_memory_holds(tmp_path, capsys, monkeypatch) -> None:
    """--n-envs 100000 took 13 GB and climbing in silence, then the out-of-memory killer: a
    rollout over half the memory is refused, with the most games that fit."""
    from umbrella_env.training import ppo

    monkeypatch.setattr(ppo, "memory_bytes", lambda: 8 * 2**30)
    assert ppo.rollout_bytes(1) == 32 * (899 + 968) * 4
    info_code = ppo.main(["--n-envs", "100000", "--out", str(tmp_path / "run")])
    assert info_code == 2
    err = capsys.readouterr().err
    assert "--n-envs 100000 needs about 22.3 GiB for one rollout" in err
    assert f"over half of this machine's 8.0 GiB: give at most {4 * 2**30 // ppo.rollout_bytes(1):,}" in err
    assert not (tmp_path / "run").exists()
    monkeypatch.setattr(ppo, "memory_bytes", lambda: None)  # a system that does not say: no bound but the core's
    args = ppo.resolve_defaults(ppo.build_parser().parse_args(["--n-envs", "100000"]))
    ppo.check_options(args)


def test_output_folders_and_atomic_writes_clean_up_after_a_failure(tmp_path) -> None:
    """``paths.output_folder`` removes the empty folders it made (parents included), never one
    that was there or holds something; ``write_atomically`` names the file asked for."""
    import errno

    from umbrella_env.paths import output_folder, write_atomically

    with pytest.raises(KeyboardInterrupt), output_folder(tmp_path / "a" / "b" / "c"):
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "kept").mkdir()
    with output_folder(tmp_path / "kept" / "run") as run:
        (run / "x").write_text("x")
    with output_folder(tmp_path / "kept"):
        pass
    assert (tmp_path / "kept" / "run" / "x").is_file()

    def full(tmp: Path) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp))

    with pytest.raises(OSError) as info:
        write_atomically(tmp_path / "last.zip", full)
    assert info.value.filename == str(tmp_path / "last.zip") and not list(tmp_path.glob("*.tmp"))
    with pytest.raises(OSError) as descriptor:  # an OSError naming a descriptor keeps it
        write_atomically(tmp_path / "x.json", lambda tmp: os.stat(987654))
    assert descriptor.value.errno == errno.EBADF and descriptor.value.filename == 987654


def test_two_writers_of_one_file_each_replace_it_whole(tmp_path) -> None:
    """Both writers used ``NAME.tmp``: one truncated or deleted the other's half-written file,
    a mixed file was moved into place and the other failed ("'x' -> 'x'").  Now each write has
    its own temporary file and the file is one writer's whole content."""
    import threading
    import time
    from concurrent.futures import ThreadPoolExecutor

    from umbrella_env.paths import write_atomically

    target = tmp_path / "history.json"

    def writer(letter: str, barrier: threading.Barrier) -> None:
        def write(tmp: Path) -> None:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(letter * 50_000)
                f.flush()
                time.sleep(0.05)  # the other writer starts meanwhile
                f.write(letter * 50_000)

        barrier.wait()
        write_atomically(target, write)

    for _ in range(3):
        barrier = threading.Barrier(2)
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(writer, "AB", [barrier, barrier]))  # re-raises a writer's error
        assert target.read_text(encoding="utf-8") in ("A" * 100_000, "B" * 100_000)
        assert [p.name for p in tmp_path.iterdir()] == ["history.json"]

    from umbrella_env.paths import remove_run

    (tmp_path / "history.json.0a1b2c3d.tmp").write_text("left by a killed write")  # --overwrite removes them
    (tmp_path / "ckpt.0a1b2c3d.tmp").mkdir()
    (tmp_path / "notes.tmp").write_text("the user's")
    remove_run(tmp_path, ["history.json", "ckpt"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.tmp"]

    def missing(tmp: Path) -> None:  # a rename's error names the file asked for, once
        pass

    with pytest.raises(OSError) as info:
        write_atomically(tmp_path / "gone.json", missing)
    assert info.value.filename == str(tmp_path / "gone.json") and info.value.filename2 is None
    assert str(tmp_path / "gone.json") + "' ->" not in str(info.value)


_COMMANDS = [
    "umbrella_env.evaluation.cli",
    "umbrella_env.evaluation.ladder",
    "umbrella_env.evaluation.tune_heuristic",
    "umbrella_env.play.cli",
    "umbrella_env.demo",
    "umbrella_env.tools.gendocs",
    "umbrella_env.tools.bench_envs",
    "umbrella_env.tools.differential",
    "umbrella_env.tools.bench_single",
    "umbrella_env.tools.bench_core",
    "umbrella_env.tools.playthrough",
    "umbrella_env.rllib_train",
    "umbrella_env.rllib_bench",
]
_TORCH_COMMANDS = [
    "umbrella_env.training.cli",
    "umbrella_env.training.alphazero",
    "umbrella_env.training.ppo",
    "umbrella_env.training.bench",
    "umbrella_env.training.bench_alphazero",
    "umbrella_env.export",
]


def _exit_statuses(module: str) -> None:
    main = importlib.import_module(module).main
    assert main(["--help"]) == 0
    assert main(["--no-such-option"]) == 2  # SystemExit(2) from the trainers, export, the ladder and the tools


@pytest.mark.parametrize("module", _COMMANDS)
def test_a_command_called_from_python_returns_its_exit_status(module: str) -> None:
    """``main(argv)`` returns what the shell would see, 0 after --help and 2 for a bad
    option, rather than raising SystemExit into a notebook (README, "From Python")."""
    _exit_statuses(module)


@pytest.mark.train
@pytest.mark.parametrize("module", _TORCH_COMMANDS)
def test_a_training_command_called_from_python_returns_its_exit_status(module: str) -> None:
    pytest.importorskip("torch", reason="the train extra's commands")
    _exit_statuses(module)


class _FakeTorch:
    """torch's process-wide settings as process_state_kept reads and writes them."""

    def __init__(self) -> None:
        self.threads, self.state, self.fail_restore, self.fail_read = 4, "initial", False, False
        fake = self

        class Random:
            @staticmethod
            def get_rng_state() -> str:
                if fake.fail_read:
                    fake.fail_read = False
                    raise KeyboardInterrupt  # Ctrl-C as a command starts
                return fake.state

            @staticmethod
            def set_rng_state(state: str) -> None:
                if fake.fail_restore:
                    fake.fail_restore = False
                    raise KeyboardInterrupt  # a second Ctrl-C while a command puts things back
                fake.state = state

        self.random = Random

    def get_num_threads(self) -> int:
        return self.threads

    def set_num_threads(self, n: int) -> None:
        self.threads = n

    def manual_seed(self, seed: int) -> None:
        self.state = f"seeded {seed}"


def test_process_state_is_put_back_by_the_outermost_command_even_after_an_interrupt(monkeypatch) -> None:
    """torch's threads and generator, ``random`` and NumPy's global stream come back when
    the outermost command leaves; an interrupt while they are put back does not leave the
    nesting count raised, which made every later command of the process keep nothing."""
    import random

    import numpy as np

    from umbrella_env import cli_args

    torch = _FakeTorch()
    monkeypatch.setitem(sys.modules, "torch", torch)
    random.seed(1), np.random.seed(2)
    expected = (random.random(), float(np.random.random()))
    random.seed(1), np.random.seed(2)
    with cli_args.process_state_kept():
        with cli_args.process_state_kept():  # a command calling another (train.py -> alphazero)
            cli_args.set_torch(threads=1, seed=7)
            random.seed(99), np.random.seed(99)
        assert (torch.threads, torch.state) == (1, "seeded 7")  # the inner one leaves them to the outer
    assert (torch.threads, torch.state) == (4, "initial")
    assert (random.random(), float(np.random.random())) == expected
    torch.fail_restore = True
    with pytest.raises(KeyboardInterrupt):
        with cli_args.process_state_kept():
            cli_args.set_torch(threads=2)
    assert cli_args._KEPT["depth"] == 0
    torch.fail_read = True
    with pytest.raises(KeyboardInterrupt):
        with cli_args.process_state_kept():
            pass
    assert cli_args._KEPT["depth"] == 0
    with cli_args.process_state_kept():
        cli_args.set_torch(threads=3, seed=5)
    assert (torch.threads, torch.state) == (4, "initial")


def test_every_json_file_is_strict_json() -> None:
    """One encoder for the files the commands write: NaN and infinities (an undefined spread,
    no best metric yet) become null, at any depth, where json.dumps wrote NaN / -Infinity."""
    from umbrella_env.paths import json_text

    value = {"best": float("-inf"), "rows": [1.5, float("nan"), (float("inf"), 2)], "n": 3, "name": "x"}
    text = json_text(value, indent=2)
    assert json.loads(text) == {"best": None, "rows": [1.5, None, [None, 2]], "n": 3, "name": "x"}
    assert "Infinity" not in text and "NaN" not in text
