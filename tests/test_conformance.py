"""One conformance suite over every env: a refused call changes nothing (issue 9).

Each env (AEC at 2-4 players, solo, the solo vector env, the SB3 VecEnv, VectorGame) is
played with seeded legal moves at plate levels 1 and 4, with a short turn limit so that
games end and restart often; after every move a few refused calls are made (bad actions
of every kind, bad seeds, bad state dicts). After each refusal, the env must show the
same state, masks, observations, rewards and agent selection as before, and its next
move must give exactly what a copy taken before the refusal gives.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import umbrella_env
from umbrella_env.core import engine as E
from umbrella_env.core.config import GameConfig
from umbrella_env.core.errors import UmbrellaError
from umbrella_env.envs.solo import UmbrellaSoloEnv
from umbrella_env.envs.vector import UmbrellaSoloVectorEnv
from umbrella_env.envs.vector_game import VectorGame

MAX_TURNS = 5  # short games: ends, truncations and autoresets happen often
MOVES = 36
BAD_SEEDS = (-1, "abc", 1.5, True, [0, 1], np.float64(3.0))
BAD_ACTIONS = (1.5, "slide", [3], np.array([1, 2]), -1, 968, 10**6, True, np.float64(2.0), object())


def _dealt_dict(num_players: int, plate_level: int) -> dict[str, Any]:
    from umbrella_env.core import batch_io

    return batch_io.to_dict(E.init(GameConfig(num_players=num_players, plate_level=plate_level), 1, seed=0), 0)


def bad_state_dicts(good: dict[str, Any], other_config: dict[str, Any]) -> list[Any]:
    """State dicts every env must refuse: not a dict, missing or corrupt fields, another
    configuration, and broken "illegal_action" entries."""
    missing = {k: v for k, v in good.items() if k != "stages"}
    out: list[Any] = [
        42,
        "state",
        [good],
        missing,
        {**good, "phase": "nosuch"},
        {**good, "num_players": 7},
        {**good, "supply": -3},
        {**good, "stages": good["stages"][:-1]},
        other_config,
        {**good, "illegal_action": {"seat": 0, "action": 0, "phase": "slide"}},  # game not over
        {**good, "phase": "game_over", "terminated": True, "illegal_action": "yes"},
        {
            **good,
            "phase": "game_over",
            "terminated": True,
            "illegal_action": {"seat": 0, "action": 9999, "phase": "slide"},
        },
        {
            **good,
            "phase": "game_over",
            "terminated": True,
            "illegal_action": {"seat": 0, "action": 0, "phase": "game_over"},
        },
    ]
    if good["phase"] == "slide":  # an illegal_action entry naming a legal action
        from umbrella_env.core.single import SingleGame

        legal = SingleGame.from_dict(good).legal_actions()[0]
        out.append(
            {
                **good,
                "phase": "game_over",
                "terminated": True,
                "illegal_action": {"seat": good["current_player"], "action": legal, "phase": "slide"},
            }
        )
    return out


# --------------------------------------------------------------------------- drivers
class Driver:
    """Uniform access to one env: snapshot, one seeded legal move, the refused calls."""

    illegal_action = "raise"

    def __init__(self, env: Any) -> None:
        self.env = env

    def snapshot(self, env: Any) -> Any:
        """Everything the env shows: state dicts, masks, observations, rewards, selection."""
        raise NotImplementedError

    def move(self, rng: np.random.Generator) -> Callable[[Any], Any]:
        """A seeded legal move (or reset when needed) as a function of the env, so that
        the same move can be replayed on a copy."""
        raise NotImplementedError

    def refusals(self, rng: np.random.Generator) -> list[Callable[[Any], Any]]:
        raise NotImplementedError


def _mask_pick(mask: np.ndarray, rng: np.random.Generator, illegal: bool = False) -> int:
    ids = np.flatnonzero(mask == 0 if illegal else mask)
    return int(rng.choice(ids)) if ids.size else 0


REWARD_MODE = {1: "dense", 2: "dense", 3: "win", 4: "score"}  # by player count: every mode is played


class AECDriver(Driver):
    def __init__(self, num_players: int, plate_level: int, illegal_action: str) -> None:
        self.illegal_action = illegal_action
        super().__init__(
            umbrella_env.raw_env(
                num_players=num_players,
                plate_level=plate_level,
                max_turns=MAX_TURNS,
                illegal_action=illegal_action,
                reward_mode=REWARD_MODE[num_players],
            )
        )
        self.other = _dealt_dict(2 if num_players != 2 else 3, plate_level)

    def snapshot(self, e: Any) -> Any:
        views = {a: {k: v.tobytes() for k, v in e.observe(a).items()} for a in e.possible_agents}
        return (
            e.get_state(),
            e.agent_selection,
            list(e.agents),
            dict(e.rewards),
            dict(e._cumulative_rewards),
            dict(e.terminations),
            dict(e.truncations),
            copy.deepcopy(e.infos),
            views,
            e.last(observe=False) if e.agents else None,
        )

    def move(self, rng: np.random.Generator) -> Callable[[Any], Any]:
        e = self.env
        if not e.agents:
            seed = int(rng.integers(1 << 30))
            return lambda env: env.reset(seed=seed)
        agent = e.agent_selection
        if e.terminations[agent] or e.truncations[agent]:
            return lambda env: env.step(None)
        mask = e.observe(agent)["action_mask"]
        loses = self.illegal_action == "loss" and rng.random() < 0.05
        a = _mask_pick(mask, rng, illegal=loses)
        return lambda env: env.step(a)

    def refusals(self, rng: np.random.Generator) -> list[Callable[[Any], Any]]:
        e = self.env
        out: list[Callable[[Any], Any]] = [lambda env, s=s: env.reset(seed=s) for s in BAD_SEEDS]
        out += [lambda env, d=d: env.set_state(d) for d in bad_state_dicts(e.get_state(), self.other)]
        if not e.agents:
            out.append(lambda env: env.step(0))  # every agent has stepped out: reset first
            return out
        agent = e.agent_selection
        if e.terminations[agent] or e.truncations[agent]:
            out.append(lambda env: env.step(0))  # a dead agent may only pass None
            return out
        out += [lambda env, a=a: env.step(a) for a in BAD_ACTIONS + (None,)]
        if self.illegal_action == "raise":
            bad = _mask_pick(e.observe(agent)["action_mask"], rng, illegal=True)
            out.append(lambda env: env.step(bad))
        return out


class SoloDriver(Driver):
    def __init__(self, plate_level: int, illegal_action: str) -> None:
        self.illegal_action = illegal_action
        super().__init__(UmbrellaSoloEnv(plate_level=plate_level, max_turns=MAX_TURNS, illegal_action=illegal_action))
        self.env.reset(seed=0)
        self.other = _dealt_dict(1, 1 if plate_level != 1 else 2)

    def snapshot(self, e: Any) -> Any:
        return e.get_state(), e.action_masks().tobytes()

    def move(self, rng: np.random.Generator) -> Callable[[Any], Any]:
        e = self.env
        if e.get_state()["phase"] == "game_over":
            seed = int(rng.integers(1 << 30))
            return lambda env: env.reset(seed=seed)
        loses = self.illegal_action == "loss" and rng.random() < 0.05
        a = _mask_pick(e.action_masks(), rng, illegal=loses)
        return lambda env: env.step(a)

    def refusals(self, rng: np.random.Generator) -> list[Callable[[Any], Any]]:
        e = self.env
        out: list[Callable[[Any], Any]] = [lambda env, s=s: env.reset(seed=s) for s in BAD_SEEDS]
        out += [lambda env, d=d: env.set_state(d) for d in bad_state_dicts(e.get_state(), self.other)]
        if e.get_state()["phase"] == "game_over":
            out.append(lambda env: env.step(0))  # asks for a reset
            return out
        out += [lambda env, a=a: env.step(a) for a in BAD_ACTIONS + (None,)]
        if self.illegal_action == "raise":
            bad = _mask_pick(e.action_masks(), rng, illegal=True)
            out.append(lambda env: env.step(bad))
        return out


def _row_picks(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.array([_mask_pick(m, rng) for m in masks], dtype=np.int64)


class VectorDriver(Driver):
    n = 3

    def __init__(self, plate_level: int, illegal_action: str) -> None:
        self.illegal_action = illegal_action
        super().__init__(
            UmbrellaSoloVectorEnv(
                num_envs=self.n, plate_level=plate_level, max_turns=MAX_TURNS, illegal_action=illegal_action
            )
        )
        self.env.reset(seed=0)

    def snapshot(self, e: Any) -> Any:
        return [e.get_state(i) for i in range(self.n)], e.action_masks().tobytes()

    def move(self, rng: np.random.Generator) -> Callable[[Any], Any]:
        masks = self.env.action_masks()
        acts = _row_picks(masks, rng)
        if self.illegal_action == "loss" and rng.random() < 0.05 and masks.any():
            row = int(rng.choice(np.flatnonzero(masks.any(axis=1))))
            acts[row] = _mask_pick(masks[row], rng, illegal=True)
        return lambda env: env.step(acts)

    def refusals(self, rng: np.random.Generator) -> list[Callable[[Any], Any]]:
        masks = self.env.action_masks()
        good = _row_picks(masks, rng)
        out = batch_action_refusals(good, masks, rng, self.illegal_action == "raise")
        seeds = (-1, "abc", 1.5, True, [0, 1], [0, -1, 2], [0, "x", 1], np.zeros((3, 1), int))
        out += [lambda env, s=s: env.reset(seed=s) for s in seeds]
        return out


def batch_action_refusals(
    good: np.ndarray, masks: np.ndarray, rng: np.random.Generator, illegal: bool
) -> list[Callable[[Any], Any]]:
    """Bad action batches: wrong shape, wrong dtype, an id out of range or illegal in one live row."""
    n = good.shape[0]
    cases: list[Any] = [
        good[:-1],
        np.append(good, 0),
        good.astype(np.float64),
        good.astype(bool),
        good.reshape(1, n),
        list(good.astype(float)),
        "slide",
        None,
    ]
    live = np.flatnonzero(masks.any(axis=1))
    if live.size:
        row = int(rng.choice(live))
        for value in (-1, 968, 10**6):
            bad = good.copy()
            bad[row] = value
            cases.append(bad)
        if illegal:
            bad = good.copy()
            bad[row] = _mask_pick(masks[row], rng, illegal=True)
            cases.append(bad)
    return [lambda env, a=a: env.step(a) for a in cases]


class SB3Driver(VectorDriver):
    def __init__(self, plate_level: int, illegal_action: str) -> None:
        from umbrella_env.envs.sb3 import UmbrellaSB3VecEnv

        self.illegal_action = illegal_action
        self.env = UmbrellaSB3VecEnv(
            num_envs=self.n, plate_level=plate_level, max_turns=MAX_TURNS, illegal_action=illegal_action
        )
        self.env.seed(0)
        self.env.reset()

    def snapshot(self, e: Any) -> Any:
        return (
            [e.venv.get_state(i) for i in range(self.n)],
            e.action_masks().tobytes(),
            e._returns.tobytes(),
            e._lengths.tobytes(),
        )

    def refusals(self, rng: np.random.Generator) -> list[Callable[[Any], Any]]:
        masks = self.env.action_masks()
        out = batch_action_refusals(_row_picks(masks, rng), masks, rng, self.illegal_action == "raise")
        out += [lambda env, s=s: env.seed(s) for s in (-1, "abc", 1.5, True)]
        return out


class VectorGameDriver(Driver):
    n = 4

    def __init__(self, num_players: int, plate_level: int, reward_mode: str) -> None:
        super().__init__(
            VectorGame(
                num_games=self.n,
                num_players=num_players,
                plate_level=plate_level,
                max_turns=MAX_TURNS,
                seed=0,
                reward_mode=reward_mode,
            )
        )

    def snapshot(self, e: Any) -> Any:
        return [e.get_state(i) for i in range(self.n)], {k: v.tobytes() for k, v in e.view().items()}

    def move(self, rng: np.random.Generator) -> Callable[[Any], Any]:
        acts = _row_picks(self.env.view()["action_mask"], rng)
        return lambda env: env.step(acts)

    def refusals(self, rng: np.random.Generator) -> list[Callable[[Any], Any]]:
        masks = self.env.view()["action_mask"]
        out = batch_action_refusals(_row_picks(masks, rng), masks, rng, illegal=True)
        seeds = (-1, "abc", 1.5, True, [0, 1], [0, 1, 2, -3], [0, 1, None, 3], (0, 1, 2, 3.0))
        out += [lambda env, s=s: env.reset(seed=s) for s in seeds]
        return out


DRIVERS: dict[str, Callable[[], Driver]] = {}
for _level in (1, 4):
    for _players in (2, 3, 4):
        DRIVERS[f"aec-{_players}p-L{_level}"] = lambda p=_players, lv=_level: AECDriver(p, lv, "raise")
    DRIVERS[f"aec-2p-L{_level}-loss"] = lambda lv=_level: AECDriver(2, lv, "loss")
    for _mode in ("raise", "loss"):
        DRIVERS[f"solo-L{_level}-{_mode}"] = lambda lv=_level, m=_mode: SoloDriver(lv, m)
        DRIVERS[f"vector-L{_level}-{_mode}"] = lambda lv=_level, m=_mode: VectorDriver(lv, m)
    DRIVERS[f"sb3-L{_level}"] = lambda lv=_level: SB3Driver(lv, "raise" if lv == 1 else "loss")
    DRIVERS[f"vector_game-3p-L{_level}"] = lambda lv=_level: VectorGameDriver(3, lv, "dense" if lv == 1 else "win")
# The SB3 adapter needs the train extra (torch): marked like tests/test_sb3.py.
PARAMS = [pytest.param(name, marks=pytest.mark.train) if name.startswith("sb3") else name for name in sorted(DRIVERS)]


def _same(a: Any, b: Any) -> bool:
    """Equality of nested env outputs (arrays compared by value, SB3 episode times ignored)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape):
            return False
        if a.dtype == object or b.dtype == object:  # final_obs: arrays (or None) per game
            return a.dtype == b.dtype and all(_same(x, y) for x, y in zip(a.ravel(), b.ravel()))
        return np.array_equal(a, b)
    if isinstance(a, dict) and isinstance(b, dict):
        keys = set(a) - {"t"}
        return keys == set(b) - {"t"} and all(_same(a[k], b[k]) for k in keys)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return bool(a == b)


