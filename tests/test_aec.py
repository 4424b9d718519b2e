"""The PettingZoo AEC env passes PettingZoo's own checkers and follows its conventions."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test
from pettingzoo.test.state_test import state_test

import umbrella_env
from umbrella_env.core import actions as A
from umbrella_env.core.errors import ActionError, ConfigError, GameOverError, IllegalActionError, StateError
from umbrella_env.tools.differential import stress_start


@pytest.mark.parametrize("num_players", [2, 3, 4])
@pytest.mark.parametrize("plate_level", [1, 2, 3, 4])
def test_pettingzoo_api_test(num_players: int, plate_level: int) -> None:
    api_test(umbrella_env.env(num_players=num_players, plate_level=plate_level, max_turns=40), num_cycles=200)


@pytest.mark.parametrize("num_players", [2, 3, 4])
@pytest.mark.parametrize("plate_level", [1, 2, 3, 4])
def test_pettingzoo_seed_test(num_players: int, plate_level: int) -> None:
    seed_test(
        lambda **kw: umbrella_env.env(num_players=num_players, plate_level=plate_level, max_turns=40, **kw),
        num_cycles=60,
    )


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_pettingzoo_state_test(num_players: int) -> None:
    """PettingZoo's state checker (``state_space``, ``state()`` in it at every step, the
    parallel env's too); ``state()`` was the state dict, with no ``state_space``."""
    from umbrella_env import parallel_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its random actions are often illegal: a warned loss
        warnings.filterwarnings("error", message=".*[Ss]tate")  # e.g. "State is not NumPy array"
        state_test(
            umbrella_env.env(num_players=num_players, max_turns=40),
            parallel_env(num_players=num_players, max_turns=40),
            num_cycles=60,
        )


def test_state_is_player_0s_observation_and_get_state_the_whole_game() -> None:
    e = umbrella_env.env(num_players=3)
    e.reset(seed=2)
    rng = np.random.default_rng(0)
    for _ in range(30):
        state = e.state()
        assert state.dtype == np.float32 and e.state_space.contains(state)
        np.testing.assert_array_equal(state, e.observe("player_0")["observation"])
        e.step(int(rng.choice(np.flatnonzero(e.observe(e.agent_selection)["action_mask"]))))
    assert not np.array_equal(e.state(), state)
    # get_state is the whole game, the hidden tiles included: a copy loaded from it shows
    # every seat the same and goes on identically (tiles under the tops get revealed).
    copy = umbrella_env.raw_env(num_players=3)
    copy.set_state(e.unwrapped.get_state())
    for _ in range(60):
        assert copy.get_state() == e.unwrapped.get_state() and copy.agent_selection == e.agent_selection
        for agent in e.possible_agents:
            np.testing.assert_array_equal(copy.observe(agent)["observation"], e.observe(agent)["observation"])
        if not e.agents or e.terminations[e.agent_selection]:
            break
        action = int(rng.choice(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])))
        e.step(action)
        copy.step(action)
    before = e.unwrapped.get_state()
    with pytest.raises(StateError, match=r"expected a dict, got ndarray \(the array of state\(\) .* get_state\(\)"):
        e.unwrapped.set_state(e.state())
    assert e.unwrapped.get_state() == before


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"num_players must be 2, 3 or 4 in this env, got 1; .*Solo-v0"):
        umbrella_env.env(num_players=1)
    with pytest.raises(ConfigError, match=r"num_players must be 2, 3 or 4 in this env, got 5$"):
        umbrella_env.env(num_players=5)
    with pytest.raises(ConfigError, match="num_players must be an int, got True"):  # not taken for 1
        umbrella_env.env(num_players=True)
    with pytest.raises(ConfigError, match="plate_level"):
        umbrella_env.env(plate_level=0)
    with pytest.raises(ValueError, match="reward_mode"):
        umbrella_env.env(reward_mode="points")
    with pytest.raises(ValueError, match="illegal_action"):
        umbrella_env.env(illegal_action="ignore")


