"""python -m umbrella_env.demo: the batch summary, the pictures of one game (GIF, PNG
frames, SVG), the README picture that must be what its command draws, and bad input."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import numpy as np
import pytest

from umbrella_env import demo
from umbrella_env.core.image import render_rgb
from umbrella_env.core.svg import state_to_svg


@pytest.fixture
def pil_image():
    """PIL.Image: the GIF and PNG frames need Pillow (the eval extra); the other tests do not."""
    return pytest.importorskip("PIL.Image", reason="the GIF and PNG frames need Pillow (the eval extra)")


ROOT = Path(__file__).resolve().parents[1]
README_PICTURE = ROOT / "docs" / "images" / "game.svg"
#: The command that draws docs/images/game.svg (also in umbrella_env/demo.py's docstring and the file's <desc>).
README_PICTURE_ARGS = "--svg docs/images/game.svg --players 2 --level 1 --seed 6 --policy greedy --turns 40".split()
#: A short game for the picture tests: 2 players, 3 whole turns.
SHORT = ["--players", "2", "--seed", "3", "--turns", "3"]


def short_positions() -> list[dict]:
    return list(demo.positions(2, 1, 3, "random", 3))


def read_frames(pil_image, path: Path) -> list[np.ndarray]:
    with pil_image.open(path) as im:
        frames = []
        for k in range(im.n_frames):
            im.seek(k)
            frames.append(np.asarray(im.convert("RGB")))
        return frames


# --------------------------------------------------------------------------- pictures
def test_gif_has_one_frame_per_position_showing_the_game(
    pil_image, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "game.gif"
    assert demo.main(["--gif", str(out), *SHORT]) == 0
    positions = short_positions()
    assert positions[-1]["turn"] == 3 and len(positions) > 3
    frames = read_frames(pil_image, out)
    assert len(frames) == len(positions)
    # The palette keeps every colour: the first and the last frame are the rgb_array pictures.
    np.testing.assert_array_equal(frames[0], render_rgb(positions[0]))
    np.testing.assert_array_equal(frames[-1], render_rgb(positions[-1]))
    assert f"{len(positions)} frames, 300 ms each, from the start to turn 3" in capsys.readouterr().out


def test_max_frames_caps_the_gif_and_frame_ms_sets_its_timing(pil_image, tmp_path: Path) -> None:
    out = tmp_path / "capped.gif"
    assert demo.main(["--gif", str(out), "--max-frames", "3", "--frame-ms", "120", *SHORT]) == 0
    with pil_image.open(out) as im:
        assert im.n_frames == 3
        assert im.info["duration"] == 120


def test_frame_ms_is_what_the_gif_shows_or_refused(
    pil_image, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A GIF keeps a frame's time in hundredths of a second, in 16 bits: 700000 ms was
    Pillow's OverflowError after the game was played, 125 ms became 120 ms in the file."""
    for ms in ("700000", "125"):
        exc_code = demo.main(["--gif", str(tmp_path / "x.gif"), "--frame-ms", ms, *SHORT])
        assert exc_code == 2
        assert "--frame-ms: expected a multiple of 10 from 20 to 655350" in capsys.readouterr().err
    assert not (tmp_path / "x.gif").exists()
    out = tmp_path / "slow.gif"
    assert demo.main(["--gif", str(out), "--frame-ms", "655350", *SHORT]) == 0  # 65535 hundredths
    with pil_image.open(out) as im:
        assert im.info["duration"] == 655350


def test_png_frames_are_the_gif_frames(pil_image, tmp_path: Path) -> None:
    folder = tmp_path / "new" / "frames"
    assert demo.main(["--frames", str(folder), "--max-frames", "4", *SHORT]) == 0
    files = sorted(folder.iterdir())
    assert [f.name for f in files] == [f"frame_{k:04d}.png" for k in range(4)]
    positions = short_positions()
    with pil_image.open(files[3]) as im:
        np.testing.assert_array_equal(np.asarray(im.convert("RGB")), render_rgb(positions[3]))
    (folder / "notes.txt").write_text("kept", encoding="utf-8")
    for file in files:
        file.unlink()
    assert demo.main(["--frames", str(folder), "--max-frames", "2", *SHORT]) == 0  # a folder without frames
    assert sorted(f.name for f in folder.iterdir()) == ["frame_0000.png", "frame_0001.png", "notes.txt"]
    # --overwrite replaces the frames: none of the earlier, longer run's stays beside the new ones
    assert demo.main(["--frames", str(folder), "--max-frames", "1", "--overwrite", *SHORT]) == 0
    assert sorted(f.name for f in folder.iterdir()) == ["frame_0000.png", "notes.txt"]