@pytest.mark.parametrize("name", PARAMS)
def test_a_refused_call_changes_nothing(name: str) -> None:
    driver = DRIVERS[name]()
    env = driver.env
    if isinstance(env, umbrella_env.raw_env):
        env.reset(seed=0)
    rng = np.random.default_rng(sum(map(ord, name)))
    refused = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # illegal-action losses warn
        for _ in range(MOVES):
            calls = driver.refusals(rng)
            before = driver.snapshot(env)
            twin = copy.deepcopy(env)
            for k in rng.choice(len(calls), size=3, replace=False):
                with pytest.raises((UmbrellaError, ValueError)) as caught:
                    calls[k](env)
                assert str(caught.value), f"{name}: a refusal without a message"
                assert _same(driver.snapshot(env), before), f"{name}: refused call {k} changed the env: {caught.value}"
                refused += 1
            move = driver.move(rng)
            mine, theirs = move(env), move(twin)
            assert _same((mine, driver.snapshot(env)), (theirs, driver.snapshot(twin))), (
                f"{name}: after refused calls the next move differs from a copy's"
            )
    assert refused == 3 * MOVES


# --------------------------------------------------------------------------- named tests, issue 9
def _finished_dict(num_players: int, plate_level: int, truncated: bool) -> dict[str, Any]:
    """A game that ended by the rules (or hit its turn limit), played with random legal moves."""
    from umbrella_env.core import batch_io

    config = GameConfig(num_players=num_players, plate_level=plate_level, max_turns=4 if truncated else 3000)
    state = E.init(config, 16, seed=3)
    rng = np.random.default_rng(3)
    while not (state.truncated if truncated else state.terminated).any():
        E.step(state, np.where(state.done, -1, E.random_legal_actions(state, rng)))
    return batch_io.to_dict(state, int(np.flatnonzero(state.truncated if truncated else state.terminated)[0]))