def test_illegal_action_ends_the_game_with_the_mover_losing() -> None:
    e = umbrella_env.env(num_players=3)
    e.reset(seed=1)
    mover = e.agent_selection
    mask = e.observe(mover)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    with pytest.warns(UserWarning, match="not legal"):
        e.step(illegal)
    assert all(e.terminations.values())
    assert e._cumulative_rewards[mover] == -1.0
    assert all(e._cumulative_rewards[a] == 0.0 for a in e.agents if a != mover)


def test_an_illegal_cover_is_the_receivers_loss() -> None:
    """The cover is decided by the receiver, not the player whose turn it is: an illegal cover
    ends the game as the receiver's loss, and the ended game's state dict loads again."""
    from tests.test_rules import A, cover_position

    d = cover_position()
    e = umbrella_env.env(num_players=3, max_turns=d["max_turns"])
    e.set_state(d)
    assert e.agent_selection == "player_1"
    with pytest.warns(UserWarning, match="not legal"):
        e.step(A("slide B from top col0"))
    assert all(e.terminations.values())
    assert [e._cumulative_rewards[a] for a in e.possible_agents] == [0.0, -1.0, 0.0]
    ended = e.unwrapped.get_state()
    assert ended["illegal_action"]["seat"] == 1
    again = umbrella_env.env(num_players=3, max_turns=d["max_turns"])
    again.unwrapped.set_state(ended)  # the receiver decided: a state dict that loads
    assert again.unwrapped.get_state() == ended


def test_human_mode_prints_the_step_an_illegal_action_ends(capsys: pytest.CaptureFixture[str]) -> None:
    e = umbrella_env.env(num_players=2, render_mode="human")
    e.reset(seed=1)
    capsys.readouterr()
    mask = e.observe(e.agent_selection)["action_mask"]
    with pytest.warns(UserWarning, match="not legal"):
        e.step(int(np.flatnonzero(mask == 0)[0]))
    out = capsys.readouterr().out
    assert "phase: game_over" in out and "not legal in phase 'slide', and lost" in out


def test_illegal_action_raises_in_strict_mode() -> None:
    e = umbrella_env.env(num_players=2, illegal_action="raise")
    e.reset(seed=1)
    mask = e.observe(e.agent_selection)["action_mask"]
    with pytest.raises(IllegalActionError, match="not legal in phase 'slide'"):
        e.step(int(np.flatnonzero(mask == 0)[0]))
    with pytest.raises(ActionError, match="out of range"):
        e.step(10_000)


def _play_to_the_end(e, rng: np.random.Generator) -> dict[str, float]:
    """Random legal moves until every agent has stepped out; each agent's summed rewards."""
    totals = dict.fromkeys(e.possible_agents, 0.0)
    for agent in e.agent_iter():
        obs, reward, term, trunc, _ = e.last()
        totals[agent] += reward
        e.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return totals


@pytest.mark.parametrize("num_players", [3, 4])
def test_losses_reach_every_agent_in_win_mode(num_players: int) -> None:
    """Play to the end: every agent's rewards sum to what its rank gives (+1 for a sole
    winner, +0.5 for a shared victory, -1 for every other agent, the middle ones included)."""
    e = umbrella_env.env(num_players=num_players, max_turns=3000)
    e.reset(seed=4)
    totals = _play_to_the_end(e, np.random.default_rng(0))
    ranks = e.unwrapped._g.game.ranks()
    winners = sum(r == 0 for r in ranks)
    expected = {a: (1.0 if winners == 1 else 0.5) if ranks[s] == 0 else -1.0 for s, a in enumerate(e.possible_agents)}
    assert totals == expected
    assert sum(v == -1.0 for v in totals.values()) >= num_players - 2  # middle seats lose too


@pytest.mark.parametrize("num_players", [2, 3, 4])
@pytest.mark.parametrize("plate_level", [1, 2, 3, 4])
def test_pettingzoo_render_test(num_players: int, plate_level: int, capsys: pytest.CaptureFixture[str]) -> None:
    from pettingzoo.test import render_test

    render_test(
        lambda render_mode=None: umbrella_env.env(
            num_players=num_players, plate_level=plate_level, render_mode=render_mode, max_turns=20
        )
    )


