"""train.py: a short run saves checkpoints that reload and act legally; the learner env
hands every decision to the learner and pays its losses.  Marked ``train`` (needs torch)."""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from umbrella_env.core import engine as E
from umbrella_env.core.config import GameConfig
from umbrella_env.core.playout import policy_actions
from umbrella_env.core.single import SingleGame
from umbrella_env.envs.common import end_rewards

pytestmark = pytest.mark.train

from agents.policy import PolicyAgent  # noqa: E402


class _LazyTrain:
    """``umbrella_env.training.ppo`` imported on first use, so ``-m "not train"`` collects without torch."""

    def __getattr__(self, name: str):
        from umbrella_env.training import ppo as module

        return getattr(module, name)


train = _LazyTrain()


def test_learner_env_gives_the_learner_every_decision_and_its_losses() -> None:
    from umbrella_env.tools.differential import policy_actions

    config = GameConfig(num_players=3, plate_level=1, max_turns=150)
    pool = train.OpponentPool(["self", "random"], config, seed=0)
    greedy_rng = np.random.default_rng(1)
    original = pool.actions

    def actions(state, games, kinds):
        out = original(state, games, kinds)
        mine = kinds == pool.specs.index("self")
        if mine.any():
            sub = E.take(state, games[mine])
            out[mine] = policy_actions(sub, greedy_rng, greedy=0.9)
        return out

    pool.actions = actions
    env = train.LearnerVecEnv(16, config, pool, shaping=0.0, seed=0)
    obs = env.reset()
    rng = np.random.default_rng(0)

    for _ in range(400):
        live = ~env.state.done
        assert (E.actor(env.state)[live] == env.seat[live]).all()
        masks = np.stack(env.env_method("action_masks"))
        actions = policy_actions(env.state, rng, greedy=0.5)
        assert masks[np.arange(16), actions].all()
        env.step_async(actions)
        obs, rewards, dones, infos = env.step_wait()
        assert obs.shape == (16, 899)
        for i in np.flatnonzero(dones):
            assert "terminal_observation" in infos[i] and "episode" in infos[i]
    assert -1.0 in env.results and (1.0 in env.results or 0.5 in env.results)


def test_the_learner_is_paid_its_own_result() -> None:
    """The end reward of each finished game is the learner seat's (shaping 0): +1 / +0.5 / -1
    from that game's ranks at the learner's seat, not another seat's."""
    config = GameConfig(num_players=3, plate_level=1)
    env = train.LearnerVecEnv(8, config, train.OpponentPool(["greedy"], config, seed=0), shaping=0.0, seed=0)
    env.reset()
    ended: dict[int, float] = {}
    new_games = env._new_games

    def capture(idx: np.ndarray) -> None:  # the finished games, before they are dealt again
        sub = E.take(env.state, idx)
        for row, i in enumerate(idx):
            if sub.done[row]:
                results = end_rewards(E.scores(sub)[row], E.ranks(sub)[row], bool(sub.terminated[row]), "win")
                ended[int(i)] = float(results[env.seat[i]])
        new_games(idx)

    env._new_games = capture
    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(3000):
        ended.clear()
        _, rewards, dones, _ = env.step(policy_actions(env.state, rng, greedy=0.5))
        assert sorted(ended) == list(np.flatnonzero(dones))
        for i, want in ended.items():
            assert rewards[i] == want
            checked += 1
        if checked >= 12:
            break
    assert checked >= 12 and -1.0 in env.results  # played out: each game has a winner and losers


@pytest.mark.parametrize("players", [1, 2])
def test_short_run_saves_checkpoints_that_reload_and_act_legally(tmp_path, players: int, capsys) -> None:
    out = tmp_path / "run"
    code = train.main(
        [
            "--players",
            str(players),
            "--timesteps",
            "500",
            "--n-envs",
            "8",
            "--eval-every",
            "256",
            "--eval-games",
            "2",
            *(["--eval-opponent", "random", "--snapshot-every", "256"] if players > 1 else []),  # solo has no opponent
            "--out",
            str(out),
            "--no-progress",
            "--max-turns",
            "60",
        ]
    )
    assert code == 0
    # PPO trains whole rollouts (32 x 8 games): the start line says so, as the bar counts to it
    assert "for 512 steps (--timesteps 500 in whole rollouts of 256) on 8 games" in capsys.readouterr().out
    for name in ("best.zip", "last.zip", "best.json", "last.json", "train_summary.json"):
        assert (out / name).is_file(), name
    summary = json.loads((out / "train_summary.json").read_text())
    assert summary["timesteps"] >= 512 and summary["env_steps_per_second"] > 0
    assert summary["eval_opponent"] == (None if players == 1 else "random")  # solo has none: it said "random"
    agent = PolicyAgent(out / "last.zip", num_players=players, plate_level=1)
    game = SingleGame.new(GameConfig(num_players=players), key=7)
    for _ in range(30):
        if game.done:
            break
        mask = game.legal_mask()
        action = agent.act(game.observe(), mask)
        assert mask[action]
        game.step(action)
    with pytest.raises(ValueError, match="num_players"):
        PolicyAgent(out / "last.zip", num_players=4)
    # Resuming into another configuration is refused with a clear message.
    info_code = train.main(
        ["--players", "3", "--resume", str(out / "last.zip"), "--out", str(tmp_path / "x"), "--timesteps", "64"]
    )
    assert info_code == 2
    message = (
        f"--resume {str(out / 'last.zip')!r} was trained for num_players={players}, but this run has num_players=3"
    )
    assert message in capsys.readouterr().err  # the words of every configuration check (agents.checkpoint)