def test_svg_is_the_last_position(tmp_path: Path) -> None:
    out = tmp_path / "last.svg"
    assert demo.main(["--svg", str(out), *SHORT]) == 0
    last = short_positions()[-1]
    assert last["turn"] == 3
    command = f"python -m umbrella_env.demo --svg {out} --players 2 --level 1 --seed 3 --policy random --turns 3"
    assert out.read_text(encoding="utf-8") == state_to_svg(last, description=f"Drawn by {command}")
    # --overwrite replaces it (refused without, in the bad-input cases); the <desc> is the drawing's command
    assert demo.main(["--svg", str(out), "--overwrite", "--players", "2", "--seed", "3", "--turns", "2"]) == 0
    command = command.replace("--turns 3", "--turns 2")
    after_two = list(demo.positions(2, 1, 3, "random", 2))[-1]
    assert out.read_text(encoding="utf-8") == state_to_svg(after_two, description=f"Drawn by {command}")


def test_the_readme_picture_is_what_its_command_draws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "docs" / "images").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert demo.main(README_PICTURE_ARGS) == 0
    drawn = (tmp_path / "docs" / "images" / "game.svg").read_text(encoding="utf-8")
    committed = README_PICTURE.read_text(encoding="utf-8")
    command = "python -m umbrella_env.demo " + " ".join(README_PICTURE_ARGS)
    assert committed == drawn, f"docs/images/game.svg is stale: run {command} --overwrite"
    assert "Umbrella, 2 players" in committed and "turn 40 of" in committed
    assert f"<desc>Drawn by {command}</desc>" in committed  # the file says how it was made


# --------------------------------------------------------------------------- the batch summary
def test_summary_of_a_seeded_batch(capsys: pytest.CaptureFixture[str]) -> None:
    assert demo.main(["--players", "1", "--games", "4", "--seed", "2", "--policy", "greedy"]) == 0
    out = capsys.readouterr().out
    assert "4 solo games at plate level 1, greedy policy, seed 2" in out
    assert "merit bands:" in out


