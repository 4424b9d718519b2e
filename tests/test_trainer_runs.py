"""The two trainers' run folders: a previous run is never replaced silently, a resume reads
every file it needs before it starts (and refuses what it cannot read), an interrupted run
keeps what it trained, and options a run would ignore are refused."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the trainers need the train extra")

from tests.test_alphazero import TINY, _without  # noqa: E402
from umbrella_env.parallel import WorkerDied  # noqa: E402

pytestmark = pytest.mark.train

PPO = ["--players", "2", "--n-envs", "4", "--eval-every", "256", "--eval-games", "2", "--eval-opponent", "random",
       "--snapshot-every", "256", "--max-turns", "60", "--no-progress", "--torch-threads", "1", "--net", "32", "32",
       "--timesteps", "128"]  # fmt: skip


def strict_json(path: Path) -> Any:
    """The file's JSON, refused if it holds NaN or an infinity (Python's json module reads
    them; JSON, and so JavaScript's and most other parsers, do not)."""

    def refuse(name: str) -> None:
        raise ValueError(f"{path.name} holds {name}, which is not JSON")

    return json.loads(path.read_text(), parse_constant=refuse)


def _refused(main, argv: list[str], capsys) -> str:
    info_code = main(argv)
    assert info_code == 2
    return capsys.readouterr().err


@pytest.fixture(scope="module")
def az_run(tmp_path_factory) -> Path:
    from umbrella_env.training import alphazero

    out = tmp_path_factory.mktemp("az") / "run"
    assert alphazero.main([*TINY, "--out", str(out)]) == 0
    return out


def test_a_new_run_refuses_a_folder_holding_a_run_unless_told_to_replace_it(az_run: Path, tmp_path, capsys) -> None:
    from umbrella_env.training import alphazero, ppo

    before = (az_run / "best.pt").read_bytes()
    err = _refused(alphazero.main, [*TINY, "--seed", "6", "--out", str(az_run)], capsys)
    assert f"--out {str(az_run)!r} holds a previous run (best.pt" in err and "--overwrite to replace it" in err
    assert (az_run / "best.pt").read_bytes() == before  # it used to be replaced by the new run's
    out = tmp_path / "ppo"
    assert ppo.main([*PPO, "--out", str(out)]) == 0
    err = _refused(ppo.main, [*PPO, "--seed", "9", "--out", str(out)], capsys)
    assert "holds a previous run (best.json, last.json, progress.csv, best.zip" in err
    (out / "stale.txt").write_text("kept")
    assert ppo.main([*PPO, "--seed", "9", "--overwrite", "--out", str(out)]) == 0
    assert json.loads((out / "train_summary.json").read_text())["history"] != []
    assert (out / "stale.txt").read_text() == "kept"  # --overwrite removes the run's own files only
    # The other trainer's run is a previous run too, and --overwrite replaces all of it: the
    # trainers share best.json and last.json, and PPO's checkpoints stayed beside new sidecars.
    err = _refused(alphazero.main, [*TINY, "--out", str(out)], capsys)
    assert "holds a previous run (best.json, last.json, progress.csv, best.zip, last.zip" in err
    resume = [*_without(TINY, "--pretrain-games", "--pretrain-epochs"), "--resume", str(out / "last.zip")]
    err = _refused(alphazero.main, [*resume, "--out", str(tmp_path / "z")], capsys)
    # it said "format None"
    assert "is not an alphazero network (a MaskablePPO checkpoint (python train.py --algo ppo))" in err
    assert alphazero.main([*TINY, "--overwrite", "--out", str(out)]) == 0
    assert not [n for n in ("best.zip", "last.zip", "snapshot.zip", "train_summary.json") if (out / n).exists()]
    assert (out / "best.pt").is_file() and (out / "stale.txt").read_text() == "kept"


def test_az_resume_applies_the_learning_rate_and_weight_decay_given(az_run: Path, tmp_path) -> None:
    from umbrella_env.training import alphazero

    saved = torch.load(az_run / "optimizer.pt", weights_only=True)["optimizer"]["param_groups"][0]
    argv = [*_without(TINY, "--pretrain-games", "--pretrain-epochs", "--iterations"), "--iterations", "2"]
    resume = ["--resume", str(az_run / "last.pt")]
    assert alphazero.main([*argv, *resume, "--learning-rate", "0.05", "--weight-decay", "0.5",
                           "--out", str(tmp_path / "a")]) == 0  # fmt: skip
    group = torch.load(tmp_path / "a" / "optimizer.pt", weights_only=True)["optimizer"]["param_groups"][0]
    assert (group["lr"], group["weight_decay"]) == (0.05, 0.5) != (saved["lr"], saved["weight_decay"])
    # not given: the saved ones, here run a's, which are not the options' defaults
    more = [*argv[:-1], "3", "--resume", str(tmp_path / "a" / "last.pt"), "--out", str(tmp_path / "b")]
    assert argv[-2:] == ["--iterations", "2"] and alphazero.main(more) == 0
    group = torch.load(tmp_path / "b" / "optimizer.pt", weights_only=True)["optimizer"]["param_groups"][0]
    assert (group["lr"], group["weight_decay"]) == (0.05, 0.5)


def test_az_resume_goes_on_with_its_runs_settings_unless_given(az_run: Path, tmp_path, capsys) -> None:
    """A resume left --max-turns, --simulations, --selfplay, ... at the options' defaults,
    unsaid (a run of 40-turn games went on at 100 turns, a policy-gradient run with the
    Gumbel search; trainer audit, 2026-12-07); the sidecar recorded them all along."""
    import shutil

    from umbrella_env.training import alphazero

    meta = json.loads((az_run / "last.json").read_text())
    assert (meta["max_turns"], meta["simulations"]) == (40, 2)
    bare = [*_without(TINY, "--pretrain-games", "--pretrain-epochs", "--iterations", "--max-turns", "--simulations"),
            "--iterations", "2", "--resume", str(az_run / "last.pt")]  # fmt: skip
    assert alphazero.main([*bare, "--out", str(tmp_path / "a")]) == 0
    assert "note:" not in capsys.readouterr().out
    after = json.loads((tmp_path / "a" / "last.json").read_text())
    assert (after["max_turns"], after["simulations"]) == (40, 2)
    assert alphazero.main([*bare, "--simulations", "3", "--out", str(tmp_path / "b")]) == 0
    assert "note: the checkpoint's run trained with --simulations 2; this run uses 3" in capsys.readouterr().out
    assert json.loads((tmp_path / "b" / "last.json").read_text())["simulations"] == 3
    assert "measured another way" not in capsys.readouterr().err  # evaluated as the run was
    assert alphazero.main([*bare, "--eval-games", "3", "--out", str(tmp_path / "e")]) == 0
    # the best of 2 games was kept against evaluations of 3 (trainer audit): a new best.pt
    assert "the run's evaluations were measured another way" in capsys.readouterr().err
    history = json.loads((tmp_path / "e" / "history.json").read_text())
    measured = [h.get("measured") for h in history["history"]]
    assert measured[-1] == {"eval_games": 3, "eval_search_games": 0} != measured[0]
    run = tmp_path / "run"
    shutil.copytree(az_run, run)
    (run / "last.json").write_text(json.dumps({**meta, "selfplay": "other"}))
    bare[-1] = str(run / "last.pt")
    assert alphazero.main([*bare, "--simulations", "3", "--out", str(tmp_path / "c")]) == 2
    said = capsys.readouterr()
    assert "--resume: with the settings the checkpoint records: --selfplay must be one of gumbel" in said.err
    assert "note:" not in said.out  # no note of a refused run


def test_az_resume_of_a_policy_gradient_run_keeps_its_mode_and_options(tmp_path, capsys) -> None:
    """A policy-gradient run resumed without --selfplay went on with the Gumbel search, and its
    --pg-* options went back to their defaults; one given (--pg-epochs) was refused as 'not used
    by this run' (diff review, 2026-12-07)."""
    from umbrella_env.training import alphazero

    solo = ["--players", "1", "--games", "4", "--batch-size", "32", "--pretrain-games", "0", "--eval-every", "1",
            "--eval-games", "2", "--eval-search-games", "0", "--max-turns", "40", "--hidden", "32", "--workers", "1",
            "--seed", "5", "--torch-threads", "1", "--no-progress"]  # fmt: skip
    run = tmp_path / "pg"
    assert alphazero.main([*solo, "--selfplay", "policy-gradient", "--pg-temperature", "0.6", "--iterations", "1",
                           "--out", str(run)]) == 0  # fmt: skip
    assert alphazero.main([*solo, "--pg-epochs", "2", "--iterations", "2", "--resume", str(run / "last.pt"),
                           "--out", str(run)]) == 0  # fmt: skip
    meta = json.loads((run / "last.json").read_text())
    assert meta["selfplay"] == "policy-gradient" and meta["pg"]["temperature"] == 0.6 and meta["pg"]["epochs"] == 2
    assert "note: the checkpoint's run trained with --pg-epochs" in capsys.readouterr().out