def test_a_run_and_its_resume_leave_nothing_in_the_temporary_directory(tmp_path, monkeypatch) -> None:
    """Without TensorBoard every learn() left an empty SB3-<time> folder in /tmp (SB3's
    default logger): 464 of them on a machine after a day of runs and tests."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.delenv("SB3_LOGDIR", raising=False)
    common = ["--players", "1", "--n-envs", "4", "--eval-every", "256", "--eval-games", "2", "--no-progress",
              "--torch-threads", "1"]  # fmt: skip
    out = tmp_path / "run"
    assert train.main(common + ["--net", "16", "--timesteps", "256", "--out", str(out)]) == 0
    assert train.main(common + ["--timesteps", "512", "--resume", str(out / "last.zip"), "--out", str(out)]) == 0
    assert [p.name for p in temp.iterdir() if p.name.startswith("SB3-")] == []  # (torch may keep its cache)


def test_resume_evaluates_on_the_grid_keeps_the_best_and_times_its_own_steps(tmp_path) -> None:
    """A resumed run evaluates every --eval-every steps from the checkpoint's step count
    (not at every step until it catches up), replaces best.zip only with a better model
    measured the same way, and reports the throughput of its own steps."""
    common = ["--players", "2", "--n-envs", "4", "--eval-every", "256", "--eval-games", "2",
              "--eval-opponent", "random", "--snapshot-every", "256", "--max-turns", "60", "--no-progress",
              "--torch-threads", "1", "--net", "32", "32"]  # fmt: skip
    out = tmp_path / "run"
    assert train.main(common + ["--timesteps", "512", "--out", str(out)]) == 0
    before = json.loads((out / "best.json").read_text())["eval"]
    start = json.loads((out / "last.json").read_text())["timesteps"]
    first = json.loads((out / "train_summary.json").read_text())["history"]
    resume = [a for a in common if a not in ("--net", "32")]
    # --timesteps is the run's total: 512 more steps
    assert train.main(resume + ["--timesteps", "1024", "--resume", str(out / "last.zip"), "--out", str(out)]) == 0
    summary = json.loads((out / "train_summary.json").read_text())
    assert summary["history"][: len(first)] == first  # the first session's evaluations are kept
    grid = [h["timesteps"] for h in summary["history"][len(first) : -1]]  # the last is the final evaluation
    assert [h.get("final", False) for h in summary["history"]] == [False] * (len(first) - 1) + [True] + [False] * len(
        grid
    ) + [True]  # each session's last evaluation is marked: it may share a step count with a periodic one
    assert len(grid) == 2 and all(0 <= t % 256 < 4 for t in grid), grid  # 4 games step together
    assert summary["session_timesteps"] == summary["timesteps"] - start >= 512
    assert summary["env_steps_per_second"] == pytest.approx(summary["session_timesteps"] / summary["seconds"], rel=0.05)
    after = json.loads((out / "best.json").read_text())["eval"]
    assert list(after) == list(before) and after[next(iter(after))] >= before[next(iter(before))]


def test_best_zip_is_replaced_by_every_better_evaluation_and_only_by_a_better_one(tmp_path, monkeypatch) -> None:
    """Scripted evaluations (win rates 0.25, 0.5, 1.0, 0.75, 1.0, ...): best.zip follows the
    first 1.0, replaced by each better one and kept over the equal one after it."""
    from umbrella_env.training import ppo

    rates = iter([0.25, 0.5, 1.0, 0.75, 1.0] + [0.5] * 10)
    monkeypatch.setattr(
        ppo, "evaluate_model", lambda model, config, opp, games, seed: ppo.EvalResult(games, next(rates), 3.0)
    )
    out = tmp_path / "run"
    argv = ["--players", "2", "--n-envs", "4", "--eval-every", "256", "--eval-games", "2", "--eval-opponent", "random",
            "--max-turns", "60", "--no-progress", "--torch-threads", "1", "--net", "32", "32", "--timesteps", "1024",
            "--out", str(out)]  # fmt: skip
    assert train.main(argv) == 0
    history = json.loads((out / "train_summary.json").read_text())["history"]
    assert len(history) >= 5
    best = json.loads((out / "best.json").read_text())
    assert best["timesteps"] == history[2]["timesteps"] < history[4]["timesteps"]
    assert list(best["eval"].values()) == [history[2]["metric"]] and history[2]["metric"] > history[1]["metric"]


def test_a_resumed_self_play_run_plays_against_the_resumed_model_from_its_first_step(tmp_path) -> None:
    common = ["--players", "2", "--n-envs", "4", "--eval-every", "100000", "--eval-games", "2",
              "--eval-opponent", "random", "--opponents", "self", "--max-turns", "60", "--no-progress",
              "--torch-threads", "1"]  # fmt: skip
    out = tmp_path / "run"
    assert (
        train.main(common + ["--timesteps", "256", "--snapshot-every", "200", "--net", "32", "32", "--out", str(out)])
        == 0
    )
    start = json.loads((out / "last.json").read_text())["timesteps"]
    assert json.loads((out / "snapshot.json").read_text())["timesteps"] < start
    resume = ["--timesteps", str(start + 128), "--snapshot-every", "100000", "--resume", str(out / "last.zip"),
              "--out", str(out)]  # fmt: skip
    assert train.main(common + resume) == 0
    assert json.loads((out / "snapshot.json").read_text())["timesteps"] == start  # taken at the resume


def test_resume_refuses_another_trainers_checkpoint_and_settings_it_would_ignore(tmp_path, capsys) -> None:
    """A checkpoint whose sidecar does not record its network and PPO settings (one written
    before 2026-12-07) refuses them given: it cannot tell they are its own."""
    assert train.main(["--timesteps", "64", "--n-envs", "2", "--eval-games", "1", "--net", "16", "--no-progress",
                       "--torch-threads", "1", "--out", str(tmp_path)]) == 0  # fmt: skip
    meta = json.loads((tmp_path / "last.json").read_text())
    for key in ("net", "features", "n_epochs", "batch_size", "learning_rate", "ent_coef"):
        del meta[key]
    (tmp_path / "last.json").write_text(json.dumps(meta))
    for argv, message in [
        (["--resume", str(tmp_path / "last.pt")], "expected a .zip checkpoint of this trainer"),
        (["--resume", str(tmp_path / "last.zip"), "--net", "64"], "--net comes from the checkpoint on --resume"),
        (["--resume", str(tmp_path / "last.zip"), "--learning-rate", "1e-4"], "--learning-rate comes from"),
    ]:
        info_code = train.main(argv + ["--timesteps", "64", "--out", str(tmp_path / "run")])
        assert info_code == 2 and message in capsys.readouterr().err


def test_the_interrupted_command_of_a_cloned_run_with_resume_added_finishes_it(tmp_path, capsys) -> None:
    """The README's recipe clones a teacher (--pretrain ...): with --resume added it was
    refused, one option at a time (--pretrain, --pretrain-games, ..., --workers). The run's
    cloning options, equal to what its checkpoint records, are accepted and not done again;
    one that differs, or any on a run that cloned nothing, is refused."""
    command = ["--players", "2", "--n-envs", "4", "--eval-every", "100000", "--eval-games", "1", "--max-turns", "20",
               "--eval-opponent", "random", "--opponents", "greedy", "self", "--pretrain", "heuristic",
               "--pretrain-games", "4", "--pretrain-epochs", "1", "--workers", "1", "--no-progress",
               "--torch-threads", "1", "--net", "16"]  # fmt: skip
    out = tmp_path / "run"
    assert train.main([*command, "--timesteps", "128", "--out", str(out)]) == 0
    assert "[pretrain epoch 1/1]" in capsys.readouterr().out
    record = json.loads((out / "last.json").read_text())["pretraining"]
    assert record == {"pretrain": "heuristic", "pretrain_games": 4, "pretrain_opponents": ["greedy", "self"],
                      "pretrain_epochs": 1, "pretrain_lr": 0.001, "pretrain_batch": 256}  # fmt: skip
    resume = ["--resume", str(out / "last.zip"), "--timesteps", "256"]
    assert train.main([*command, *resume, "--out", str(out)]) == 0
    printed = capsys.readouterr()
    assert "heuristic: " not in printed.out and "[pretrain epoch" not in printed.out  # not cloned again
    assert (
        "note: --pretrain, --pretrain-games, --pretrain-epochs, --workers: the run's cloning, done at its start; "
        "a resume does not clone again"
    ) in printed.out + printed.err
    assert json.loads((out / "last.json").read_text())["pretraining"] == record  # kept for the next resume
    assert json.loads((out / "last.json").read_text())["timesteps"] > 128
    for more, message in [
        (["--pretrain-games", "5"], "--pretrain-games 5 differs from the run's cloning (4)"),
        (["--pretrain", "greedy"], "--pretrain greedy differs from the run's cloning (heuristic)"),
        (["--pretrain-opponents", "random"], "--pretrain-opponents random differs from the run's cloning (greedy self)"),
    ]:  # fmt: skip
        argv = [*command, *more, "--resume", str(out / "last.zip"), "--timesteps", "512", "--out", str(tmp_path / "x")]
        assert train.main(argv) == 2 and message in capsys.readouterr().err
    plain = tmp_path / "plain"
    assert train.main([*command[:14], "--no-progress", "--torch-threads", "1", "--net", "16", "--timesteps", "128",
                       "--out", str(plain)]) == 0  # fmt: skip
    assert json.loads((plain / "last.json").read_text())["pretraining"] is None
    argv = [*command, "--resume", str(plain / "last.zip"), "--timesteps", "256", "--out", str(tmp_path / "y")]
    assert train.main(argv) == 2
    assert (
        "--pretrain, --pretrain-games, --pretrain-epochs, --workers: the checkpoint's run cloned no teacher"
        in capsys.readouterr().err
    )
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()
    # a checkpoint written before the record: its resume leaves the record out, not "no cloning"
    meta = json.loads((out / "last.json").read_text())
    del meta["pretraining"]
    (out / "last.json").write_text(json.dumps(meta))
    bare = [*command[:14], "self", "--no-progress", "--torch-threads", "1"]
    assert train.main([*bare, "--resume", str(out / "last.zip"), "--timesteps", "384", "--out", str(out)]) == 0
    assert "pretraining" not in json.loads((out / "last.json").read_text())


def test_the_cloned_policy_is_the_first_best(tmp_path, monkeypatch, capsys) -> None:
    """best.zip was the best of the PPO evaluations only: worse than the cloned policy
    (evaluated the same way after the cloning) when no PPO step beat it."""
    from umbrella_env.training import ppo

    rates = iter([1.0, 0.5, 0.75, 0.5, 0.5, 0.5])  # the cloned policy's evaluation first
    monkeypatch.setattr(
        ppo, "evaluate_model", lambda model, config, opp, games, seed: ppo.EvalResult(games, next(rates), 3.0)
    )
    out = tmp_path / "run"
    argv = ["--players", "2", "--n-envs", "4", "--eval-every", "256", "--eval-games", "2", "--eval-opponent", "random",
            "--pretrain", "heuristic", "--pretrain-games", "2", "--pretrain-epochs", "1", "--workers", "1",
            "--max-turns", "40", "--no-progress", "--torch-threads", "1", "--net", "16", "--timesteps", "512",
            "--out", str(out)]  # fmt: skip
    assert train.main(argv) == 0
    assert "best.zip: the cloned policy, until a PPO evaluation beats it" in capsys.readouterr().out
    best = json.loads((out / "best.json").read_text())
    summary = json.loads((out / "train_summary.json").read_text())
    assert best["timesteps"] == 0 and list(best["eval"].values()) == [summary["pretrain_eval"]["metric"]]
    assert summary["best_metric"] == summary["pretrain_eval"]["metric"] > max(h["metric"] for h in summary["history"])


def test_a_log_gets_a_progress_line_of_the_ppo_steps(tmp_path, monkeypatch, capsys) -> None:
    """SB3's rich bar draws nothing when the output is no terminal: a run into a log printed
    nothing between its evaluations."""
    from umbrella_env import parallel

    monkeypatch.setattr(parallel, "PLAIN_PROGRESS_SECONDS", 0.0)
    argv = ["--players", "1", "--n-envs", "4", "--eval-every", "100000", "--eval-games", "1", "--torch-threads", "1",
            "--net", "16", "--timesteps", "256", "--out", str(tmp_path / "run")]  # fmt: skip
    assert train.main(argv) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("PPO steps: ")]
    assert len(lines) >= 2 and lines[-1].startswith("PPO steps: 256/256 (100%)"), lines


def test_snapshot_every_is_refused_where_no_snapshot_is_taken(tmp_path, capsys) -> None:
    for argv, message in [
        (["--players", "1"], "--snapshot-every applies to 2-4 players only"),
        (["--players", "2", "--opponents", "random", "greedy"], "--snapshot-every: no 'self' among the opponents"),
    ]:
        assert train.main([*argv, "--snapshot-every", "100", "--timesteps", "64", "--out", str(tmp_path / "r")]) == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_a_refused_resume_or_cache_leaves_the_previous_run_whole(tmp_path, capsys) -> None:
    """--overwrite removed the previous run, then the checkpoint of --resume (a zip with a
    sidecar, not a model: SB3's AssertionError, a traceback) or the --pretrain-cache (another
    teacher's games) was refused: nothing was left of either run."""
    import zipfile

    from umbrella_env.training import imitation

    common = ["--players", "2", "--n-envs", "2", "--eval-every", "100000", "--eval-games", "1", "--max-turns", "20",
              "--eval-opponent", "random", "--opponents", "random", "--no-progress", "--torch-threads", "1",
              "--net", "16", "--timesteps", "64"]  # fmt: skip
    out = tmp_path / "run"
    assert train.main([*common, "--out", str(out)]) == 0
    before = {f.name: f.read_bytes() for f in out.iterdir() if f.is_file()}
    with zipfile.ZipFile(tmp_path / "other.zip", "w") as z:
        z.writestr("notes.txt", "not a model")
    meta = json.loads((out / "last.json").read_text())
    unhashed = {k: v for k, v in meta.items() if k != "sha256"}  # a valid sidecar, as written before the hash
    (tmp_path / "other.json").write_text(json.dumps(unhashed))
    resume = [a for a in common if a not in ("--net", "16")]
    info_code = train.main([*resume, "--overwrite", "--resume", str(tmp_path / "other.zip"), "--out", str(out)])
    assert info_code == 2 and "--resume: checkpoint" in capsys.readouterr().err
    assert {f.name: f.read_bytes() for f in out.iterdir() if f.is_file()} == before
    config = GameConfig(num_players=2, plate_level=1, max_turns=20)
    imitation.collect(config, "greedy", ["random"], 2, 0, 0.1, 0.99, workers=1, progress=False).save(
        tmp_path / "greedy.npz"
    )
    cache = ["--pretrain", "heuristic", "--pretrain-games", "2", "--pretrain-cache", str(tmp_path / "greedy.npz")]
    info_code = train.main([*common, *cache, "--overwrite", "--out", str(out)])
    assert info_code == 2 and "teacher='greedy' (this run: 'heuristic')" in capsys.readouterr().err
    assert {f.name: f.read_bytes() for f in out.iterdir() if f.is_file()} == before


def test_a_run_stopped_while_it_writes_the_teacher_cache_leaves_none(tmp_path, monkeypatch, capsys) -> None:
    """--pretrain-cache was written in place: a run stopped in the write left a truncated
    file, which the next run refused (its teacher games lost, the file to remove by hand)."""
    from umbrella_env.training import imitation

    def stopped(self, file):  # half the file written, then Ctrl-C
        file.write(b"PK\x03\x04 half a zip")
        raise KeyboardInterrupt

    monkeypatch.setattr(imitation.Demonstrations, "_savez", stopped)
    cache = tmp_path / "teacher.npz"
    argv = ["--players", "2", "--n-envs", "2", "--eval-every", "100000", "--eval-games", "1", "--max-turns", "20",
            "--no-progress", "--torch-threads", "1", "--net", "16", "--timesteps", "64", "--pretrain", "greedy",
            "--pretrain-games", "2", "--pretrain-cache", str(cache), "--out", str(tmp_path / "run")]  # fmt: skip
    assert train.main(argv) == 130
    assert not cache.exists() and list(tmp_path.glob("teacher.npz*")) == []


def test_the_eval_opponent_is_built_as_it_was_checked(tmp_path) -> None:
    """A package.module:factory opponent passed the check (match.build_agent), then the
    evaluation built it with make_agent, which refuses factories: a traceback mid-run."""
    from agents.policy import load_model

    out = tmp_path / "run"
    argv = ["--players", "2", "--n-envs", "2", "--eval-every", "64", "--eval-games", "2", "--max-turns", "20",
            "--eval-opponent", "agents.base:RandomAgent", "--no-progress", "--torch-threads", "1", "--net", "16",
            "--timesteps", "64", "--out", str(out)]  # fmt: skip
    assert train.main(argv) == 0
    res = train.evaluate_model(load_model(out / "last.zip"), GameConfig(num_players=2), "agents.base:RandomAgent", 2, 0)
    assert res.games == 2 and 0.0 <= res.win_rate <= 1.0


def test_missing_or_foreign_checkpoints_are_refused(tmp_path) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        PolicyAgent(tmp_path / "nope.zip")
    (tmp_path / "foreign.zip").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="metadata"):
        PolicyAgent(tmp_path / "foreign.zip")