def _lose_by_illegal_action(e: Any, agent: str | None = None) -> int:
    mask = e.observe(e.agent_selection)["action_mask"] if agent is None else e.action_masks()
    bad = int(np.flatnonzero(mask == 0)[0])
    with pytest.warns(UserWarning, match="not legal"):
        e.step(bad)
    return bad


# Class 1: a refused step changes nothing.
@pytest.mark.parametrize("illegal_action", ["loss", "raise"])
def test_refused_vector_step_keeps_the_pending_autoreset(illegal_action: str) -> None:
    """The issue's reproducer: a refused step while another sub-env waits for its autoreset."""
    v = UmbrellaSoloVectorEnv(num_envs=2, illegal_action=illegal_action)
    _, info = v.reset(seed=1)
    rng = np.random.default_rng(1)
    while True:
        _, _, te, tr, info = v.step(_row_picks(info["action_mask"], rng))
        if (te | tr).any():
            break
    pending = np.flatnonzero(te | tr)
    states = [v.get_state(i) for i in range(2)]
    a = _row_picks(info["action_mask"], rng)
    a[1 - pending[0]] = 968
    with pytest.raises(UmbrellaError, match="out of range"):
        v.step(a)
    assert [v.get_state(i) for i in range(2)] == states  # the autoreset was not applied
    _, rewards, te, tr, info = v.step(_row_picks(v.action_masks(), rng))
    p = int(pending[0])  # the autoreset happens now, cleanly: no spurious loss or termination
    assert (rewards[p], te[p], tr[p]) == (0.0, False, False) and info["action_mask"][p].any()
    assert v.get_state(p)["turn"] == 0 and "illegal_action" not in v.get_state(p)