def test_a_truncated_game_is_a_draw_in_the_win_shares(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in evaluation (umbrella_env.match.win_credits); the leader of a truncated game was
    credited with a win.  Every game here is cut at 6 turns."""
    from umbrella_env.core.config import GameConfig
    from umbrella_env.match import win_credits

    monkeypatch.setattr(demo, "GameConfig", lambda **kw: GameConfig(max_turns=6, **kw))
    out = demo.run(3, 1, 8, 1, "random")
    assert "ended by the rules: 0   truncated at 6 turns: 8" in out
    assert win_credits([0, 1, 2], truncated=True) == [1 / 3] * 3
    seats = [line for line in out.splitlines() if line.startswith("  seat ")]
    assert len(seats) == 3 and all(line.endswith("win share  33.3%") for line in seats), seats


def test_the_demo_imports_nothing_from_the_tools() -> None:
    """Its greedy policy comes from the environment library (umbrella_env.core.playout)."""
    tree = ast.parse(Path(demo.__file__).read_text(encoding="utf-8"))
    imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert "umbrella_env.core.playout" in imported
    assert not [m for m in imported if m.startswith("umbrella_env.tools")]


# --------------------------------------------------------------------------- bad input
def _bad_cases(tmp: Path) -> list[tuple[list[str], str]]:
    a_file = tmp / "a_file.txt"
    a_file.write_text("x", encoding="utf-8")
    earlier = tmp / "earlier"
    earlier.mkdir()
    (earlier / "frame_0006.png").write_bytes(b"")  # an earlier, longer game's last frame
    folder_gif = tmp / "folder.gif"
    folder_gif.mkdir()
    drawn = tmp / "drawn.svg"
    drawn.write_text("<svg/>", encoding="utf-8")  # an earlier picture: replaced only when asked
    return [
        (["--svg", str(drawn), *SHORT], f"--svg: {str(drawn)!r} already exists: give another name, or --overwrite"),
        (["--overwrite"], "--overwrite: only with a picture option"),
        (["--gif", str(tmp / "out.png")], "--gif: expected a file name ending in .gif"),
        (["--svg", str(tmp / "out.gif")], "--svg: expected a file name ending in .svg"),
        (["--gif", str(tmp / "missing" / "out.gif")], "does not exist"),
        (["--svg", str(a_file / "out.svg")], "does not exist"),
        (["--gif", str(tmp)], "expected a file name ending in .gif"),
        (["--frames", str(a_file)], f"--frames: {str(a_file)!r} exists and is not a folder"),  # not PosixPath(...)
        (["--frames", str(a_file / "sub")], "is a file, not a folder"),
        # new frames would mix with the earlier game's (a shorter game left its last ones)
        (["--frames", str(earlier), *SHORT], f"{str(earlier)!r} already holds frames (frame_*.png); give an empty"),
        (["--gif", str(folder_gif)], "is a folder, expected a file name ending in .gif"),
        # refused before the game is played (root passes the permission-bit check)
        *(
            [(["--svg", "/proc/x.svg"], "'/proc' does not take a new file or folder")]
            if Path("/proc/self").is_dir()
            else []
        ),
        (["--seed", "-1"], "argument --seed: expected an integer >= 0, got '-1'"),
        (["--seed", "-1", "--gif", str(tmp / "x.gif")], "argument --seed: expected an integer >= 0"),
        (["--games", "0"], "--games must be an integer from 1 to 100,000, got 0"),
        # NumPy's MemoryError (or the out-of-memory killer), about 43 kB per greedy game
        (["--games", "1000000000"], "--games must be an integer from 1 to 100,000, got 1000000000"),
        (["--turns", "3"], "--turns: only with a picture option"),
        # the SVG is the last position, PNG frames have no time: these were silently ignored
        (["--max-frames", "5", "--svg", str(tmp / "x.svg")], "--max-frames: only with --gif or --frames"),
        (["--frame-ms", "100", "--svg", str(tmp / "x.svg")], "--frame-ms: only with --gif"),
        (["--frame-ms", "100", "--frames", str(tmp / "new")], "--frame-ms: only with --gif"),
        (["--max-frames", "0", "--gif", str(tmp / "x.gif")], "--max-frames must be an integer >= 1"),
        (["--frame-ms", "5", "--gif", str(tmp / "x.gif")], "--frame-ms: expected a multiple of 10 from 20 to 655350"),
        (["--games", "4", "--svg", str(tmp / "x.svg")], "leave out --games"),
        # the option's name, not the core's (num_players, plate_level)
        (
            ["--players", "5", "--svg", str(tmp / "x.svg")],
            "argument --players: invalid choice: 5 (choose from 1, 2, 3, 4)",
        ),
        (["--level", "0", "--gif", str(tmp / "x.gif")], "argument --level: invalid choice: 0 (choose from 1, 2, 3, 4)"),
        (["--players", "0"], "argument --players: invalid choice: 0"),
    ]


def test_bad_input_exits_with_code_2_and_a_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv, message in _bad_cases(tmp_path):
        before = sorted(p.name for p in tmp_path.rglob("*"))
        exc_code = demo.main(argv)
        assert exc_code == 2, argv
        err = capsys.readouterr().err
        assert message in err, (argv, err)
        assert sorted(p.name for p in tmp_path.rglob("*")) == before, f"{argv} wrote a file"


def test_missing_pillow_names_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "PIL", None)  # makes `from PIL import Image` fail
    exc_code = demo.main(["--gif", str(tmp_path / "x.gif"), *SHORT])
    assert exc_code == 2  # as every missing extra (it was 1)
    assert (
        'need the eval extra (Pillow is missing): pip install -c constraints.txt -e ".[eval]"'
        in capsys.readouterr().err
    )
    assert not (tmp_path / "x.gif").exists()
    # The SVG needs no Pillow.
    assert demo.main(["--svg", str(tmp_path / "x.svg"), *SHORT]) == 0


def test_a_full_disk_is_one_line_and_leaves_no_picture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk was a usage error (exit 2, the usage text) and left a 0-byte picture that the
    next run refused as an existing file: now one line naming the file, exit 1, no file."""
    import errno
    import os

    real_replace = os.replace

    def full(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    svg = tmp_path / "game.svg"
    assert demo.main(["--svg", str(svg), "--turns", "4"]) == 1
    assert capsys.readouterr().err.strip() == f"error: No space left on device: {svg}"
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setattr(os, "replace", real_replace)
    assert demo.main(["--svg", str(svg), "--turns", "4"]) == 0 and svg.is_file()


def test_frames_stop_whole_or_not_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure while drawing (here the SVG after the frames) removes the frames written and
    the folder made for them: a 0-byte frame stayed, and the next run was refused."""
    import errno

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(demo, "state_to_svg", full)
    frames = tmp_path / "made" / "frames"
    assert demo.main(["--frames", str(frames), "--svg", str(tmp_path / "x.svg"), "--turns", "2"]) == 1
    assert list(tmp_path.iterdir()) == []
    monkeypatch.undo()
    assert demo.main(["--frames", str(frames), "--turns", "2"]) == 0 and len(list(frames.glob("*.png"))) > 1