def test_ansi_render_and_state_round_trip() -> None:
    e = umbrella_env.raw_env(num_players=2, render_mode="ansi")
    e.reset(seed=2)
    text = e.render()
    assert "seat 0" in text and "seat 1" in text and "phase: slide" in text
    d = e.get_state()
    e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))
    assert e.get_state() != d
    e.set_state(d)
    assert e.get_state() == d


def test_rgb_array_render_changes_with_the_state() -> None:
    e = umbrella_env.raw_env(num_players=3, render_mode="rgb_array")
    e.reset(seed=5)
    first = e.render()
    assert first.dtype == np.uint8 and first.ndim == 3 and first.shape[2] == 3
    e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))
    second = e.render()
    assert second.shape == first.shape and not np.array_equal(first, second)


def test_auto_forced_option() -> None:
    api_test(umbrella_env.env(num_players=2, plate_level=4, max_turns=40, auto_forced=True), num_cycles=200)
    e = umbrella_env.env(num_players=2, plate_level=4, max_turns=300, auto_forced=True)
    e.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in e.agent_iter():
        obs, reward, term, trunc, _ = e.last()
        if term or trunc:
            e.step(None)
            continue
        mask = obs["action_mask"]
        assert mask.sum() != 1, "a single-option decision must have been taken automatically"
        e.step(int(rng.choice(np.flatnonzero(mask))))
    with pytest.raises(TypeError, match="auto_forced"):
        umbrella_env.env(auto_forced="yes")
    assert umbrella_env.env(auto_forced=np.True_).unwrapped.auto_forced is True  # as NumPy ints are ints


def test_cloudpickle_round_trip_continues_identically() -> None:
    import cloudpickle

    e = umbrella_env.raw_env(num_players=3)
    e.reset(seed=8)
    rng = np.random.default_rng(0)
    for _ in range(15):
        e.step(int(rng.choice(np.flatnonzero(e.observe(e.agent_selection)["action_mask"]))))
    copy = cloudpickle.loads(cloudpickle.dumps(e))
    assert copy.get_state() == e.get_state() and copy.agent_selection == e.agent_selection
    for _ in range(30):
        a = int(rng.choice(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])))
        e.step(a)
        copy.step(a)
        assert copy.get_state() == e.get_state() and copy.rewards == e.rewards


def test_reset_seed_determinism() -> None:
    def trace(seed: int) -> list:
        e = umbrella_env.env(num_players=2)
        e.reset(seed=seed)
        rng = np.random.default_rng(1)
        out = []
        for _ in range(40):
            obs = e.observe(e.agent_selection)
            out.append(obs["observation"].tobytes())
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        return out

    assert trace(3) == trace(3) and trace(3) != trace(4)


def test_registered_in_pettingzoos_registry() -> None:
    import pettingzoo

    if not hasattr(pettingzoo, "register"):  # older PettingZoo: nothing to register in (a visible skip)
        assert not hasattr(pettingzoo, "aec_registry")
        pytest.skip(f"PettingZoo {pettingzoo.__version__} has no env registry")
    assert "umbrella_env/Umbrella-v0" in pettingzoo.aec_registry
    assert umbrella_env.raw_env.metadata["name"] == "umbrella_env/Umbrella-v0"  # one name for the env
    e = pettingzoo.make("aec", "umbrella_env/Umbrella-v0", num_players=3, plate_level=2)
    e.reset(seed=0)
    assert e.possible_agents == ["player_0", "player_1", "player_2"]
    assert e.unwrapped.config.plate_level == 2