def test_az_resume_says_what_it_cannot_continue(az_run: Path, tmp_path, capsys) -> None:
    # A lone last.pt, or best.pt beside last.pt's optimizer state, started a fresh optimizer
    # and history (or took another iteration's optimizer) without a word.
    import shutil

    from umbrella_env.training import alphazero

    argv = [*_without(TINY, "--pretrain-games", "--pretrain-epochs", "--iterations"), "--iterations", "2"]
    lone = tmp_path / "lone"
    lone.mkdir()
    for name in ("last.pt", "last.json"):
        shutil.copy(az_run / name, lone / name)
    assert alphazero.main([*argv, "--resume", str(lone / "last.pt"), "--out", str(lone)]) == 0
    err = capsys.readouterr().err
    assert f"note: --resume: no history.json beside {str(lone / 'last.pt')!r}: the evaluation history" in err
    assert f"note: --resume: no optimizer.pt beside {str(lone / 'last.pt')!r}: a fresh optimizer" in err
    saved = torch.load(az_run / "optimizer.pt", weights_only=True)
    assert saved["iteration"] == json.loads((az_run / "last.json").read_text())["iteration"]
    other = tmp_path / "other"
    other.mkdir()
    for name in ("best.pt", "best.json", "history.json"):
        shutil.copy(az_run / name, other / name)
    meta = json.loads((other / "best.json").read_text())
    torch.save({**saved, "iteration": int(meta["iteration"]) + 1}, other / "optimizer.pt")  # last.pt's, a later one
    resume = alphazero.read_resume(other / "best.pt", alphazero.GameConfig(num_players=2))
    assert resume.optimizer is None and len(resume.notes) == 1
    assert f"is the optimizer state of iteration {int(meta['iteration']) + 1} (last.pt's)" in resume.notes[0]
    torch.save(saved["optimizer"], other / "optimizer.pt")  # a file of before the iteration was recorded
    assert alphazero.read_resume(other / "best.pt", alphazero.GameConfig(num_players=2)).optimizer is not None


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--learning-rate", "inf"], "--learning-rate must be a number in (0, 1], got inf"),  # saved a NaN network
        (["--learning-rate", "1e30"], "--learning-rate must be a number in (0, 1], got 1e+30"),  # only diverges
        (["--pretrain-learning-rate", "2"], "--pretrain-learning-rate must be a number in (0, 1], got 2.0"),
        (["--c-scale", "inf"], "--c-scale must be a number in (0, 100], got inf"),
        (["--c-scale", "1e307"], "--c-scale must be a number in (0, 100], got 1e+307"),  # NaN policy targets
        (["--weight-decay", "nan"], "--weight-decay must be a number in [0, 1], got nan"),  # a torch traceback
        (["--weight-decay", "1e30"], "--weight-decay must be a number in [0, 1], got 1e+30"),  # froze Adam
        (["--slide-hidden", "8193"], "--slide-hidden must be an integer from 1 to 8,192, got 8193"),  # no resume
        (
            ["--players", "1", "--selfplay", "policy-gradient", "--pretrain-games", "0", "--pg-temperature", "1e-12"],
            "--pg-temperature must be a finite number >= 0.001, got 1e-12",  # NaN losses, then a traceback
        ),
        (["--seed", str(2**64)], "argument --seed: expected an integer from 0 to 4,294,967,295"),
        (["--players", "1", "--margin-weight", "0.9"], "--margin-weight: not used by this run (solo values"),
        (["--eval-search-sims", "99"], "--eval-search-sims: not used by this run (they need --eval-search-games"),
        (["--teacher-sims", "7"], "--teacher-sims: not used by this run (the heuristic teacher does not search)"),
    ],
)
def test_az_refuses_values_it_cannot_use_before_any_work(extra: list[str], message: str, tmp_path, capsys) -> None:
    from umbrella_env.training import alphazero

    assert message in _refused(alphazero.main, [*TINY, *extra, "--out", str(tmp_path / "r")], capsys)
    assert not (tmp_path / "r").exists()


def test_az_resume_takes_its_runs_pretraining_options_and_refuses_others_and_unreadable_files(
    az_run: Path, tmp_path, capsys
) -> None:
    """The interrupted command with --resume added was refused for its pretraining options
    (--pretrain-games, --pretrain-epochs): equal to the run's, they are accepted and the run
    does not pretrain again; one that differs is refused, naming both values."""
    from umbrella_env.training import alphazero

    meta = json.loads((az_run / "last.json").read_text(encoding="utf-8"))
    assert (meta["pretrain_games"], meta["pretrain_epochs"], meta["pretrain_learning_rate"]) == (40, 3, 1e-3)
    argv = [*_without(TINY, "--iterations"), "--iterations", "2", "--out", str(tmp_path / "r")]
    resume = ["--resume", str(az_run / "last.pt")]
    err = _refused(alphazero.main, [*argv, *resume, "--teacher", "search"], capsys)
    assert (
        "--teacher search differs from the run's pretraining (heuristic): a resume goes on from the trained network"
        in err
    )
    err = _refused(alphazero.main, [*_without(argv, "--pretrain-games"), "--pretrain-games", "41", *resume], capsys)
    assert "--pretrain-games 41 differs from the run's pretraining (40)" in err
    assert not (tmp_path / "r").exists()
    assert alphazero.main([*argv, *resume, "--teacher", "heuristic"]) == 0
    out = capsys.readouterr().out
    assert (
        "note: --pretrain-games, --teacher, --pretrain-epochs: the run's pretraining, done at its start; "
        "a resumed run does not pretrain again" in out
    )
    assert "pretraining:" not in out  # not done again
    again = json.loads((tmp_path / "r" / "last.json").read_text(encoding="utf-8"))
    assert again["iteration"] == 2 and again["pretrain_epochs"] == 3  # the origin goes on
    argv = _without([*argv[:-1], str(tmp_path / "r2")], "--pretrain-games", "--pretrain-epochs")
    meta = json.loads((az_run / "last.json").read_text(encoding="utf-8"))
    unhashed = json.dumps({k: v for k, v in meta.items() if k != "sha256"}).encode()  # a sidecar of before the hash
    truncated = (az_run / "last.pt").read_bytes()[:1000]
    for i, (name, data, message) in enumerate((
        (("last.pt", "last.json"), (b"not a checkpoint", unhashed), "is not a torch file"),  # "(KeyError: 105)"
        ("last.pt", b"not a checkpoint", "(its SHA-256 differs): the file was changed or damaged after it was saved"),
        ("last.pt", truncated, "(its SHA-256 differs): the file was changed or damaged after it was saved"),
        (("last.pt", "last.json"), (truncated, unhashed), "is unreadable"),  # truncated, no hash to tell
        ("optimizer.pt", (az_run / "optimizer.pt").read_bytes()[:1000], "the optimizer state"),
        ("history.json", b'{"history": [', "the run's history"),
    )):  # fmt: skip
        given = dict(zip(name, data)) if isinstance(name, tuple) else {name: data}
        run = tmp_path / f"broken-{i}"
        run.mkdir()
        for f in ("last.pt", "last.json", "optimizer.pt", "history.json"):
            (run / f).write_bytes(given[f] if f in given else (az_run / f).read_bytes())
        err = _refused(alphazero.main, [*argv, "--resume", str(run / "last.pt")], capsys)
        assert message in err and str(run) in err  # used to be a traceback, after --out was made
        assert not (tmp_path / "r2").exists()


def test_az_the_interrupted_command_of_an_init_run_with_resume_added_runs(az_run: Path, tmp_path, capsys) -> None:
    """--init and --resume together were refused, so an --init run's command with --resume
    added did not run: --init is accepted on a resume as the file the run started from."""
    from umbrella_env.training import alphazero

    command = [
        *_without(TINY, "--iterations", "--pretrain-games", "--pretrain-epochs"),
        "--init",
        str(az_run / "last.pt"),
    ]
    out = tmp_path / "a"
    assert alphazero.main([*command, "--iterations", "1", "--out", str(out)]) == 0
    capsys.readouterr()
    assert alphazero.main([*command, "--iterations", "2", "--resume", str(out / "last.pt"), "--out", str(out)]) == 0
    assert (
        f"note: --init {az_run / 'last.pt'}: the run's start; a resume does not start anew" in capsys.readouterr().out
    )
    assert json.loads((out / "last.json").read_text())["iteration"] == 2
    other = [
        *command[:-1],
        str(out / "best.pt"),
        "--iterations",
        "3",
        "--resume",
        str(out / "last.pt"),
        "--out",
        str(out),
    ]
    err = _refused(alphazero.main, other, capsys)
    assert "--init is accepted on a resume only as the file the run started from" in err


def test_az_says_when_an_iteration_trains_nothing(tmp_path, capsys) -> None:
    from umbrella_env.training import alphazero

    argv = [*_without(TINY, "--buffer", "--pretrain-games", "--pretrain-epochs"), "--buffer", "5000",
            "--pretrain-games", "0", "--batch-size", "2000", "--out", str(tmp_path / "r")]  # fmt: skip
    argv = _without(argv, "--batch-size") + ["--batch-size", "2000"]
    assert alphazero.main(argv) == 0
    out = capsys.readouterr().out
    assert "no training (the buffer holds" in out and "a batch 2,000)" in out and "policy loss 0.000" not in out


def test_ppo_interrupted_keeps_last_zip_and_a_summary_that_says_so(tmp_path, monkeypatch, capsys) -> None:
    from umbrella_env.training import ppo

    def stop(self) -> bool:
        if self.num_timesteps >= 256:
            raise KeyboardInterrupt
        return True

    monkeypatch.setattr(ppo.TrainCallback, "_on_step", stop)
    out = tmp_path / "run"
    assert ppo.main([*_without(PPO, "--timesteps"), "--timesteps", "100000", "--out", str(out)]) == 130
    summary = json.loads((out / "train_summary.json").read_text())
    assert summary["interrupted"] is True and summary["final_metric"] is None
    # stopped in the second rollout (4 games x 32 steps each), before its update: last.zip holds the
    # network of the first update, and says so (it said 256, which a resume would never train on)
    assert json.loads((out / "last.json").read_text())["timesteps"] == summary["timesteps"] == 128
    assert "interrupted at 128 trained steps (of the 256 collected: the last update's)" in capsys.readouterr().err