@pytest.mark.train
def test_refused_sb3_step_leaves_no_pending_actions() -> None:
    from umbrella_env.envs.sb3 import UmbrellaSB3VecEnv

    env = UmbrellaSB3VecEnv(num_envs=2, illegal_action="raise")
    env.seed(0)
    env.reset()
    masks = env.action_masks()
    with pytest.raises(UmbrellaError, match="not legal"):
        env.step(np.array([int(np.flatnonzero(~m)[0]) for m in masks]))
    with pytest.raises(RuntimeError, match="step_async"):
        env.step_wait()
    with pytest.raises(UmbrellaError, match="integer array"):
        env.step_async(np.array([0.5, 1.5]))


# Class 2: loading a state makes the env that game.
@pytest.mark.parametrize("reward_mode", ["win", "score", "dense"])
def test_aec_set_state_of_a_finished_game_shows_its_end(reward_mode: str) -> None:
    from umbrella_env.envs.common import end_rewards

    for truncated in (False, True):
        d = _finished_dict(3, 1, truncated)
        e = umbrella_env.raw_env(num_players=3, reward_mode=reward_mode, max_turns=d["max_turns"])
        e.reset(seed=0)
        e.set_state(d)
        assert e.terminations == dict.fromkeys(e.possible_agents, not truncated)
        assert e.truncations == dict.fromkeys(e.possible_agents, truncated)
        expected = (
            np.zeros(3) if reward_mode == "dense" else end_rewards(d["scores"], _ranks(d), not truncated, reward_mode)
        )
        assert [e.rewards[a] for a in e.possible_agents] == expected.tolist()
        _, reward, term, trunc, _ = e.last()
        assert (reward, term, trunc) == (e.rewards[e.agent_selection], not truncated, truncated)
        assert all(e.observe(a)["action_mask"].sum() == 0 for a in e.possible_agents)
        for _ in e.agent_iter():  # PettingZoo's loop: every agent steps out with None
            assert e.last()[2] or e.last()[3]
            e.step(None)
        assert e.agents == [] and e.get_state() == _canonical(d)