def test_registered_in_pettingzoos_parallel_registry_and_max_cycles_refused() -> None:
    import pettingzoo

    if not hasattr(pettingzoo, "register"):  # older PettingZoo: nothing to register in (a visible skip)
        pytest.skip(f"PettingZoo {pettingzoo.__version__} has no env registry")
    p = pettingzoo.make("parallel", "umbrella_env/Umbrella-v0", num_players=3)
    observations, _ = p.reset(seed=0)
    assert sorted(observations) == ["player_0", "player_1", "player_2"]
    with pytest.raises(TypeError, match="max_cycles=10: .*give max_turns"):  # make passes it through
        pettingzoo.make("aec", "umbrella_env/Umbrella-v0", max_cycles=10)


def test_every_agent_has_its_own_spaces() -> None:
    # One shared space object made seeding player_1's action space reseed player_0's.
    e = umbrella_env.env(num_players=3)
    spaces = [(e.action_space(a), e.observation_space(a)) for a in e.possible_agents]
    assert len({id(s) for pair in spaces for s in pair}) == 6
    e.action_space("player_0").seed(1)
    e.action_space("player_1").seed(2)
    first = [e.action_space("player_0").sample() for _ in range(3)]
    e.action_space("player_0").seed(1)
    assert [e.action_space("player_0").sample() for _ in range(3)] == first


def _cover_position(num_players: int) -> dict:
    """A state dict whose decision is the receiver's cover (found by greedy-leaning play)."""
    from umbrella_env.core import actions as A
    from umbrella_env.core import batch_io
    from umbrella_env.core import engine as E
    from umbrella_env.core.config import GameConfig
    from umbrella_env.tools.differential import policy_actions

    state = E.init(GameConfig(num_players=num_players), 32, seed=1)
    rng = np.random.default_rng(1)
    for _ in range(2000):
        hit = np.flatnonzero(state.phase == A.PHASE_COVER)
        if hit.size:
            return batch_io.to_dict(state, int(hit[0]))
        E.step(state, policy_actions(state, rng, 0.9))
        E.reset(state, np.flatnonzero(state.done), rng)
    raise AssertionError("no cover position found")


@pytest.mark.parametrize("num_players", [2, 3])
def test_receiver_decides_the_cover_mid_turn(num_players: int) -> None:
    d = _cover_position(num_players)
    giver = d["current_player"]
    receiver = (giver + 1) % num_players
    e = umbrella_env.raw_env(num_players=num_players)
    e.reset(seed=0)
    e.set_state(d)
    assert e.agent_selection == f"player_{receiver}"
    assert e.observe(f"player_{giver}")["action_mask"].sum() == 0
    mask = e.observe(f"player_{receiver}")["action_mask"]
    assert mask.sum() == 4  # the four slots to cover
    e.step(int(np.flatnonzero(mask)[0]))
    after = e.get_state()
    assert after["phase"] != "cover" and after["turn"] == d["turn"] + 1
    assert e.agent_selection == f"player_{after['current_player']}"


def test_turn_limit_is_a_truncation() -> None:
    e = umbrella_env.env(num_players=2, max_turns=6)
    e.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        if term or trunc:
            assert trunc and not term
            e.step(None)
            continue
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert e.unwrapped.get_state()["truncated"] and not e.unwrapped.get_state()["terminated"]