def test_ppo_interrupted_in_the_final_evaluation_keeps_last_zip(tmp_path, monkeypatch, capsys) -> None:
    from umbrella_env.training import ppo

    def stop(self, final=False):
        raise KeyboardInterrupt

    monkeypatch.setattr(ppo.TrainCallback, "evaluate", stop)
    out = tmp_path / "run"
    assert ppo.main([*PPO, "--out", str(out)]) == 130  # the final evaluation used to end in a traceback
    summary = strict_json(out / "train_summary.json")  # no evaluation: its best metric was -Infinity, not JSON
    assert summary["interrupted"] is True and summary["final_metric"] is None and summary["best_metric"] is None
    assert json.loads((out / "last.json").read_text())["timesteps"] == summary["timesteps"] >= 128
    captured = capsys.readouterr()
    printed = captured.out
    assert "interrupted at" in captured.err
    # nothing was evaluated: the last line named a best.zip that does not exist
    assert (
        not (out / "best.zip").exists() and f"no evaluation yet, no best.zip; last model: {out / 'last.zip'}" in printed
    )


@pytest.mark.parametrize(
    ("failure", "code", "stream", "messages"),
    [
        (
            KeyboardInterrupt,
            130,
            "out",
            ["interrupted in --pretrain heuristic (its teacher games or the cloning): no checkpoint was written"],
        ),
        (  # WorkerDied: what the pool's with block raises for a BrokenProcessPool
            WorkerDied,
            1,
            "err",
            ["error: a worker process died in the middle of its job", "no checkpoint was written"],
        ),
    ],
)
def test_ppo_stopped_while_cloning_the_teacher_ends_in_one_line(
    failure, code, stream, messages, tmp_path, monkeypatch, capsys
) -> None:
    from umbrella_env.training import ppo

    def stop(*args, **kwargs):
        raise failure()

    monkeypatch.setattr(ppo, "pretrain", stop)  # after the teacher's games, in the cloning itself
    out = tmp_path / "run"
    teacher = ["--pretrain", "heuristic", "--pretrain-games", "2", "--pretrain-epochs", "1", "--workers", "1"]
    assert ppo.main([*PPO, *teacher, "--out", str(out)]) == code  # it used to end in a traceback
    text = getattr(capsys.readouterr(), stream)
    assert all(m in text for m in messages)
    assert not out.exists()  # the folder the run made, still empty, is removed


def test_ppo_resume_and_cache_refuse_unreadable_files(tmp_path, capsys) -> None:
    from umbrella_env.training import ppo

    run = tmp_path / "run"
    assert ppo.main([*PPO, "--out", str(run)]) == 0
    (run / "last.zip").write_bytes((run / "last.zip").read_bytes()[:200])  # truncated
    common = [a for a in PPO if a not in ("--net", "32")]
    err = _refused(ppo.main, [*common, "--resume", str(run / "last.zip"), "--out", str(tmp_path / "r")], capsys)
    assert "(its SHA-256 differs): the file was changed or damaged" in err and not (tmp_path / "r").exists()
    meta = json.loads((run / "last.json").read_text())
    (run / "last.json").write_text(json.dumps({k: v for k, v in meta.items() if k != "sha256"}))  # as before the hash
    err = _refused(ppo.main, [*common, "--resume", str(run / "last.zip"), "--out", str(tmp_path / "r")], capsys)
    assert "is not a readable MaskablePPO .zip" in err and not (tmp_path / "r").exists()
    err = _refused(ppo.main, [*common, "--resume", str(run / "best.zip"), "--pretrain", "heuristic", "--out", str(run)],
                   capsys)  # fmt: skip
    assert "--pretrain: the checkpoint's run cloned no teacher" in err and "a resume does not clone" in err
    cache = tmp_path / "cache.npz"
    cache.write_bytes(b"garbage")
    teacher = ["--pretrain", "heuristic", "--pretrain-games", "2", "--pretrain-epochs", "1", "--workers", "1"]
    err = _refused(ppo.main, [*PPO, *teacher, "--pretrain-cache", str(cache), "--out", str(tmp_path / "c")], capsys)
    assert f"--pretrain-cache {str(cache)!r} is not a cache of teacher games" in err
    assert "(not a NumPy .npz archive)" in err and "allow_pickle" not in err  # NumPy advised loading it unsafely
    for where, message in ((tmp_path / "nowhere" / "c.npz", "does not exist"), (tmp_path / "teacher", ".npz")):
        err = _refused(ppo.main, [*PPO, *teacher, "--pretrain-cache", str(where), "--out", str(tmp_path / "d")], capsys)
        assert "--pretrain-cache: " in err and message in err  # a missing folder failed after the teacher games
        assert not (tmp_path / "d").exists()


def test_overwrite_never_removes_the_run_it_reads_and_resume_never_replaces_another_run(
    az_run: Path, tmp_path, capsys
) -> None:
    from umbrella_env.training import alphazero, ppo

    before = sorted(p.name for p in az_run.iterdir())
    argv = [*_without(TINY, "--iterations", "--pretrain-games", "--pretrain-epochs"), "--iterations", "2"]
    for extra, flag in (
        (["--resume", str(az_run / "last.pt")], "--resume"),
        (["--init", str(az_run / "best.pt"), "--pretrain-games", "0"], "--init"),
    ):
        err = _refused(alphazero.main, [*argv, *extra, "--overwrite", "--out", str(az_run)], capsys)
        assert f"--overwrite would remove {str(extra[1])!r}, which {flag} reads" in err
    assert sorted(p.name for p in az_run.iterdir()) == before  # the run used to be deleted first
    first, second = tmp_path / "first", tmp_path / "second"
    assert ppo.main([*PPO, "--out", str(first)]) == 0
    assert ppo.main([*PPO, "--seed", "3", "--out", str(second)]) == 0
    kept = (second / "best.zip").read_bytes()
    resume = [a for a in PPO if a not in ("--net", "32")] + ["--resume", str(first / "last.zip")]
    err = _refused(ppo.main, [*resume, "--out", str(second)], capsys)  # another run's folder
    assert f"--out {str(second)!r} holds a previous run" in err and (second / "best.zip").read_bytes() == kept
    # a first run's "no pretraining" is harmless on a resume of the same run
    assert alphazero.main([*argv, "--pretrain-games", "0", "--resume", str(az_run / "last.pt"),
                           "--out", str(tmp_path / "az")]) == 0  # fmt: skip


def test_ppo_resume_from_best_keeps_only_the_evaluations_before_it(tmp_path) -> None:
    from umbrella_env.training import ppo

    run = tmp_path / "run"
    # seed 2: a run whose best evaluation (640 steps) comes before its end, the case tested
    assert ppo.main([*_without(PPO, "--timesteps", "--eval-every"), "--timesteps", "768", "--eval-every", "128",
                     "--eval-opponent", "random", "--seed", "2", "--out", str(run)]) == 0  # fmt: skip
    first = json.loads((run / "train_summary.json").read_text())["history"]
    best = json.loads((run / "best.json").read_text())["timesteps"]
    assert best < first[-1]["timesteps"]  # the premise: later evaluations exist to be dropped
    resume = [a for a in _without(PPO, "--eval-every", "--timesteps") if a not in ("--net", "32")]
    resume += ["--eval-every", "128", "--timesteps", str(best + 128)]  # the run's total
    assert ppo.main([*resume, "--resume", str(run / "best.zip"), "--out", str(tmp_path / "b")]) == 0
    history = json.loads((tmp_path / "b" / "train_summary.json").read_text())["history"]
    kept = [h for h in first if h["timesteps"] <= best]
    assert history[: len(kept)] == kept and len(kept) < len(first)  # the later evaluations are another lineage
    # progress.csv the same: the first run's rows up to best.zip, then the resumed run's
    from umbrella_env.training.metrics import read_rows

    first_rows = read_rows(run / "progress.csv", "timesteps", float("inf"))
    rows = read_rows(tmp_path / "b" / "progress.csv", "timesteps", float("inf"))
    steps = [int(r["timesteps"]) for r in rows]
    carried = [r for r in first_rows if int(r["timesteps"]) <= best]
    assert rows[: len(carried)] == carried and len(carried) < len(first_rows)
    assert steps == sorted(steps) and steps[-1] == json.loads((tmp_path / "b" / "last.json").read_text())["timesteps"]
    assert rows[-1]["train/approx_kl"] and rows[-1]["train/value_loss"]  # SB3's figures of the last update


def test_ppo_progress_csv_keeps_each_evaluation_at_its_own_step(tmp_path, monkeypatch) -> None:
    """Evaluations fall inside rollouts: written at the rollout's end (SB3's dump), the one
    at best.zip's step was dropped by a resume from best.zip, and of two evaluations in one
    rollout only the last was kept. A run stopped while cloning left a tb/ folder, which made
    its --out a previous run."""
    from umbrella_env.training import ppo
    from umbrella_env.training.metrics import read_rows

    run = tmp_path / "run"
    argv = [*_without(PPO, "--timesteps", "--eval-every"), "--timesteps", "768", "--eval-every", "100", "--seed", "2"]
    assert ppo.main([*argv, "--out", str(run)]) == 0
    history = json.loads((run / "train_summary.json").read_text())["history"]
    rows = read_rows(run / "progress.csv", "timesteps", float("inf"))
    evals = [(int(r["timesteps"]), float(r["eval/metric"])) for r in rows if r["eval/metric"]]
    assert evals == [(h["timesteps"], h["metric"]) for h in history] and len(evals) >= 7  # 100, 200, ..., final
    steps = [int(r["timesteps"]) for r in rows]
    assert steps == sorted(steps)
    best = json.loads((run / "best.json").read_text())["timesteps"]
    resumed = [a for a in _without(argv, "--timesteps") if a not in ("--net", "32")] + ["--timesteps", "1536"]
    assert ppo.main([*resumed, "--resume", str(run / "best.zip"), "--out", str(tmp_path / "b")]) == 0
    carried = read_rows(tmp_path / "b" / "progress.csv", "timesteps", best)
    assert any(int(r["timesteps"]) == best and r["eval/metric"] for r in carried)  # best.zip's own evaluation
    # TensorBoard's folder is made at its first write, not when the model is built
    made: list[str] = []

    class Board:
        def __init__(self, folder: str) -> None:
            made.append(folder)

        def write(self, *args: Any) -> None:
            pass

        def close(self) -> None:
            pass

    monkeypatch.setattr(ppo, "TensorBoardOutputFormat", Board)
    board = ppo.LazyTensorBoard(str(tmp_path / "tb" / "MaskablePPO_1"))
    assert made == []
    board.write({"a": 1.0}, {"a": None}, 1)
    board.write({"a": 2.0}, {"a": None}, 2)
    assert made == [str(tmp_path / "tb" / "MaskablePPO_1")]