@pytest.mark.parametrize("level", [1, 2, 3, 4])
def test_figure_features_match_the_agents_figure_progress(level: int) -> None:
    """The torch features equal ``agents.common.Figures.best`` after every slide (accepted colours only)."""
    import torch
    from gymnasium import spaces

    from agents.common import figures, slide_stages, stage_array
    from agents.features import NUM_FEATURES, FigureFeatures
    from umbrella_env.core.observation import observation_bounds

    extractor = FigureFeatures(spaces.Box(*observation_bounds(), dtype=np.float32))
    assert extractor.features_dim == 899 + NUM_FEATURES
    rng = np.random.default_rng(level)
    config = GameConfig(num_players=2, plate_level=level)
    checked = complete = 0
    for key in range(1, 9):
        game = SingleGame.new(config, key)
        while not game.done:
            if game.phase == 0:
                p = game.current
                feats = extractor(torch.as_tensor(game.observe(p)[None]))[0].numpy()
                assert np.array_equal(feats[:899], game.observe(p))
                extra = feats[899:]
                per_slot = extra[32:288].reshape(64, 4) * 4
                figs = figures(game, p)
                best = figs.best(slide_stages(stage_array(game, p)))
                expected = np.zeros((64, 4))
                for i, k in enumerate(figs.slots):
                    expected[:, k] = best[:, i]
                np.testing.assert_allclose(per_slot, expected)
                np.testing.assert_allclose(extra[288:352] * 4, expected.max(1))
                np.testing.assert_array_equal(extra[352:416], (expected.max(1) == 4).astype(np.float32))
                checked += 1
                complete += int((expected == 4).any())
            game.step(int(rng.choice(game.legal_actions())))
    assert checked > 100 and complete > 0