def test_dense_rewards_accumulate_for_agents_not_moving() -> None:
    """Summed over last(), each agent's dense rewards equal its score change, even when
    another player's fallback slide changed its personal zone (a stress start: the mover's
    four zones emptied into the others', so the first decision is a fallback)."""
    e = umbrella_env.env(num_players=3, reward_mode="dense", max_turns=200)
    e.reset(seed=2)
    assert e.unwrapped.get_state()["scores"] == [-4, -4, -4]  # the docstring's "the final score + 4"
    rng = np.random.default_rng(0)
    while True:  # to a position between two turns, as stress_start needs
        e.step(int(rng.choice(np.flatnonzero(e.last()[0]["action_mask"]))))
        if e.unwrapped.get_state()["phase"] == "slide":
            break
    e.set_state(stress_start(e.unwrapped.get_state()))
    start = e.unwrapped.get_state()["scores"]
    mover = e.unwrapped.get_state()["current_player"]
    totals = dict.fromkeys(e.possible_agents, 0.0)
    first = True
    for agent in e.agent_iter():
        obs, reward, term, trunc, _ = e.last()
        totals[agent] += reward
        legal = np.flatnonzero(obs["action_mask"])
        if first:  # an umbrella from the next seat's personal zone
            action = next(
                int(a)
                for a in legal
                if A.action_to_string(int(a)).startswith("fallback ")
                and " of personal+1 " in A.action_to_string(int(a))
            )
            e.step(action)
            other = e.unwrapped.get_state()["scores"][(mover + 1) % 3]
            assert other != start[(mover + 1) % 3]  # the case named above is reached
            first = False
            continue
        e.step(None if term or trunc else int(rng.choice(legal)))
    end = e.unwrapped.get_state()["scores"]
    assert [totals[f"player_{i}"] for i in range(3)] == [end[i] - start[i] for i in range(3)]


def _midgame_state(num_players: int, seed: int, steps: int) -> dict:
    e = umbrella_env.raw_env(num_players=num_players)
    e.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        e.step(int(rng.choice(np.flatnonzero(e.observe(e.agent_selection)["action_mask"]))))
    return e.get_state()


def test_set_state_through_the_order_enforcing_wrapper_counts_as_a_reset() -> None:
    d = _midgame_state(2, seed=3, steps=9)
    e = umbrella_env.env(num_players=2)  # never reset: PettingZoo's wrapper would refuse last()
    e.set_state(d)
    obs, reward, term, trunc, _ = e.last()
    assert e.unwrapped.get_state() == d and not (term or trunc)
    e.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert e.unwrapped.get_state() != d
    fresh = umbrella_env.env(num_players=2)
    fresh.set_state(d)
    steps = 0
    for _agent in fresh.agent_iter(4):  # PettingZoo's loop asserts a reset or a step came first
        obs, _, term, trunc, _ = fresh.last()
        fresh.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
        steps += 1
    assert steps == 4


def test_a_refused_reset_leaves_a_fresh_wrapped_env_unreset() -> None:
    """PettingZoo's wrapper marked the env as reset before the env refused the call; later
    calls then failed inside the env with an AttributeError instead of its own message."""
    e = umbrella_env.env(num_players=2)
    with pytest.raises(ConfigError, match="seed"):
        e.reset(seed=-1)
    with pytest.raises(StateError):
        e.reset(options={"state": {"nonsense": 1}})
    with pytest.raises(AttributeError, match="agent_selection cannot be accessed before reset"):
        e.last()  # PettingZoo's own answer for an env never reset


def test_reset_with_the_state_option_starts_from_that_game() -> None:
    d = _midgame_state(3, seed=4, steps=11)
    ref = umbrella_env.raw_env(num_players=3)
    ref.set_state(d)
    e = umbrella_env.env(num_players=3)
    e.reset(seed=7, options={"state": d, "other": 1})
    assert e.unwrapped.get_state() == d and e.agent_selection == ref.agent_selection
    assert all(np.array_equal(e.observe(a)["observation"], ref.observe(a)["observation"]) for a in e.agents)
    # no deal was drawn: the next reset deals what a plain reset(seed=7) deals
    plain = umbrella_env.env(num_players=3)
    plain.reset(seed=7)
    e.reset()
    assert e.unwrapped.get_state() == plain.unwrapped.get_state()
    # parallel env: the option passes through PettingZoo's turn-based conversion
    par = umbrella_env.parallel_env(num_players=3)
    observations, infos = par.reset(options={"state": d})
    assert infos[ref.agent_selection]["active_agent"] == ref.agent_selection
    assert par.unwrapped.get_state() == d
    over = umbrella_env.raw_env(num_players=3)
    over.set_state(d)
    with pytest.warns(UserWarning, match="is not legal"):  # an illegal id ends the game
        over.step(int(np.flatnonzero(over.observe(over.agent_selection)["action_mask"] == 0)[0]))
    with pytest.raises(StateError, match="starts only from a game in progress"):
        par.reset(options={"state": over.get_state()})
    assert par.unwrapped.get_state() == d  # refused before any change