def _fail_the_second_selfplay(monkeypatch, exc: BaseException) -> list[int]:
    """The alphazero trainer's second self-play step raises ``exc``; returns the list of the
    iterations that started one (clear it to fail the second step of another run)."""
    from umbrella_env.training import alphazero

    calls: list[int] = []
    original = alphazero.Trainer.selfplay

    def selfplay(self):
        calls.append(self.iteration)
        if len(calls) == 2:
            raise exc
        return original(self)

    monkeypatch.setattr(alphazero.Trainer, "selfplay", selfplay)
    return calls


def test_az_ctrl_c_names_the_checkpoint_to_resume_from_or_says_there_is_none(tmp_path, monkeypatch, capsys) -> None:
    from umbrella_env.training import alphazero

    calls = _fail_the_second_selfplay(monkeypatch, KeyboardInterrupt())
    argv = [*_without(TINY, "--iterations", "--pretrain-games", "--pretrain-epochs"), "--iterations", "3"]
    assert alphazero.main([*argv, "--pretrain-games", "0", "--out", str(tmp_path / "a")]) == 130
    err = capsys.readouterr().err
    assert f"interrupted after iteration 1: {tmp_path / 'a' / 'last.pt'} holds the network of iteration 1" in err
    calls.clear()
    no_eval = [*_without(argv, "--eval-every"), "--eval-every", "5"]  # nothing saved before the interrupt
    assert alphazero.main([*no_eval, "--pretrain-games", "0", "--out", str(tmp_path / "b")]) == 130
    assert "this run saved no checkpoint" in capsys.readouterr().err  # it used to name a last.pt that did not exist

    def teacher_games(self):  # Ctrl-C in the teacher games: it said "after iteration 0"
        raise KeyboardInterrupt

    monkeypatch.setattr(alphazero.Trainer, "pretrain", teacher_games)
    assert alphazero.main([*argv, "--pretrain-games", "4", "--out", str(tmp_path / "c")]) == 130
    assert "interrupted in the imitation of heuristic (its teacher games or the fitting): this run saved no" in (
        capsys.readouterr().err
    )


def test_az_a_worker_that_dies_is_one_line_naming_the_checkpoint(tmp_path, monkeypatch, capsys) -> None:
    # a worker killed mid-iteration (SIGKILL, out of memory) used to end in a BrokenProcessPool traceback
    from concurrent.futures.process import BrokenProcessPool

    from umbrella_env.training import alphazero

    _fail_the_second_selfplay(monkeypatch, BrokenProcessPool("A process in the process pool was terminated abruptly"))
    argv = [*_without(TINY, "--iterations", "--pretrain-games", "--pretrain-epochs"), "--iterations", "3"]
    assert alphazero.main([*argv, "--pretrain-games", "0", "--out", str(tmp_path / "a")]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "BrokenProcessPool" not in err
    assert "error: a worker process died in the middle of its job" in err
    assert f"{tmp_path / 'a' / 'last.pt'} holds the network of iteration 1" in err


def test_ppo_resume_refuses_a_rollout_that_leaves_a_minibatch_of_one(tmp_path, capsys) -> None:
    """A checkpoint keeps its batch size: 31 fits a rollout of 2 games (64 = 31 + 31 + 2), and
    resumed on 1 game (32 = 31 + 1) it trained into NaN and a torch traceback."""
    from umbrella_env.training import ppo

    first = tmp_path / "first"
    base = _without(PPO, "--n-envs")
    assert ppo.main([*base, "--n-envs", "2", "--batch-size", "31", "--out", str(first)]) == 0
    resume = [a for a in _without(base, "--net") if a != "32"]
    err = _refused(ppo.main, [*resume, "--n-envs", "1", "--resume", str(first / "last.zip"), "--out", str(tmp_path / "r")],
                   capsys)  # fmt: skip
    assert "the --resume checkpoint's batch size 31 leaves minibatches of 1 decision in each rollout of 32" in err
    assert "give another --n-envs" in err and not (tmp_path / "r").exists()


def test_az_stopped_before_writing_leaves_no_folder(tmp_path, capsys, monkeypatch) -> None:
    """Ctrl-C before the first checkpoint left an empty --out folder (PPO removed its own)."""
    from umbrella_env.training import alphazero

    def stop(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(alphazero.Trainer, "run", stop)
    out = tmp_path / "nested" / "run"
    assert alphazero.main([*TINY, "--out", str(out)]) == 130
    assert "this run saved no checkpoint" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # nor the parent folder made for it


def _teacher_cache(folder: Path) -> Path:
    """A --pretrain-cache of two greedy games, as a PPO run with ``--pretrain greedy`` writes it."""
    from umbrella_env.core.config import GameConfig
    from umbrella_env.training import imitation

    path = folder / "teacher.npz"
    config = GameConfig(num_players=2, plate_level=1, max_turns=20)
    imitation.collect(config, "greedy", ["random"], 2, 0, 0.1, 0.99, workers=1, progress=False).save(path)
    return path


def _edited_cache(original: Path, target: Path, **arrays) -> Path:
    """A copy of the .npz ``original`` with ``arrays`` replaced (a callable: of the array it replaces)."""
    import numpy as np

    with np.load(original) as f:
        data = {k: f[k] for k in f.files}
    data.update({k: v(data[k]) if callable(v) else v for k, v in arrays.items()})
    np.savez_compressed(target, **data)
    return target


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        ({"obs": lambda a: a[:, :100]}, "array 'obs' is float32 ("),  # a cache of another observation
        ({"obs": lambda a: a.astype("float64")}, "expected float32 (n, 899) for n decisions"),
        ({"actions": lambda a: a[:10]}, "its arrays must hold one row per decision, at least one"),  # was accepted
        ({"masks": lambda a: a[:10]}, "'masks': 10"),
        ({"actions": lambda a: a * 0 + 5000}, "an action is not one of the legal actions of its mask"),
        ({"returns": lambda a: a * float("nan")}, "not finite (NaN or inf)"),
        (
            {"obs": lambda a: a[:0], "masks": lambda a: a[:0], "actions": lambda a: a[:0], "returns": lambda a: a[:0]},
            "at least one: {'obs': 0",
        ),  # fmt: skip
        ({"num_actions": "abc"}, "'num_actions' is not a finite number"),
        ({"num_actions": 900}, "its decisions have 900 actions; this umbrella-env has 968"),
        ({"source": "[1, 2]"}, "its 'source' is not a JSON object but list"),
    ],
)
def test_a_damaged_teacher_cache_is_refused_before_anything_is_removed(edit, words, tmp_path, capsys) -> None:
    """Demonstrations.load checked that the arrays existed: a cache of another layout ended in
    torch's or NumPy's traceback after --overwrite had removed the previous run, and one of
    fewer actions than observations trained on a part of the games without a word."""
    from umbrella_env.training import imitation, ppo

    cache = _edited_cache(_teacher_cache(tmp_path), tmp_path / "damaged.npz", **edit)
    with pytest.raises(ValueError) as info:
        imitation.Demonstrations.load(cache)
    assert words in str(info.value)
    run = tmp_path / "run"
    run.mkdir()
    (run / "last.zip").write_bytes(b"a previous run")
    (run / "last.json").write_text("{}")
    teacher = ["--pretrain", "greedy", "--pretrain-games", "2", "--pretrain-epochs", "1", "--workers", "1"]
    err = _refused(ppo.main, [*PPO, *teacher, "--pretrain-cache", str(cache), "--overwrite", "--out", str(run)], capsys)
    assert f"--pretrain-cache {str(cache)!r} is not a cache of teacher games" in err and words in err
    assert (run / "last.zip").read_bytes() == b"a previous run"  # --overwrite removed it before the crash


def test_a_sound_teacher_cache_still_loads(tmp_path) -> None:
    from umbrella_env.training import imitation

    demos = imitation.Demonstrations.load(_teacher_cache(tmp_path))
    assert len(demos) > 0 and demos.masks[range(len(demos)), demos.actions].all()