def test_pretraining_clones_the_teacher(tmp_path) -> None:
    """A few hundred greedy decisions, fitted for a few epochs, are reproduced far above chance."""
    from umbrella_env.training import imitation

    config = GameConfig(num_players=2, plate_level=1)
    demos = imitation.collect(
        config, "greedy", ["random"], games=40, seed=3, shaping=0.1, gamma=0.99, workers=1, progress=False
    )
    assert len(demos) > 300 and demos.obs.shape == (len(demos), 899)
    assert demos.masks[np.arange(len(demos)), demos.actions].all()  # the teacher only played legal moves
    assert demos.wins / demos.games > 0.7  # greedy beats random
    again = imitation.collect(
        config, "greedy", ["random"], games=40, seed=3, shaping=0.1, gamma=0.99, workers=2, progress=False
    )
    np.testing.assert_array_equal(demos.actions, again.actions)  # independent of the worker count
    np.testing.assert_array_equal(demos.returns, again.returns)

    demos.save(tmp_path / "demos.npz")  # the cache round-trips and knows what it was made from
    loaded = imitation.Demonstrations.load(tmp_path / "demos.npz")
    np.testing.assert_array_equal(loaded.masks, demos.masks)
    np.testing.assert_array_equal(loaded.obs, demos.obs)
    loaded.check_source(imitation.source(config, "greedy", ["random"], 40, 3, 0.1, 0.99), "demos.npz")
    with pytest.raises(ValueError, match="teacher='greedy' .this run: 'heuristic'."):
        loaded.check_source(imitation.source(config, "heuristic", ["random"], 40, 3, 0.1, 0.99), "demos.npz")

    from sb3_contrib import MaskablePPO

    env = train.LearnerVecEnv(4, config, train.OpponentPool(["random"], config, seed=0), shaping=0.1, seed=0)
    args = train.resolve_defaults(train.build_parser().parse_args(["--net", "64", "64"]))
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=8, batch_size=32, policy_kwargs=train.policy_kwargs(args), seed=0, device="cpu"
    )
    history = imitation.pretrain(model, demos, epochs=12, batch_size=64, seed=0)
    assert history[-1]["loss"] < history[0]["loss"]
    chance = float(np.mean(1.0 / demos.masks.sum(1)))
    assert history[-1]["train_accuracy"] > chance + 0.15


