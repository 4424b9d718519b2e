"""The agent ladder (umbrella_env.evaluation.ladder): its specs and its bad input, refused
with exit status 2 before any game."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from umbrella_env.core.config import GameConfig
from umbrella_env.evaluation import ladder
from umbrella_env.match import AgentSpecError
from umbrella_env.parallel import WorkerDied

REPO = Path(__file__).resolve().parents[1]
NET_2P = REPO / "agents" / "models" / "az-2p-net.pt"


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    info_code = ladder.main(argv)
    assert info_code == 2
    captured = capsys.readouterr()
    return captured.out, captured.err


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("net:runs/az/best.pt", ("net:runs/az/best.pt", {})),
        ("net:runs/az/best.pt:deterministic=false", ("net:runs/az/best.pt", {"deterministic": False})),
        ("rllib:runs/rllib/best", ("rllib:runs/rllib/best", {})),
        ("rllib:runs/lr=0.1/best", ("rllib:runs/lr=0.1/best", {})),  # a path with '=' is no option
        ("package.module:factory", ("package.module:factory", {})),
        ("search:simulations=100,seconds=0.5", ("search", {"simulations": 100, "seconds": 0.5})),
        ("search", ("search", {})),
    ],
)
def test_ladder_specs_keep_a_name_that_holds_a_colon(text: str, expected: tuple[str, dict]) -> None:
    assert ladder.parse_spec(text) == expected


def test_ladder_spec_options_that_are_not_key_value_are_refused(capsys) -> None:
    _, err = _refused(["--solo-games", "1", "--agents", "search:simulations"], capsys)
    assert "the options after 'search:' must be key=value items" in err


def test_ladder_builds_an_agent_with_options_once(monkeypatch) -> None:
    from umbrella_env import match

    built = []
    original = match.make_agent
    monkeypatch.setattr(match, "make_agent", lambda *a, **k: built.append(k) or original(*a, **k))
    config = GameConfig(num_players=1, plate_level=1)
    agent = ladder.build("search:simulations=7", config, seed=3)
    assert agent.simulations == 7 and built == [{"seed": 3, "simulations": 7}]  # it used to build it twice
    with pytest.raises(AgentSpecError, match="simulations must be"):
        ladder.build("search:simulations=0", config)
    with pytest.raises(AgentSpecError, match="seed cannot be an option"):
        ladder.build("greedy:seed=4", config)
    with pytest.raises(AgentSpecError, match="a package.module:factory spec takes no options"):
        ladder.build("agents.registry:make_agent:name=greedy", config)


@pytest.mark.train  # loads a torch network
def test_ladder_plays_a_network_named_net_path(capsys) -> None:
    assert ladder.main(["--pair-games", "1", "--agents", f"net:{NET_2P}", "greedy"]) == 0
    out = capsys.readouterr().out
    assert f"net:{NET_2P} vs greedy" in out and "over 2 games" in out


@pytest.mark.train
def test_ladder_net_path_takes_options_and_is_checked_against_the_game() -> None:
    config = GameConfig(num_players=2, plate_level=1)
    assert ladder.build(f"net:{NET_2P}", config).deterministic is True
    agent = ladder.build(f"net:{NET_2P}:deterministic=false", config)  # the option reaches the agent
    assert agent.deterministic is False and agent.meta["num_players"] == 2
    with pytest.raises(ValueError, match="trained for num_players=2"):
        ladder.build(f"net:{NET_2P}:deterministic=false", GameConfig(num_players=1, plate_level=1))


@pytest.mark.train
@pytest.mark.parametrize(
    ("argv", "messages"),
    [
        (  # it used to fail in the first solo game with an AgentError traceback
            ["--solo-games", "2", "--agents", "az-2p"],
            ["--agents 'az-2p': checkpoint", "trained for num_players=2, but this game has num_players=1"],
        ),
        (  # it used to play greedy against random first
            ["--pair-games", "1", "--level", "2", "--agents", "greedy", "random", "az-2p-net"],
            ["--agents 'az-2p-net': checkpoint", "trained for plate_level=1, but this game has plate_level=2"],
        ),
        (  # fine for the pair games, not for the solo ones
            ["--pair-games", "1", "--solo-games", "1", "--agents", "greedy", "az-2p-net"],
            ["--agents 'az-2p-net': checkpoint", "trained for num_players=2, but this game has num_players=1"],
        ),
    ],
)
def test_ladder_refuses_a_model_made_for_another_game_before_any_game(
    argv: list[str], messages: list[str], capsys
) -> None:
    out, err = _refused(argv, capsys)
    assert all(m in err for m in messages), err
    assert out == ""  # no game played, no header printed


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--solo-games", "2", "--agents", "random", "--seed", "99999999999999999"],
            "--seed must be in [0, 184467440737095] (game g is dealt with the key seed * 100000 + g, below 2**64), "
            "got 99999999999999999",
        ),
        (
            ["--solo-games", "2", "--agents", "random", "--seed", "-1"],
            "argument --seed: expected an integer >= 0, got '-1'",
        ),
        (["--pair-games", "1", "--agents", "random"], "--pair-games needs at least 2 agents in --agents, got 1"),
    ],
)
def test_ladder_refuses_bad_options_before_any_game(argv: list[str], message: str, capsys) -> None:
    out, err = _refused(argv, capsys)
    assert message in err and out == ""


def test_ladder_largest_seed_deals_every_game(capsys) -> None:
    games = 3
    top = (2**64 - games) // 100_000
    assert ladder.main(["--solo-games", str(games), "--agents", "random", "--seed", str(top)]) == 0
    out = capsys.readouterr().out
    assert f"games    {games}" in out
    assert re.search(r"mean +[\d.]+ ± [\d.]+ s\.e\. ", out)  # one standard error, said (evaluate gives 95%)
    assert ladder.main(["--solo-games", str(games), "--agents", "random", "--seed", str(top + 1)]) == 2


@pytest.mark.parametrize("games", [["--pair-games", "2"], ["--solo-games", "4"]])
def test_ladder_a_worker_that_dies_is_one_line_and_exit_1(games: list[str], capsys) -> None:
    # the worker kills itself at its first decision; the pool used to end in a BrokenProcessPool traceback
    code = ladder.main(["--agents", "random", "tests.test_evaluate:SuicideAgent", *games, "--jobs", "2"])
    err = capsys.readouterr().err
    assert code == 1
    assert "Traceback" not in err and "BrokenProcessPool" not in err
    assert err.strip().splitlines() == [f"error: {WorkerDied()}"]


class BoomAgent:
    """Plays the first legal action, then raises at its third decision (a factory for the ladder)."""

    name = "boom"
    needs_game = False

    def reset(self, seed=None) -> None:
        self.decisions = 0

    def act(self, observation, action_mask, game=None) -> int:
        self.decisions += 1
        if self.decisions == 3:
            raise RuntimeError("boom in my agent")
        return int(action_mask.nonzero()[0][0])


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("games", [["--pair-games", "2"], ["--solo-games", "2"]])
def test_ladder_an_agent_that_raises_is_one_line_naming_its_spec_and_game(games, jobs, capsys) -> None:
    # a 41-line traceback (60 with --jobs 2), the agent named by its .name, no game to replay
    code = ladder.main(["--agents", "random", "tests.test_ladder:BoomAgent", *games, "--jobs", jobs])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err, err
    [line] = err.strip().splitlines()
    assert re.fullmatch(
        r"error: agent 'tests.test_ladder:BoomAgent' \(seat \d\) raised RuntimeError\('boom in my agent'\) at turn \d+ "
        r"\(test_ladder.py:\d+ in act\); in the ladder's game \d+, deal key \d+ \(ladder.play\(\.\.\., \d+, \d+\) replays it\)",
        line,
    ), line