def test_ppo_resume_refuses_damaged_run_files_in_one_line(tmp_path, capsys) -> None:
    """A damaged train_summary.json, best.json or last.json of a run to resume ended in an
    AttributeError, a TypeError or int()'s words naming no file; a .zip beside another run's
    sidecar was played or resumed as that run's."""
    from umbrella_env.training import ppo

    run = tmp_path / "run"
    assert ppo.main([*PPO, "--out", str(run)]) == 0
    common = [a for a in PPO if a not in ("--net", "32")]
    sidecar = json.loads((run / "last.json").read_text())
    for i, (name, change, words) in enumerate((
        ("train_summary.json", {"history": [1]}, "is not a summary this trainer wrote"),
        ("train_summary.json", {"history": [{"timesteps": "x"}]}, "each with its 'timesteps' count"),
        ("best.json", {"eval": None}, "records evaluations None; expected an object of numbers"),
        ("best.json", {"eval": {"win_rate_vs_random": "abc"}}, "records evaluations"),
        ("last.json", {"timesteps": "abc"}, "is damaged: its timesteps must be an integer >= 0, got 'abc'"),
        ("last.json", {"num_players": "2"}, "'num_players' must be an integer from 1 to 4, got '2'"),
        ("last.json", {"sha256": "0" * 64}, "(its SHA-256 differs)"),
        # a damaged best.zip was taken for none, and the resumed run replaced it without a word
        ("best.json", {"sha256": "0" * 64}, "--resume: the best model beside it is damaged: checkpoint"),
    )):  # fmt: skip
        copy = tmp_path / f"copy-{i}"
        copy.mkdir()
        for f in run.iterdir():
            if f.is_file():
                (copy / f.name).write_bytes(f.read_bytes())
        old = json.loads((copy / name).read_text())
        (copy / name).write_text(json.dumps({**old, **change}))
        err = _refused(ppo.main, [*common, "--resume", str(copy / "last.zip"), "--out", str(copy)], capsys)
        assert words in err and "Traceback" not in err, err
    assert "sha256" in sidecar  # training records it


def test_az_resume_refuses_damaged_run_files_before_training(az_run: Path, tmp_path, capsys) -> None:
    """An optimizer.pt of another network was loaded and failed at the first update (or in a
    torch traceback); a history entry without its metric, or a sidecar's resumed or
    train_seconds of another type, ended in a KeyError, TypeError or ValueError traceback."""
    from umbrella_env.training import alphazero

    other = tmp_path / "other"
    assert alphazero.main([*_without(TINY, "--hidden"), "--hidden", "24", "24", "--out", str(other)]) == 0
    argv = [*_without(TINY, "--iterations", "--pretrain-games", "--pretrain-epochs"), "--iterations", "2"]
    meta = json.loads((az_run / "last.json").read_text())
    history = json.loads((az_run / "history.json").read_text())
    for i, (name, data, words) in enumerate((
        ("optimizer.pt", (other / "optimizer.pt").read_bytes(), "is not the optimizer state of this network"),
        ("history.json", json.dumps({**history, "history": [{"iteration": 0}]}), "each with its 'iteration' count"),
        ("history.json", json.dumps([1]), "is not one this trainer wrote"),
        ("last.json", json.dumps({**meta, "resumed": 5}), "is damaged: its resumed must be a list of the earlier resumes"),
        ("last.json", json.dumps({**meta, "train_seconds": "x"}), "its train_seconds must be a finite number >= 0, got 'x'"),
        ("last.json", json.dumps({**meta, "selfplay_games": "12"}), "its selfplay_games must be an integer >= 0"),
        ("optimizer.pt", b"", "is not the optimizer state of this network"),  # replaced below: ids that are lists
        ("best.json", json.dumps({**meta, "sha256": "0" * 64}), "the best network beside it cannot be kept"),
        ("progress.csv", "iteration,loss/policy\nabc,1\n", "line 2 has no number in its 'iteration' column"),
    )):  # fmt: skip
        run = tmp_path / f"broken-{i}"
        run.mkdir()
        for f in ("last.pt", "last.json", "optimizer.pt", "history.json", "best.pt", "best.json"):
            (run / f).write_bytes((az_run / f).read_bytes())
        (run / name).write_bytes(data if isinstance(data, bytes) else data.encode())
        if name == "optimizer.pt" and not data:  # parameter ids that are not ints (weights_only loads them)
            state = torch.load(az_run / "optimizer.pt", weights_only=True)
            state["optimizer"]["param_groups"][0]["params"][0] = [0]
            torch.save(state, run / name)
        err = _refused(alphazero.main, [*argv, "--resume", str(run / "last.pt"), "--out", str(run)], capsys)
        assert words in err and str(run) in err and "Traceback" not in err, err
        assert (run / "last.pt").read_bytes() == (az_run / "last.pt").read_bytes()  # nothing trained or written


def test_ppo_resume_draws_from_its_own_seed(tmp_path) -> None:
    """MaskablePPO.load reseeded everything with the checkpoint's seed: solo resumes (no
    opponent pool, whose seed is --seed's) with --seed 1 and --seed 7 trained bit-identical
    models, on the first run's deals."""
    from agents.policy import load_model
    from umbrella_env.training import ppo

    solo = ["--players", "1", "--n-envs", "4", "--eval-every", "256", "--eval-games", "2", "--max-turns", "60",
            "--no-progress", "--torch-threads", "1"]  # fmt: skip
    first = tmp_path / "first"
    assert ppo.main([*solo, "--net", "32", "32", "--timesteps", "128", "--seed", "0", "--out", str(first)]) == 0
    common = solo

    def resumed(seed: int, name: str) -> dict:
        out = tmp_path / name
        argv = [*common, "--timesteps", "256", "--seed", str(seed), "--resume", str(first / "last.zip")]
        assert ppo.main([*argv, "--out", str(out)]) == 0
        return {k: v.clone() for k, v in load_model(out / "last.zip").policy.state_dict().items()}

    one, again, seven = resumed(1, "one"), resumed(1, "again"), resumed(7, "seven")
    assert all(torch.equal(one[k], again[k]) for k in one)  # still reproducible
    assert not all(torch.equal(one[k], seven[k]) for k in one)  # and --seed is used
    assert ppo.resume_seed(1, 128) != ppo.resume_seed(7, 128) != ppo.resume_seed(7, 256)


def test_a_multiplayer_resume_deals_and_draws_opponents_from_its_own_seed(tmp_path, monkeypatch) -> None:
    """The learner env and the opponent pool of a 2-player resume were built with --seed
    itself: resumed with the first run's seed, it replayed the first run's deals, seats and
    opponents from game 1 (only the learner's sampling differed)."""
    from umbrella_env.training import ppo

    first = tmp_path / "first"
    assert ppo.main([*PPO, "--seed", "5", "--out", str(first)]) == 0
    built = []
    real_pool, real_env = ppo.OpponentPool, ppo.LearnerVecEnv

    def pool(*args, seed, **kwargs):
        built.append(("pool", seed))
        return real_pool(*args, seed=seed, **kwargs)

    def env(*args, seed, **kwargs):
        built.append(("env", seed))
        return real_env(*args, seed=seed, **kwargs)

    monkeypatch.setattr(ppo, "OpponentPool", pool)
    monkeypatch.setattr(ppo, "LearnerVecEnv", env)
    common = [a for a in _without(PPO, "--timesteps") if a not in ("--net", "32")]
    argv = [*common, "--timesteps", "256", "--seed", "5", "--resume", str(first / "last.zip")]
    assert ppo.main([*argv, "--out", str(tmp_path / "resumed")]) == 0
    timesteps = json.loads((first / "last.json").read_text())["timesteps"]
    assert built == [("pool", ppo.resume_seed(5, timesteps)), ("env", ppo.resume_seed(5, timesteps))]
    assert ppo.resume_seed(5, timesteps) != 5


# ----------------------------------------------------------------- divergence
def test_az_a_diverging_update_stops_the_run_and_keeps_the_last_finite_checkpoint(tmp_path, diverge, capsys) -> None:
    # it used to train on with "policy loss nan", evaluate the NaN network as the new best
    # and save best.pt and last.pt that no loader accepts
    from agents.az.net import load_network
    from umbrella_env.training import alphazero

    diverge(lr=0.5)  # the self-play updates', not the pretraining's (annealed from 1e-3)
    out = tmp_path / "a"
    argv = [*_without(TINY, "--iterations"), "--iterations", "3", "--learning-rate", "0.5", "--out", str(out)]
    assert alphazero.main(argv) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "error: training diverged in the update of iteration 1: " in err and "(not finite)" in err
    assert f"{out / 'last.pt'} holds the network of iteration 0" in err
    assert "lower --learning-rate (now 0.5)" in err
    for name in ("last.pt", "best.pt"):  # the pretrained network, finite, as the evaluation saved it
        load_network(out / name, num_players=2)
        assert json.loads((out / name).with_suffix(".json").read_text())["iteration"] == 0
    assert [entry["iteration"] for entry in json.loads((out / "history.json").read_text())["history"]] == [0]