def test_bad_pretraining_options_are_refused(tmp_path, capsys) -> None:
    for argv, message in [
        (["--pretrain", "bogus"], "unknown agent 'bogus'"),
        (["--pretrain", "greedy", "--pretrain-games", "0"], "--pretrain-games must be an integer >= 1, got 0"),
        (["--pretrain", "greedy", "--pretrain-batch", "0"], "--pretrain-batch must be an integer >= 1, got 0"),
        (["--pretrain", "greedy", "--pretrain-lr", "-1"], "--pretrain-lr must be a number in (0, 1], got -1.0"),
        (["--pretrain-games", "10"], "--pretrain-games needs --pretrain AGENT"),
        (["--pretrain-cache", str(tmp_path / "d.npz")], "needs --pretrain"),
    ]:
        info_code = train.main(argv + ["--timesteps", "64", "--out", str(tmp_path / "run")])
        assert info_code == 2
        assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--learning-rate", "nan"], "--learning-rate must be a number in (0, 1], got nan"),
        (["--learning-rate", "1.5"], "--learning-rate must be a number in (0, 1], got 1.5"),  # only diverges
        (["--learning-rate", "0"], "--learning-rate must be a number in (0, 1], got 0.0"),
        (["--shaping", "nan"], "--shaping must be a number in [0, 1], got nan"),
        (["--shaping", "1e20"], "--shaping must be a number in [0, 1], got 1e+20"),  # a cloning loss of inf
        (["--ent-coef", "-1"], "--ent-coef must be a finite number >= 0, got -1.0"),
        (["--players", "1", "--opponents", "greedy"], "--opponents applies to 2-4 players only"),
        (["--players", "1", "--eval-opponent", "greedy"], "--eval-opponent applies to 2-4 players only"),
        (["--net", "99999999999"], "--net layer sizes must be from 1 to 8,192, got [99999999999]"),  # was a torch error
        (["--net", "64", "0"], "--net layer sizes must be from 1 to 8,192, got [64, 0]"),
        (
            ["--n-envs", "1000000000000"],
            "--n-envs must be an integer from 1 to 1,000,000, got 1000000000000",
        ),  # MemoryError
    ],
)
def test_bad_or_ignored_options_are_refused_before_training(tmp_path, capsys, argv, message) -> None:
    info_code = train.main(argv + ["--timesteps", "64", "--out", str(tmp_path / "run")])
    assert info_code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_quick_fills_in_only_the_options_left_out() -> None:
    args, given = train.parse_options(
        train.build_parser(),
        ["--quick", "--pretrain-games", "2000", "--opponents", "random", "self", "--ent-coef", "0.01"],
    )
    # given on the command line (2000 and the opponents equal the defaults, but they were written)
    assert (args.pretrain_games, args.opponents, args.ent_coef) == (2000, ["random", "self"], 0.01)
    assert {"pretrain_games", "opponents", "ent_coef", "quick"} <= given
    assert (args.timesteps, args.pretrain) == (train.QUICK["timesteps"], "heuristic")  # left out: the preset's
    plain, _ = train.parse_options(train.build_parser(), ["--pretrain-games", "2000"])
    assert plain.timesteps != train.QUICK["timesteps"] and plain.pretrain is None