def _ranks(d: dict[str, Any]) -> list[int]:
    from umbrella_env.core.single import SingleGame

    return SingleGame.from_dict(d).ranks()


def _canonical(d: dict[str, Any]) -> dict[str, Any]:
    from umbrella_env.core.serialize import validate_state_dict

    return validate_state_dict(d)


def test_solo_set_state_of_a_finished_game_shows_its_end() -> None:
    for truncated in (False, True):
        d = _finished_dict(1, 1, truncated)
        e = UmbrellaSoloEnv(max_turns=d["max_turns"])
        obs, info = e.set_state(d)  # no reset needed
        assert info["phase"] == "game_over" and not info["action_mask"].any() and not e.action_masks().any()
        assert info["score"] == d["scores"][0] and obs.shape == e.observation_space.shape
        with pytest.raises(RuntimeError, match="episode is over .*reset"):
            e.step(0)


def test_set_state_of_a_live_game_revives_an_ended_env() -> None:
    e = umbrella_env.raw_env(num_players=3)
    e.reset(seed=2)
    live = e.get_state()
    _lose_by_illegal_action(e)
    assert all(e.terminations.values())
    e.step(None)  # one agent steps out
    e.set_state(live)
    assert e.agents == e.possible_agents and not any(e.terminations.values()) and not any(e.truncations.values())
    assert e.agent_selection == f"player_{live['current_player']}" and e.last()[1:4] == (0.0, False, False)
    e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))  # a legal move is accepted
    solo = UmbrellaSoloEnv()
    solo.reset(seed=2)
    live = solo.get_state()
    _lose_by_illegal_action(solo, agent="solo")
    _, info = solo.set_state(live)
    assert info["action_mask"].any() and info["phase"] == "slide"
    _, reward, term, _, _ = solo.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert not term and reward >= 0