def test_a_bad_state_option_changes_nothing() -> None:
    e = umbrella_env.env(num_players=2)
    e.reset(seed=5)
    before = e.unwrapped.get_state()
    bad = dict(before, num_players=3)
    with pytest.raises(StateError):
        e.reset(seed=9, options={"state": bad})
    with pytest.raises(StateError):
        e.reset(options={"state": "not a dict"})
    assert e.unwrapped.get_state() == before
    e.reset()  # the generator was not reseeded by the refused call
    again = umbrella_env.env(num_players=2)
    again.reset(seed=5)
    again.reset()
    assert e.unwrapped.get_state() == again.unwrapped.get_state()


@pytest.mark.parametrize("bad", [1.5, "slide", None, [3], np.array([1, 2])])
def test_actions_of_the_wrong_type_are_refused(bad) -> None:
    e = umbrella_env.env(num_players=2)
    e.reset(seed=0)
    with pytest.raises(ActionError):
        e.step(bad)


def test_last_after_every_agent_stepped_out_asks_for_a_reset() -> None:
    from umbrella_env.core.errors import GameOverError

    e = umbrella_env.env(num_players=2, max_turns=2)
    e.reset(seed=0)
    _play_to_the_end(e, np.random.default_rng(0))
    assert not e.agents
    with pytest.raises(GameOverError, match="call reset"):  # PettingZoo's own last() raised a bare KeyError
        e.last()


@pytest.mark.parametrize("make", [umbrella_env.env, umbrella_env.raw_env])
def test_a_step_after_every_agent_stepped_out_raises_game_over_on_both_entry_points(make) -> None:
    """``umbrella_env.env()``'s order enforcing only warned here (and dropped the step)."""
    e = make(num_players=2, max_turns=2)
    e.reset(seed=0)
    _play_to_the_end(e, np.random.default_rng(0))
    with pytest.raises(GameOverError, match="call reset"):
        e.step(None)
    with pytest.raises(GameOverError, match="call reset"):
        e.step(0)


def test_a_finished_agent_stepping_an_action_gets_an_action_error_and_nothing_changes() -> None:
    """PettingZoo's own check raised a bare ValueError, not the documented ActionError."""
    e = umbrella_env.env(num_players=3)
    e.reset(seed=2)
    with pytest.warns(UserWarning, match="not legal"):  # an illegal id: the game ends for everyone
        e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"] == 0)[0]))
    before = (list(e.agents), e.agent_selection, e.unwrapped.get_state())
    for bad in (5, 968, np.int64(0)):
        with pytest.raises(ActionError, match="has finished .* only action it can step is None"):
            e.step(bad)  # an ActionError is a ValueError, which PettingZoo's check raised
    assert (list(e.agents), e.agent_selection, e.unwrapped.get_state()) == before
    e.step(None)  # steps the finished agent out
    assert len(e.agents) == 2