def test_umbrella_train_is_train_py() -> None:
    """The console script and train.py are one command: ``--algo`` works in both."""
    from umbrella_env.training import cli

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib

    scripts = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["umbrella-train"] == "umbrella_env.training.cli:main"
    assert cli.split_algo(["--algo", "alphazero", "--quick"]) == ("alphazero", ["--quick"])
    assert cli.split_algo(["--quick", "--algo=ppo"]) == ("ppo", ["--quick"])
    assert cli.main(["--algo", "dqn"]) == 2


_WITHOUT_SB3 = """
import sys
sys.modules["sb3_contrib"] = None  # as without it: the import fails
from umbrella_env.training import cli
sys.exit(cli.main(sys.argv[1:]))
"""


def test_train_without_sb3_contrib_names_the_extra_and_alphazero_still_runs() -> None:
    """train.py printed a hint, then a ModuleNotFoundError traceback; and it imported both
    trainers, so --algo alphazero (torch only) needed sb3-contrib too.  (A fresh interpreter:
    the trainers are imported without sb3-contrib, and this one's modules stay as they are.)"""
    import subprocess

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", _WITHOUT_SB3, *argv], capture_output=True, text=True, timeout=120)

    ppo_run = run("--players", "2")
    assert ppo_run.returncode == 2, ppo_run.stderr
    assert "error: the MaskablePPO trainer needs the train extra (sb3_contrib is missing)" in ppo_run.stderr
    assert ppo_run.stderr.rstrip().endswith('pip install -c constraints.txt -e ".[train]"')
    assert "Traceback" not in ppo_run.stderr
    az_help = run("--algo", "alphazero", "--help")
    assert az_help.returncode == 0 and "--simulations" in az_help.stdout, az_help.stderr


_WITHOUT_TORCH = """
import runpy, sys
sys.modules["torch"] = None  # as without the train extra: the import fails
sys.argv = [sys.argv[1], "--help"]
runpy.run_module(sys.argv[0], run_name="__main__")
"""