_PG = ["--players", "1", "--selfplay", "policy-gradient", "--iterations", "1", "--games", "4", "--batch-size", "32",
       "--pretrain-games", "0", "--eval-games", "2", "--eval-search-games", "0", "--max-turns", "40", "--hidden", "64",
       "--workers", "1", "--seed", "5", "--no-progress"]  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "stage", "option"),
    [
        ([*TINY, "--pretrain-learning-rate", "0.002"], "pretraining", "--pretrain-learning-rate (now 0.002)"),
        (
            [*_PG, "--learning-rate", "0.002"],
            "the policy-gradient update of iteration 1",
            "--learning-rate (now 0.002)",
        ),
    ],
)
def test_az_divergence_names_the_stage_and_its_option_and_saves_nothing(
    argv, stage, option, tmp_path, diverge, capsys
) -> None:
    from umbrella_env.training import alphazero

    diverge()
    assert alphazero.main([*argv, "--out", str(tmp_path / "r")]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"error: training diverged in {stage}: " in err and option in err
    assert "this run saved no checkpoint" in err
    assert not (tmp_path / "r").exists()  # the folder the run made, still empty, is removed


@pytest.mark.parametrize(
    ("to", "hidden", "words"),
    [
        # float16 holds at most 65,504: a run at --learning-rate 3e4 ended "done" with a last.pt
        # of infinities that no loader accepts
        (lambda w: w * 1e30, ["64"], "weights beyond +-65,504, the largest a checkpoint stores, in "),
        # weights a checkpoint stores whose outputs still overflow through eight layers
        (lambda w: torch.where(w >= 0, 60000.0, -60000.0), ["64"] * 8, "the network's outputs are not finite"),
    ],
)
def test_az_an_update_that_leaves_weights_finite_but_unusable_stops_the_run(
    to, hidden, words, tmp_path, diverge, capsys
) -> None:
    from umbrella_env.training import alphazero

    diverge(to=to)
    argv = [*_without(TINY, "--train-steps", "--pretrain-games", "--pretrain-epochs", "--hidden"), "--train-steps", "1",
            "--pretrain-games", "0", "--hidden", *hidden, "--out", str(tmp_path / "r")]  # fmt: skip
    assert alphazero.main(argv) == 1
    assert f"training diverged in the update of iteration 1: {words}" in capsys.readouterr().err


def test_az_outputs_that_overflow_in_an_evaluation_stop_the_run(tmp_path, monkeypatch, capsys) -> None:
    # finite weights whose outputs overflow on an evaluation position (and on no training
    # minibatch) played the first legal action at every decision, or ended in a traceback
    from agents.az import agent as az_agent
    from umbrella_env.training import alphazero

    class Overflowing:  # the learner's network as the evaluation of iteration 1 meets it
        def __init__(self, net: Any) -> None:
            self.net = net

        def __getattr__(self, name: str) -> Any:
            return getattr(self.net, name)

        def predict(self, obs: np.ndarray, heur: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
            logits, values = self.net.predict(obs, heur)
            return np.where(logits > 0, np.inf, -np.inf).astype(np.float32), values

    built, init = [], az_agent.AZAgent.__init__

    def learner(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        built.append(self)
        if len(built) > 1:  # the evaluation after iteration 0's (the pretrained network) passed
            self.net = Overflowing(self.net)

    monkeypatch.setattr(az_agent.AZAgent, "__init__", learner)
    out = tmp_path / "r"
    argv = [*_without(TINY, "--iterations"), "--iterations", "2", "--out", str(out)]
    assert alphazero.main(argv) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(built) == 2
    assert "error: training diverged in the evaluation at iteration 1: the network's outputs are not finite" in err
    assert f"{out / 'last.pt'} holds the network of iteration 0" in err and "lower --learning-rate" in err
    assert json.loads((out / "best.json").read_text())["iteration"] == 0


@pytest.mark.parametrize("search", [True, False], ids=["search", "policy-gradient"])
def test_az_outputs_that_overflow_in_self_play_stop_the_run(search, tmp_path, monkeypatch, capsys) -> None:
    # the self-play workers' network giving NaN logits: the search followed a NaN prior to
    # any action, and the policy-gradient sampler failed inside NumPy
    from umbrella_env.training import alphazero

    build = alphazero._build_net

    def overflowing(job: dict[str, Any]) -> Any:
        net = build(job)
        predict = net.predict

        def nan_logits(obs: np.ndarray, heur: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
            logits, values = predict(obs, heur)
            return np.full_like(logits, np.nan), values

        net.predict = nan_logits  # type: ignore[method-assign]
        return net

    monkeypatch.setattr(alphazero, "_build_net", overflowing)
    out = tmp_path / "r"
    argv = [*TINY, "--workers", "1"] if search else _PG
    assert alphazero.main([*argv, "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "error: training diverged in the self-play of iteration 1: the network's outputs are not finite" in err
    kept = f"{out / 'last.pt'} holds the network of iteration 0" if search else "this run saved no checkpoint"
    assert kept in err and "lower --learning-rate" in err


def test_ppo_outputs_refused_in_an_evaluation_stop_the_run(tmp_path, monkeypatch, capsys) -> None:
    # the learner's OutputsNotFinite reached train.py inside the game's AgentError: a traceback
    from agents.policy import PolicyAgent
    from umbrella_env.training import ppo

    def overflowing(self, obs, masks):
        raise ValueError("Expected parameter logits (Tensor of shape (1, 968)) ... found invalid values")

    monkeypatch.setattr(PolicyAgent, "_choose", overflowing)
    assert ppo.main([*PPO, "--out", str(tmp_path / "run")]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "training diverged in the evaluation at step " in err


def test_az_save_network_refuses_weights_float16_cannot_hold(tmp_path) -> None:
    from agents.az.net import AZNet, save_network

    net = AZNet(2, hidden=(16,))
    with torch.no_grad():
        net.value.bias[0] = 70000.0
    with pytest.raises(ValueError, match=r"cannot save .*beyond \+-65,504 \(float16\) in value\.bias"):
        save_network(net, tmp_path / "n.pt", plate_level=1)
    assert not list(tmp_path.iterdir())


def test_az_resume_refuses_an_optimizer_state_that_is_not_finite(az_run: Path, tmp_path, capsys) -> None:
    import shutil

    from umbrella_env.training import alphazero

    run = tmp_path / "run"
    shutil.copytree(az_run, run)
    saved = torch.load(run / "optimizer.pt", weights_only=True)
    moments = next(iter(saved["optimizer"]["state"].values()))
    moments["exp_avg_sq"].fill_(float("inf"))  # as a --weight-decay of 1e30 left it: every later step 0
    torch.save(saved, run / "optimizer.pt")
    argv = [*_without(TINY, "--iterations", "--pretrain-games", "--pretrain-epochs"), "--iterations", "3"]
    err = _refused(alphazero.main, [*argv, "--pretrain-games", "0", "--resume", str(run / "last.pt")], capsys)
    assert "holds an optimizer state that is not finite (NaN or inf) in slide_bias exp_avg_sq" in err
    saved["iteration"] = 0  # of another iteration than last.pt's: not read, so not refused either
    torch.save(saved, run / "optimizer.pt")
    argv += ["--out", str(tmp_path / "resumed")]  # without --out, a new folder under the current one's runs/
    assert alphazero.main([*argv, "--pretrain-games", "0", "--resume", str(run / "last.pt")]) == 0
    assert "is the optimizer state of iteration 0 (last.pt's), not of the checkpoint's" in capsys.readouterr().err


def test_ppo_a_diverging_update_ends_in_one_line_and_writes_no_last_zip(tmp_path, diverge, capsys) -> None:
    # it used to end in torch's "Expected parameter logits ... found invalid values" traceback
    from umbrella_env.training import ppo

    diverge()
    out = tmp_path / "run"
    assert ppo.main([*_without(PPO, "--timesteps"), "--timesteps", "512", "--learning-rate", "0.002",
                     "--out", str(out)]) == 1  # fmt: skip
    err = capsys.readouterr().err
    assert "Traceback" not in err and "error: training diverged in the PPO update at step " in err
    assert "no checkpoint was written" in err and "lower --learning-rate (now 0.002)" in err
    assert not (out / "last.zip").exists() and not (out / "best.zip").exists()


def test_ppo_a_diverging_behaviour_cloning_ends_in_one_line(tmp_path, diverge, capsys) -> None:
    # it used to end in "AgentError: agent 'learner' (seat 0) chose 20, not a legal action"
    from umbrella_env.training import ppo

    diverge()
    out = tmp_path / "run"
    teacher = ["--pretrain", "heuristic", "--pretrain-games", "4", "--pretrain-epochs", "2", "--workers", "1",
               "--pretrain-lr", "0.002"]  # fmt: skip
    assert ppo.main([*PPO, *teacher, "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "error: training diverged in behaviour cloning: " in err
    assert "lower --pretrain-lr (now 0.002)" in err and not out.exists()


def test_ppo_a_cloning_whose_last_step_leaves_outputs_that_overflow_ends_in_one_line(tmp_path, diverge, capsys) -> None:
    # one step (a single minibatch) to finite but huge weights: the accuracy after the epoch
    # ended in torch's "found invalid values" traceback
    from umbrella_env.training import ppo

    diverge(to=lambda w: torch.where(w >= 0, 3e37, -3e37))
    teacher = ["--pretrain", "heuristic", "--pretrain-games", "2", "--pretrain-epochs", "1", "--workers", "1",
               "--pretrain-batch", "4096"]  # fmt: skip
    assert ppo.main([*PPO, *teacher, "--out", str(tmp_path / "run")]) == 1
    err = capsys.readouterr().err
    assert "error: training diverged in behaviour cloning: the policy's outputs are not finite (NaN or inf)" in err
    assert "Traceback" not in err


def test_the_divergence_checks_read_torch_s_own_failures() -> None:
    # invalid_outputs reads torch's message for a distribution of NaN parameters: pinned here
    from umbrella_env.training.divergence import (
        TrainingDiverged,
        check_losses,
        check_outputs,
        check_weights,
        invalid_outputs,
    )

    with pytest.raises(ValueError) as info:
        torch.distributions.Categorical(logits=torch.tensor([[0.0, float("nan")]]))
    assert invalid_outputs(info.value) and not invalid_outputs(ValueError("another problem"))
    with pytest.raises(RuntimeError) as sampled:  # what RLlib's env runners meet
        torch.distributions.Categorical(logits=torch.tensor([[0.0, float("nan")]]), validate_args=False).sample()
    assert invalid_outputs(sampled.value) and invalid_outputs(str(sampled.value))
    check_losses("s", policy_loss=1e30, value_loss=0.0)
    with pytest.raises(TrainingDiverged, match=r"^s: policy loss 1\.0, value loss inf \(not finite\)$"):
        check_losses("s", policy_loss=1.0, value_loss=float("inf"))
    check_weights("s", {"w": torch.full((2,), 1e30), "steps": torch.tensor([10**12])})
    with pytest.raises(TrainingDiverged, match=r"weights not finite \(NaN or inf\) in b$"):
        check_weights("s", {"a": torch.zeros(2), "b": torch.tensor([0.0, float("nan")])})
    check_outputs("s", torch.zeros(3), torch.full((2,), -1e30))
    with pytest.raises(TrainingDiverged, match="outputs are not finite"):
        check_outputs("s", torch.zeros(3), torch.tensor([float("-inf")]))


def test_ppo_a_last_update_to_outputs_that_overflow_ends_in_one_line(tmp_path, diverge, capsys) -> None:
    # one rollout, one minibatch step to finite but huge weights: the final evaluation ended in
    # "AgentError: agent 'learner' raised ValueError('Expected parameter logits ...')"
    from umbrella_env.training import ppo

    diverge(to=lambda w: torch.where(w >= 0, 3e37, -3e37))
    out = tmp_path / "run"
    argv = [*_without(PPO, "--eval-every"), "--eval-every", "100000", "--n-epochs", "1", "--batch-size", "128",
            "--out", str(out)]  # fmt: skip
    assert ppo.main(argv) == 1
    err = capsys.readouterr().err
    assert "error: training diverged in the PPO update at step 128: the policy's outputs are not finite" in err, err
    assert "Traceback" not in err and not (out / "last.zip").exists()


def test_az_runs_say_what_they_do_and_a_resume_logs_from_where_it_left(az_run: Path, tmp_path, monkeypatch,
                                                                       capsys) -> None:  # fmt: skip
    """Review of the trainer's output: an evaluation printed nothing for minutes (a run
    looked hung) and never its duration; in a log (no terminal) the iterations between two
    evaluations printed nothing, so their losses were recorded nowhere without TensorBoard; a
    resume's "done" line counted the iterations of the run before as this session's; and a
    resume wrote its TensorBoard points beside the stopped run's, at the same steps."""
    import sys
    import types

    from umbrella_env.training import alphazero

    writers: list[dict[str, Any]] = []

    class Writer:  # torch's SummaryWriter, as tensorboard would provide it
        def __init__(self, log_dir: str, purge_step: int | None = None) -> None:
            writers.append({"purge_step": purge_step})

        def add_scalar(self, *args: Any) -> None:
            pass

        def close(self) -> None:
            pass

    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", types.SimpleNamespace(SummaryWriter=Writer))
    argv = [*_without(TINY, "--pretrain-games", "--pretrain-epochs", "--iterations", "--eval-every", "--eval-games"),
            "--iterations", "3", "--eval-every", "2", "--eval-games", "4"]  # fmt: skip
    assert alphazero.main([*argv, "--resume", str(az_run / "last.pt"), "--out", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    resumed_at = json.loads((az_run / "last.json").read_text())["iteration"]
    games = json.loads((az_run / "last.json").read_text())["selfplay_games"]
    assert writers == [{"purge_step": games + 1}]  # the checkpoint's own points (at `games`) stay
    assert [int(n) for n in re.findall(r"^iteration (\d+): ", out, re.M)] == list(range(resumed_at + 1, 4))
    assert re.search(r"^evaluating iteration 2: 4 games vs heuristic$", out, re.M)
    assert re.search(r"^\[eval @ iteration 2, [\d,]+ games, \d+ s\] network alone vs heuristic "
                     r"\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\] \(4 games\), mean score -?\d+\.\d\d  \(new best\)$", out, re.M)  # fmt: skip
    # its first evaluation makes a new best: the run's were of 2 games, these of 4
    assert f"done: {3 - resumed_at} iteration(s) in " in out and "(3 in all)" in out
    assert alphazero.main([*argv, "--pretrain-games", "0", "--out", str(tmp_path / "fresh")]) == 0
    assert writers[-1] == {"purge_step": None}


def test_az_progress_csv_keeps_every_iteration_and_a_resume_replaces_what_followed_its_checkpoint(
    az_run: Path, tmp_path
) -> None:
    """Without TensorBoard (in no extra) the losses and rates of the iterations were kept
    nowhere but in the printed lines."""
    import shutil

    from umbrella_env.training import alphazero
    from umbrella_env.training.metrics import MetricsFile, read_rows

    rows = read_rows(az_run / "progress.csv", "iteration", float("inf"))
    history = json.loads((az_run / "history.json").read_text())["history"]
    assert [r["iteration"] for r in rows] == ["0", "1"]  # the evaluation after pretraining, then iteration 1
    assert float(rows[1]["loss/policy"]) > 0 and float(rows[1]["selfplay/decisions_per_s"]) > 0
    assert [float(r["eval/vs_heuristic"]) for r in rows] == [h["vs_heuristic"] for h in history]
    assert [float(r["eval/score_vs_heuristic"]) for r in rows] == [h["score_vs_heuristic"] for h in history]
    run = tmp_path / "run"
    shutil.copytree(az_run, run)
    # the stopped run logged an iteration after its last checkpoint (iteration 1)
    MetricsFile(run / "progress.csv", rows).add({"iteration": 2, "games": 999, "loss/policy": 123})
    argv = [*_without(TINY, "--pretrain-games", "--pretrain-epochs", "--iterations"), "--iterations", "3"]
    assert alphazero.main([*argv, "--resume", str(run / "last.pt"), "--out", str(run)]) == 0
    after = read_rows(run / "progress.csv", "iteration", float("inf"))
    assert [r["iteration"] for r in after] == ["0", "1", "2", "3"] and after[:2] == rows
    assert after[2]["games"] == "4" and after[2]["loss/policy"] != "123"  # this run's iteration 2


def test_overwrite_removes_only_what_a_trainer_wrote(tmp_path, capsys) -> None:
    """Review of security: ``tb`` and ``progress.csv`` are generic names, and --overwrite
    deleted a user's own ``tb/`` folder and ``progress.csv`` recursively."""
    from umbrella_env.training import ppo
    from umbrella_env.training.options import RUN_FILES, overwrite_problem

    user = tmp_path / "user"
    (user / "tb" / "other-project").mkdir(parents=True)
    (user / "tb" / "other-project" / "notes.log").write_text("the user's")
    (user / "progress.csv").write_text("epoch,loss\n1,0.5\n")
    err = _refused(ppo.main, [*PPO, "--overwrite", "--out", str(user)], capsys)
    assert f"--overwrite would remove {str(user / 'progress.csv')!r}, which holds what no trainer writes" in err
    assert (user / "tb" / "other-project" / "notes.log").is_file() and (user / "progress.csv").is_file()
    (user / "progress.csv").unlink()
    assert "tb/other-project/notes.log" in (overwrite_problem(user, RUN_FILES, True, {}) or "")
    run = tmp_path / "run"  # what the trainers write goes
    (run / "tb" / "PPO_1").mkdir(parents=True)
    (run / "tb" / "PPO_1" / "events.out.tfevents.1.host.2.0").write_bytes(b"")
    (run / "progress.csv").write_text("timesteps,train/loss\n128,0.5\n")
    assert overwrite_problem(run, RUN_FILES, True, {}) is None
    (run / "progress.csv").write_text("")  # a run killed before its first row
    assert overwrite_problem(run, RUN_FILES, True, {}) is None
    (run / "progress.csv").write_text("iteration,games\n1,64\n")
    assert overwrite_problem(run, RUN_FILES, True, {}) is None


@pytest.mark.posix
def test_overwrite_removes_a_symbolic_link_not_what_it_points_to(tmp_path) -> None:
    """--overwrite of a run whose entry was a link to a folder gave ``OSError: Cannot call
    rmtree on a symbolic link`` half-way (review of security)."""
    from umbrella_env.paths import remove_run
    from umbrella_env.training.options import RUN_FILES

    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "keep.txt").write_text("kept")
    run = tmp_path / "run"
    run.mkdir()
    (run / "tb").symlink_to(target, target_is_directory=True)
    (run / "best.zip").symlink_to(target / "keep.txt")
    (run / "progress.csv").write_text("timesteps\n")
    remove_run(run, RUN_FILES)
    assert list(run.iterdir()) == [] and (target / "keep.txt").read_text() == "kept"


def test_a_zip_checkpoint_keeps_its_configuration_and_refuses_a_sidecar_edited_to_another(tmp_path) -> None:
    """Review of security: a .zip's sidecar, edited to another plate level with its SHA-256
    removed, was believed, and the level-1 policy played level 3 without a word (a .pt keeps
    a copy of its metadata and caught it)."""
    import zipfile

    from agents import make_agent
    from agents.policy import ZIP_METADATA
    from umbrella_env.training import ppo

    run = tmp_path / "run"
    assert ppo.main([*PPO, "--out", str(run)]) == 0
    with zipfile.ZipFile(run / "last.zip") as archive:
        kept = json.loads(archive.read(ZIP_METADATA))
    assert (kept["num_players"], kept["plate_level"]) == (2, 1)
    assert make_agent(str(run / "last.zip")) is not None
    sidecar = json.loads((run / "last.json").read_text())
    del sidecar["sha256"]
    (run / "last.json").write_text(json.dumps({**sidecar, "plate_level": 3}))
    with pytest.raises(
        ValueError, match=r"does not match its sidecar .*plate_level 3 in the sidecar, 1 in the checkpoint"
    ):
        make_agent(str(run / "last.zip"))
    from agents.policy import load_model, save_policy

    save_policy(load_model(run / "best.zip"), tmp_path / "named", {"num_players": 2})  # SB3 writes named.zip
    assert not (tmp_path / "named").exists()
    with zipfile.ZipFile(tmp_path / "named.zip") as archive:
        assert json.loads(archive.read(ZIP_METADATA)) == {"num_players": 2} and "data" in archive.namelist()


def test_an_interrupted_ppo_run_closes_its_progress_bar(tmp_path, monkeypatch) -> None:
    """Review of the notebook user: SB3's bar closed only when training ended normally, so
    after Ctrl-C its refresh thread went on, and the stale bar reappeared at the next run.
    The bar is a tqdm bar on a terminal (stderr made to look like one here)."""
    from tqdm import tqdm

    from umbrella_env import parallel
    from umbrella_env.training import ppo

    def stop(self: object) -> bool:
        raise KeyboardInterrupt

    bars: list[Any] = []
    closed: list[Any] = []
    real_init, real_close = parallel.Progress.__init__, parallel.Progress.close

    def recorded(self: Any, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        bars.append(self._bar)

    def closing(self: Any) -> None:
        closed.append(self._bar)
        real_close(self)

    monkeypatch.setattr(parallel, "is_terminal", lambda stream: True)
    monkeypatch.setattr(parallel.Progress, "__init__", recorded)
    monkeypatch.setattr(parallel.Progress, "close", closing)
    monkeypatch.setattr(ppo.TrainCallback, "_on_step", stop)
    argv = [a for a in PPO if a != "--no-progress"]
    assert ppo.main([*argv, "--out", str(tmp_path / "run")]) == 130
    assert (tmp_path / "run" / "last.zip").is_file()
    assert len(bars) == 1 and isinstance(bars[0], tqdm)  # the run drew a bar (tqdm's, as on a terminal)
    assert closed == bars and bars[0] not in tqdm._instances  # and closed it


def _process_state() -> tuple[Any, ...]:
    import random

    return torch.get_num_threads(), random.random(), float(np.random.random()), float(torch.rand(1))


@pytest.mark.parametrize("trainer", ["ppo", "alphazero"])
def test_a_trainer_called_from_python_leaves_the_process_as_it_found_it(trainer: str, tmp_path) -> None:
    """torch's thread count and the global random streams (random, NumPy's, torch's), which
    the trainers set and Stable-Baselines3 seeds, are put back when ``main`` returns: a
    notebook's loop over runs keeps its own settings and streams."""
    import random

    from umbrella_env.training import alphazero, ppo

    main, argv = (ppo.main, PPO) if trainer == "ppo" else (alphazero.main, [*TINY, "--torch-threads", "1"])
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(2)  # the runs ask for 1
        random.seed(11), np.random.seed(12), torch.manual_seed(13)
        expected = _process_state()
        random.seed(11), np.random.seed(12), torch.manual_seed(13)
        assert main([*argv, "--out", str(tmp_path / "run")]) == 0
        assert _process_state() == expected
    finally:
        torch.set_num_threads(threads)


def test_a_trainer_that_imports_torch_itself_puts_its_default_thread_count_back(tmp_path) -> None:
    """In a process that had not imported torch, the trainer's ``--torch-threads 1`` does not
    outlive it: torch's own default (here set by OMP_NUM_THREADS) is back afterwards."""
    import os
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from umbrella_env.training import cli\n"
        "assert 'torch' not in sys.modules\n"
        f"rc = cli.main(['--algo', 'alphazero', *{TINY!r}, '--torch-threads', '1', '--out', {str(tmp_path / 'r')!r}])\n"
        "import torch\n"
        "print(rc, torch.get_num_threads())\n"
    )
    env = {**os.environ, "OMP_NUM_THREADS": "2"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-2:] == ["0", "2"]


def test_ppo_resume_timesteps_are_the_runs_total(tmp_path, capsys) -> None:
    """--timesteps on --resume is the run's total, as alphazero's --iterations and
    rllib_train's --timesteps: the interrupted command with --resume added finishes the run it
    started (it added as many steps again), and a total already reached is refused."""
    from umbrella_env.training import ppo

    run = tmp_path / "run"
    assert ppo.main([*PPO, "--out", str(run)]) == 0  # 128 steps
    done = json.loads((run / "last.json").read_text())["timesteps"]
    resume = [a for a in _without(PPO, "--timesteps") if a not in ("--net", "32")] + ["--resume", str(run / "last.zip")]
    err = _refused(ppo.main, [*resume, "--timesteps", str(done), "--out", str(tmp_path / "r")], capsys)
    assert f"--timesteps {done}: --resume {str(run / 'last.zip')!r} has trained {done} steps" in err
    assert f"give --timesteps of more than {done} (the run's total, not the number to add)" in err
    assert not (tmp_path / "r").exists()
    assert ppo.main([*resume, "--timesteps", str(done + 200), "--out", str(tmp_path / "r")]) == 0
    # 200 more, in whole rollouts of 4 games x 32 steps: 256
    assert f"for 256 steps (--timesteps {done + 200} less the {done} of --resume in whole rollouts of 128), " in (
        capsys.readouterr().out
    )
    assert json.loads((tmp_path / "r" / "last.json").read_text())["timesteps"] == done + 256


def test_ppo_resume_goes_on_with_its_runs_settings_and_takes_the_command_it_was_given(tmp_path, capsys) -> None:
    """A 2-player resume without --shaping and --opponents trained with the options' defaults
    (0.1, random + self), not the run's, and said nothing; the interrupted command with
    --resume added was refused for repeating --net or --learning-rate (review, 2026-12-07)."""
    from umbrella_env.training import ppo

    run = tmp_path / "run"
    first = [*PPO, "--shaping", "0.3", "--learning-rate", "1e-4", "--opponents", "greedy", "self"]
    assert ppo.main([*first, "--out", str(run)]) == 0
    meta = json.loads((run / "last.json").read_text())
    assert (meta["shaping"], meta["opponents"], meta["net"], meta["learning_rate"]) == (
        0.3, ["greedy", "self"], [32, 32], 1e-4
    )  # fmt: skip
    capsys.readouterr()
    again = [*_without(first, "--timesteps"), "--timesteps", "256", "--resume", str(run / "last.zip")]
    assert ppo.main([*again, "--out", str(tmp_path / "same")]) == 0  # the same command, --resume added
    assert "note:" not in capsys.readouterr().out
    bare = [*_without(PPO, "--timesteps"), "--timesteps", "256", "--resume", str(run / "last.zip")]
    bare = [a for a in bare if a not in ("--net", "32")]
    assert ppo.main([*bare, "--out", str(tmp_path / "bare")]) == 0  # the options left out: the run's
    resumed = json.loads((tmp_path / "bare" / "last.json").read_text())
    assert (resumed["shaping"], resumed["opponents"], resumed["learning_rate"]) == (0.3, ["greedy", "self"], 1e-4)
    # --quick --resume (the interrupted --quick command with --resume added) was refused
    quick = [*_without(bare, "--eval-games", "--max-turns"), "--quick", "--eval-games", "2", "--timesteps", "384"]
    assert ppo.main([*quick, "--out", str(tmp_path / "quick")]) == 0
    said = capsys.readouterr().out
    assert "teacher" not in said and "cloning" not in said  # the preset without its cloning
    assert json.loads((tmp_path / "quick" / "last.json").read_text())["max_turns"] == 60  # the run's, recorded
    assert ppo.main([*bare, "--shaping", "0.2", "--out", str(tmp_path / "other")]) == 0
    assert "note: the checkpoint's run trained with --shaping 0.3; this run uses 0.2" in capsys.readouterr().out
    assert json.loads((tmp_path / "other" / "last.json").read_text())["shaping"] == 0.2
    for extra, message in [
        (["--net", "64"], "--net 64 differs from the checkpoint's (32 32): leave --net out"),
        (["--learning-rate", "2e-4"], "--learning-rate 0.0002 differs from the checkpoint's (0.0001)"),
    ]:
        err = _refused(ppo.main, [*bare, *extra, "--out", str(tmp_path / "refused")], capsys)
        assert message in err and not (tmp_path / "refused").exists()
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    for name in ("last.zip", "last.json"):
        (damaged / name).write_bytes((run / name).read_bytes())
    meta["shaping"] = 5.0
    (damaged / "last.json").write_text(json.dumps(meta))
    err = _refused(ppo.main, [*_without(bare, "--resume"), "--resume", str(damaged / "last.zip"),
                              "--out", str(tmp_path / "refused")], capsys)  # fmt: skip
    assert "--resume: with the settings the checkpoint records: --shaping must be a number in [0, 1], got 5.0" in err
    for opponents in ([["random"]], [""], "random"):  # a list held a list: a TypeError traceback
        (damaged / "last.json").write_text(json.dumps({**meta, "shaping": 0.3, "opponents": opponents}))
        err = _refused(ppo.main, [*_without(bare, "--resume"), "--resume", str(damaged / "last.zip"),
                                  "--out", str(tmp_path / "refused")], capsys)  # fmt: skip
        assert f"the checkpoint records --opponents as {opponents!r}, which is not a value of --opponents" in err
    (damaged / "last.json").write_text(json.dumps({**meta, "shaping": 0.3, "opponents": [str(tmp_path / "gone.zip")]}))
    assert ppo.main([*_without(bare, "--resume"), "--resume", str(damaged / "last.zip"), "--shaping", "0.2",
                     "--out", str(tmp_path / "refused")]) == 2  # fmt: skip
    said = capsys.readouterr()
    assert f"the checkpoint's run trained against {str(tmp_path / 'gone.zip')!r}, which cannot be built here" in (
        said.err
    )
    assert said.err.rstrip().endswith("give --opponents") and "note:" not in said.out  # no note of a refused run