def test_auto_forced_shows_a_loaded_state_as_given_and_applies_from_the_first_step() -> None:
    """Documented: ``set_state`` / the ``state`` option show a single-option decision as it
    is; the first step after the load takes the single-option decisions it leads to."""
    e = umbrella_env.raw_env(num_players=2, plate_level=4, max_turns=300)
    rng = np.random.default_rng(1)
    forced = before = None
    for seed in range(40):
        e.reset(seed=seed)
        while e.agents and forced is None:
            agent = e.agent_selection
            if e.terminations[agent] or e.truncations[agent]:
                break
            mask = e.observe(agent)["action_mask"]
            if mask.sum() == 1 and before is not None:
                forced = e.get_state()
            else:
                before = (e.get_state(), int(rng.choice(np.flatnonzero(mask))))
                e.step(before[1])
        if forced is not None:
            break
    assert forced is not None and before is not None, "no single-option decision in 40 random games"
    auto = umbrella_env.env(num_players=2, plate_level=4, max_turns=300, auto_forced=True)
    auto.reset(options={"state": forced})
    assert auto.unwrapped.get_state() == forced
    assert auto.observe(auto.agent_selection)["action_mask"].sum() == 1  # shown as given
    state, action = before  # the position before it, and the action that led to it
    auto.reset(options={"state": state})
    auto.step(action)  # the first step after a load: the single-option decision is taken
    assert auto.unwrapped.get_state() != forced
    if auto.agents and not auto.terminations[auto.agent_selection]:
        assert auto.observe(auto.agent_selection)["action_mask"].sum() != 1
    again = umbrella_env.env(num_players=2, plate_level=4, max_turns=300, auto_forced=True)
    again.reset(options={"state": forced})
    again.step(int(np.flatnonzero(again.observe(again.agent_selection)["action_mask"])[0]))
    assert auto.unwrapped.get_state() == again.unwrapped.get_state()  # the same decision, taken for the player


def test_reset_takes_no_options_but_a_dict_and_human_mode_prints_the_first_table(capsys) -> None:
    e = umbrella_env.env(num_players=2, render_mode="human")
    e.reset(seed=0, options={"anything": 1})  # ignored, as PettingZoo's api_test requires
    assert "seat 0  [current player]" in capsys.readouterr().out  # printed at the reset, not only after a step
    with pytest.raises(TypeError, match="options must be a dict or None, got str"):
        e.reset(seed=0, options="fast")


def test_parallel_step_before_reset_asks_for_a_reset() -> None:
    env = umbrella_env.parallel_env(num_players=2)
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        env.step({"player_0": 0})


def test_parallel_step_after_the_game_says_it_is_over() -> None:
    """PettingZoo's conversion returned 4 empty dicts here, which a 5-tuple unpack cannot take."""
    env = umbrella_env.parallel_env(num_players=2)
    _, infos = env.reset(seed=0)
    with pytest.warns(UserWarning, match="not legal"):
        env.step({infos["player_0"]["active_agent"]: 967})  # illegal: the game ends
    assert env.agents == []
    with pytest.raises(GameOverError, match="the game is over"):
        env.step({"player_0": 0})


@pytest.mark.parametrize("end", ["truncation", "illegal"])
def test_parallel_infos_name_no_mover_at_the_step_that_ends_the_game(end: str) -> None:
    """PettingZoo's conversion left the last mover's name in the final infos."""
    env = umbrella_env.parallel_env(num_players=2, max_turns=3)
    observations, infos = env.reset(seed=0)
    moves = 0
    while env.agents:
        mover = infos["player_0"]["active_agent"]
        assert all(info["active_agent"] == mover for info in infos.values())
        mask = observations[mover]["action_mask"]
        moves += 1
        if end == "illegal" and moves > 1:  # after a legal move: the infos carry a mover's name
            with pytest.warns(UserWarning, match="not legal"):
                observations, _, _, _, infos = env.step({mover: int(np.flatnonzero(mask == 0)[0])})
        else:
            observations, _, _, _, infos = env.step({mover: int(np.flatnonzero(mask)[0])})
    assert set(infos) == {"player_0", "player_1"}
    assert (end == "illegal") == any(info.get("illegal_action") for info in infos.values())
    assert not any("active_agent" in info for info in infos.values())


def test_illegal_action_losses_warn_in_a_category_a_user_can_silence() -> None:
    """An unmasked baseline run printed a UserWarning at every step, with no category of its
    own to filter."""
    from umbrella_env.core.errors import IllegalActionWarning

    env = umbrella_env.env(num_players=2, illegal_action="loss")
    env.reset(seed=0)
    mask = env.observe(env.agent_selection)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    with pytest.warns(IllegalActionWarning, match="not legal"):
        env.step(illegal)
    env.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", IllegalActionWarning)
        env.step(illegal)  # silenced: no error raised
    assert env.terminations["player_0"]