def test_an_illegal_move_loss_is_in_the_state_and_the_observations() -> None:
    from umbrella_env.core import actions as A
    from umbrella_env.core.observation import observation_layout

    phase = next(slice(a, b) for a, b, name, _ in observation_layout() if name == "phase")
    game_over = np.eye(len(A.PHASES))[A.PHASE_GAME_OVER]
    e = umbrella_env.raw_env(num_players=2, render_mode="ansi")
    e.reset(seed=4)
    loser = e.agent_selection
    bad = _lose_by_illegal_action(e)
    d = e.get_state()
    assert d["phase"] == "game_over" and d["terminated"] and not d["truncated"]
    assert d["illegal_action"] == {"seat": int(loser[-1]), "action": bad, "phase": "slide"}
    for agent in e.possible_agents:
        view = e.observe(agent)
        assert not view["action_mask"].any()
        np.testing.assert_array_equal(view["observation"][phase], game_over)
    assert "game over" in e.render() and A.ACTION_STRINGS[bad] in e.render()
    solo = UmbrellaSoloEnv()
    obs, info = solo.reset(seed=4)
    bad = int(np.flatnonzero(info["action_mask"] == 0)[0])
    with pytest.warns(UserWarning, match="not legal"):
        obs, reward, term, trunc, info = solo.step(bad)
    assert (reward, term, trunc, info["phase"], info["illegal_action"]) == (-1.0, True, False, "game_over", True)
    np.testing.assert_array_equal(obs[phase], game_over)
    assert solo.get_state()["illegal_action"] == {"seat": 0, "action": bad, "phase": "slide"}
    v = UmbrellaSoloVectorEnv(num_envs=2)
    _, info = v.reset(seed=4)
    acts = _row_picks(info["action_mask"], np.random.default_rng(0))
    acts[1] = int(np.flatnonzero(info["action_mask"][1] == 0)[0])
    with pytest.warns(UserWarning, match="env 1"):
        obs, *_ = v.step(acts)
    assert v.get_state(1)["illegal_action"]["action"] == acts[1] and v.get_state(1)["phase"] == "game_over"
    assert "illegal_action" not in v.get_state(0)
    np.testing.assert_array_equal(obs[1, phase], game_over)


def test_an_illegal_move_loss_round_trips_through_set_state() -> None:
    e = umbrella_env.raw_env(num_players=3)
    e.reset(seed=6)
    e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))
    _lose_by_illegal_action(e)
    d = e.get_state()
    fresh = umbrella_env.raw_env(num_players=3)
    fresh.set_state(d)
    assert fresh.get_state() == d and fresh.agent_selection == e.agent_selection
    assert fresh.rewards == e.rewards and fresh.last()[1:4] == e.last()[1:4]
    assert fresh.infos[fresh.agent_selection]["illegal_action"] is True
    solo = UmbrellaSoloEnv()
    solo.reset(seed=6)
    _lose_by_illegal_action(solo, agent="solo")
    d = solo.get_state()
    _, info = UmbrellaSoloEnv().set_state(d)
    assert info["illegal_action"] is True and not info["action_mask"].any()


# Class 4: bad input answered in words (load_components on a directory: tests/test_components.py).
def _seed_targets() -> dict[str, Callable[[Any], Any]]:
    return {
        "aec": lambda s: umbrella_env.raw_env().reset(seed=s),
        "solo": lambda s: UmbrellaSoloEnv().reset(seed=s),
        "vector": lambda s: UmbrellaSoloVectorEnv(num_envs=3).reset(seed=s),
        "vector_game": lambda s: VectorGame(num_games=4).reset(seed=s),
        "vector_game_init": lambda s: VectorGame(num_games=4, seed=s),
    }