@pytest.mark.parametrize(
    ("module", "what"),
    [
        ("umbrella_env.training.bench", "the training benchmark"),
        ("umbrella_env.training.bench_alphazero", "the self-play benchmark"),
        ("umbrella_env.export", "exporting to ONNX"),
    ],
)
def test_the_torch_commands_without_torch_say_so_in_one_line(module: str, what: str) -> None:
    # The two benchmarks printed a ModuleNotFoundError traceback, even for --help.
    import subprocess

    run = subprocess.run([sys.executable, "-c", _WITHOUT_TORCH, module], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert run.stderr.strip() == (
        f'error: {what} needs the train extra (torch is missing): pip install -c constraints.txt -e ".[train]"'
    )


def test_the_umbrella_export_script_without_torch_says_so_in_one_line() -> None:
    # The console script imports the module as a library: two chained tracebacks, exit 1.
    import subprocess

    program = "import sys; sys.modules['torch'] = None; from umbrella_env.scripts import export; sys.exit(export())"
    run = subprocess.run([sys.executable, "-c", program, "--help"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and run.stderr.strip() == (
        "umbrella-export: error: exporting to ONNX needs the train extra (torch is missing): "
        'pip install -c constraints.txt -e ".[train]"'
    ), run.stderr


def test_train_keeps_the_traceback_of_an_import_error_that_is_a_bug(monkeypatch) -> None:
    """Only a missing extra is one line; any other ImportError (a renamed name) is a bug."""
    from umbrella_env import cli_args
    from umbrella_env.training import cli

    def broken(name: str) -> None:
        raise ImportError("cannot import name 'end_rewards' from 'umbrella_env.envs.common'")

    monkeypatch.setattr(cli_args.importlib, "import_module", broken)  # cli_args.import_command's import
    with pytest.raises(ImportError, match="end_rewards"):
        cli.main(["--players", "2"])


def test_bench_train_runs_both_envs(capsys) -> None:
    from umbrella_env.training import bench as bench_train

    argv = ["--n-envs", "4", "--bench-timesteps", "256", "--net", "32", "32", "--rounds", "2", "--torch-threads", "1"]
    assert bench_train.main(argv) == 0
    out = capsys.readouterr().out
    # the rounds alternate the order of the two envs, so a change of load falls on both
    assert "round 1/2: native vector env" in out and "round 2/2: DummyVecEnv of Solo-v0" in out
    assert "ratio native / peer" in out and "(median of 2 rounds)" in out
    # each env times whole rollouts of 32 x 4 steps: 2 rounds of 128 (at least 256 / 2 each)
    assert out.count("(256 steps in ") == 2


def test_bench_train_help_lists_only_the_options_it_uses(capsys) -> None:
    from umbrella_env.training import bench as bench_train

    assert bench_train.main(["--help"]) == 0
    shown = set(re.findall(r"(--[a-z][a-z-]+)", capsys.readouterr().out.split("\n\n", 1)[0]))  # the usage lines
    assert {"--n-epochs", "--features", "--bench-timesteps", "--skip-peer"} <= shown
    assert not shown & {"--algo", "--out", "--resume", "--eval-every", "--pretrain"}, shown
    code = bench_train.main(["--eval-every", "5"])  # still refused by name when given
    assert code == 2 and "--eval-every: not used by this benchmark" in capsys.readouterr().err


def test_bench_alphazero_reports_its_peer_in_the_same_run(capsys) -> None:
    from umbrella_env.training import bench_alphazero

    # level 2: an untrained network (the shipped ones are level 1), so the run stays small
    argv = ["--players", "2", "--level", "2", "--games", "2", "--simulations", "2", "--max-considered", "2"]
    assert bench_alphazero.main([*argv, "--peer-games", "1"]) == 0
    out = capsys.readouterr().out
    assert "searched decisions/s" in out and "time share (all workers): engine" in out
    assert "peer, one game in flight (1 game(s), one process)" in out
    ratio = float(out.split("ratio batched / one game in flight, per process: ")[1].split()[0])
    assert ratio > 0
    assert bench_alphazero.main([*argv, "--peer-games", "0"]) == 0
    assert "peer" not in capsys.readouterr().out


def test_loading_a_policy_agent_leaves_process_settings_alone(tmp_path) -> None:
    """No agent changes process-wide settings: training builds one per self-play snapshot,
    and a changed torch thread count would silently override --torch-threads."""
    import torch
    from sb3_contrib import MaskablePPO

    config = GameConfig(num_players=2, plate_level=1, max_turns=100)
    env = train.LearnerVecEnv(2, config, train.OpponentPool(["random"], config, seed=0), shaping=0.0, seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=16, policy_kwargs={"net_arch": [16]}, device="cpu")
    train.save_checkpoint(model, tmp_path / "m.zip", config, {"timesteps": 0})
    before = torch.get_num_threads()
    wanted = 2 if before != 2 else 3
    torch.set_num_threads(wanted)
    try:
        agent = PolicyAgent(tmp_path / "m.zip", num_players=2, plate_level=1)
        assert torch.get_num_threads() == wanted
        game = SingleGame.new(config, 7)
        assert game.legal_mask()[agent.act(game.observe(game.actor), game.legal_mask())]
    finally:
        torch.set_num_threads(before)


def test_a_policy_of_nan_weights_is_refused_when_loaded(tmp_path) -> None:
    # It loaded and played its first legal action at every decision, without a word.
    import torch
    from sb3_contrib import MaskablePPO

    from agents.policy import load_model

    config = GameConfig(num_players=2, plate_level=1, max_turns=100)
    env = train.LearnerVecEnv(2, config, train.OpponentPool(["random"], config, seed=0), shaping=0.0, seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=16, policy_kwargs={"net_arch": [16]}, device="cpu")
    with torch.no_grad():
        next(model.policy.parameters()).view(-1)[3] = float("nan")
    train.save_checkpoint(model, tmp_path / "m.zip", config, {"timesteps": 0})
    with pytest.raises(ValueError, match=r"m.zip' holds weights that are not finite \(NaN or inf\) in "):
        load_model(tmp_path / "m.zip")
    with pytest.raises(ValueError, match="not finite"):
        PolicyAgent(tmp_path / "m.zip", num_players=2, plate_level=1)


def test_the_best_checkpoint_metric_never_trades_win_rate_for_score() -> None:
    """2-4 players: the win rate first, the mean score only between equal win rates (a win of
    40 games is worth 0.0125, and the metric used to add 1e-3 x the score: a 13-point higher
    mean score outweighed one more win)."""
    from umbrella_env.training.options import selection_metric

    more_wins, more_points = train.EvalResult(40, 0.5, 10.0), train.EvalResult(40, 0.4875, 23.0)
    assert more_wins.metric(False) > more_points.metric(False)
    assert train.EvalResult(40, 0.5, 11.0).metric(False) > more_wins.metric(False)  # the tie-break
    assert more_points.metric(True) == 23.0  # solo: the mean score
    for games in (1, 40, 10_000):  # the smallest step of a win rate (a win shared by 4 seats, or 3)
        step = 1 / (12 * games)
        assert selection_metric(0.25 + step, 0.0, games, False) > selection_metric(0.25, 999.0, games, False)


@pytest.mark.parametrize(
    ("label", "games", "compared"),
    [
        ("win rate vs random, ties broken by the mean score", 40, True),
        # 0.1.0's formula (win rate + mean score / 1000, which let 13 points outweigh a win in
        # 40 games) under the label today's formula had kept: it was compared
        ("win rate vs random (+ mean score / 1000)", 40, False),
        # the game count was not recorded then: it was taken as today's
        ("win rate vs random, ties broken by the mean score", None, False),
    ],
)
def test_a_resume_compares_only_a_best_measured_the_same_way(tmp_path, capsys, label, games, compared) -> None:
    import argparse

    from agents.checkpoint import base_metadata
    from umbrella_env.core.config import GameConfig
    from umbrella_env.training import ppo

    run = tmp_path / "run"
    run.mkdir()
    (run / "best.zip").write_bytes(b"PK")
    meta = {**base_metadata(2, 1), "timesteps": 100, "eval": {label: 0.6}}
    if games is not None:
        meta["eval_games"] = games
    (run / "best.json").write_text(json.dumps(meta))
    args = argparse.Namespace(eval_opponent="random", eval_games=40, resume=run / "last.zip")
    best = ppo.resumed_best(args, GameConfig(num_players=2), run)
    assert best == (0.6 if compared else -np.inf)
    said = capsys.readouterr().err  # a best that is not compared will be replaced: the run says so
    assert ("was measured another way" in said and "makes a new best.zip" in said) == (not compared)


def test_a_run_records_its_pretrained_baseline_and_logs_its_final_evaluation(tmp_path, monkeypatch, capsys) -> None:
    """Review of what the trainers leave behind: the evaluation after pretraining (the
    baseline PPO must beat) was printed and saved nowhere, the final evaluation never reached
    SB3's logger output (SB3 writes at a rollout's end, and none follows the last), and the
    evaluation lines gave a win rate on a few games without its uncertainty."""
    from umbrella_env.training.metrics import read_rows

    out = tmp_path / "run"
    argv = ["--players", "2", "--n-envs", "2", "--eval-every", "100000", "--eval-games", "4", "--max-turns", "20",
            "--eval-opponent", "random", "--no-progress", "--torch-threads", "1", "--net", "16", "--timesteps", "64",
            "--pretrain", "greedy", "--pretrain-games", "2", "--pretrain-epochs", "1", "--out", str(out)]  # fmt: skip
    assert train.main(argv) == 0
    summary = json.loads((out / "train_summary.json").read_text())
    baseline = summary["pretrain_eval"]
    assert baseline["games"] == 4 and 0.0 <= baseline["win_rate"] <= 1.0 and "mean_score" in baseline
    final = summary["history"][-1]
    rows = read_rows(out / "progress.csv", "timesteps", float("inf"))  # SB3's logger output, kept
    assert final["final"] and [(float(r["eval/metric"]), int(r["timesteps"])) for r in rows if r["eval/metric"]] == [
        (final["metric"], final["timesteps"])
    ]
    text = capsys.readouterr().out
    assert re.search(r"\[eval after pretraining, 4 games\] win rate vs random \d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\] "
                     r"\(4 games\), mean score", text)  # fmt: skip


def test_the_teacher_games_take_every_spec_the_commands_check() -> None:
    """Review of the notebook user: train.py --pretrain my_agents:factory passed the up-front
    check (build_agent) and then failed with a traceback in the teacher games (make_agent,
    which takes names and checkpoints only)."""
    from umbrella_env.training import imitation

    config = GameConfig(num_players=2, plate_level=1, max_turns=40)
    first = "tests.test_evaluate:FirstLegalAgent"
    demos = imitation.collect(
        config, first, [first], games=2, seed=3, shaping=0.1, gamma=0.99, workers=1, progress=False
    )
    assert len(demos) > 0 and (demos.actions == np.argmax(demos.masks, axis=1)).all()  # the first legal move