@pytest.mark.parametrize("target", sorted(_seed_targets()))
@pytest.mark.parametrize("seed", [-1, "abc", 1.5, True, [0, 1]], ids=repr)
def test_bad_seeds_are_refused_in_words(target: str, seed: Any) -> None:
    from umbrella_env.core.errors import ConfigError

    with pytest.raises(ConfigError, match=r"seed.*(non-negative int|sequence of \d seeds)"):
        _seed_targets()[target](seed)


def test_good_seeds_are_taken() -> None:
    for target in _seed_targets().values():
        target(np.int64(3))
        target(2**70)  # any non-negative int seeds a NumPy Generator


def test_vector_game_takes_one_seed_per_game() -> None:
    seeds = [5, 6, 7, 8]
    games = VectorGame(num_games=4, seed=seeds)
    for i, s in enumerate(seeds):  # game i is dealt from its own stream, whatever the others do
        assert games.get_state(i) == VectorGame(num_games=1, seed=[s]).get_state(0)
    again = VectorGame(num_games=4, seed=0)
    again.reset(seed=np.array(seeds))
    assert [again.get_state(i) for i in range(4)] == [games.get_state(i) for i in range(4)]
    assert VectorGame(num_games=4, seed=5).get_state(1) != games.get_state(1)  # an int is one shared stream
    with pytest.raises(UmbrellaError, match="sequence of 4 seeds"):
        games.reset(seed=[0, 1])


def test_using_an_env_before_reset_says_reset() -> None:
    raw = umbrella_env.raw_env()
    for call in (lambda: raw.step(0), lambda: raw.last(), lambda: raw.observe("player_0"), raw.state, raw.render):
        with pytest.raises(RuntimeError, match=r"reset\(\)"):
            call()
    with pytest.raises(RuntimeError, match=r"reset\(\)"):
        UmbrellaSoloEnv().step(0)
    with pytest.raises(RuntimeError, match=r"reset\(\)"):
        UmbrellaSoloVectorEnv(num_envs=2).step(np.zeros(2, int))
    raw.reset(seed=0)
    with pytest.raises(ValueError, match="unknown agent"):
        raw.observe("player_7")


@pytest.mark.parametrize("make", [umbrella_env.env, umbrella_env.parallel_env])
def test_the_spaces_of_an_unknown_agent_are_refused_as_observe_refuses_it(make) -> None:
    """observation_space("bogus") and action_space("player_3") of a 2-player game were a bare
    KeyError; observe names the agents, and so do they now (before and after reset)."""
    env = make(num_players=2)
    for _ in range(2):
        for agent in ("bogus", "player_3", None, 0):
            for space in (env.observation_space, env.action_space):
                with pytest.raises(ValueError, match=r"unknown agent .*; the agents are \['player_0', 'player_1'\]"):
                    space(agent)
        assert env.action_space("player_1").n == 968
        env.reset(seed=0)


def test_a_reset_option_that_looks_like_one_the_env_reads_draws_a_warning() -> None:
    """Unknown reset options are ignored (PettingZoo's api_test requires it), so a typo of
    ``state`` dealt a random game without a word: a near miss now warns, naming the option."""
    import warnings

    solo = UmbrellaSoloEnv()
    solo.reset(seed=0)
    state = solo.unwrapped.get_state()
    aec = umbrella_env.env(num_players=2)
    vec = UmbrellaSoloVectorEnv(num_envs=2)
    vec.reset(seed=0)
    for reset, key, meant in (
        (solo.reset, "stat", "state"),
        (solo.reset, "State", "state"),
        (aec.reset, "states", "state"),
        (vec.reset, "reset_masks", "reset_mask"),
    ):
        with pytest.warns(UserWarning, match=f"reset option {key!r} is not one this env reads.*did you mean {meant!r}"):
            reset(seed=1, options={key: None})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        solo.reset(options={"state": state, "options": 1, "seed_note": 2})  # read, or nothing like a read key
        aec.reset(options={"options": 1})
        vec.reset(options={"reset_mask": np.array([True, False])})
