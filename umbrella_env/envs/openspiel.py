"""Umbrella as an OpenSpiel game, for OpenSpiel's algorithms and tools.

Importing this module registers two Python games with ``pyspiel`` (the ``openspiel``
extra: ``pip install -c constraints.txt -e ".[openspiel]"``)::

    import pyspiel
    import umbrella_env.envs.openspiel  # registers the games

    game = pyspiel.load_game("python_umbrella", {"players": 2, "level": 1})
    solo = pyspiel.load_game("python_umbrella_solo", {"level": 1})

or :func:`load_game` (``load_game(players=2, level=1)``; ``players=1`` is the solo game).

=================  =============================================================================
game               ``python_umbrella``: 2-4 players, zero-sum; ``python_umbrella_solo``: one
                   player, general-sum (its return is the final score)
parameters         ``players`` (2, 3, 4; the multi-player game only, default 2), ``level``
                   (plate level 1-4, default 1), ``max_turns`` (the turn limit, default
                   3000, as in every env; a game stopped by it ends as a draw, solo with
                   the score as it stands)
chance             explicit: the game starts with eight chance nodes of 256 equally likely
                   outcomes, the bytes of the deal key (``SingleGame.new(config, key)``,
                   key in [0, 2**64), least significant byte first); nothing else is random
information        imperfect: the tiles under the tops of the stacks (docs/rules.md §6) are
                   hidden from every player; nothing is private
actions            the engine's ids, ``umbrella_env.core.actions`` (968 distinct; the action
                   strings are ``actions.ACTION_STRINGS``); ``legal_actions()`` is the
                   engine's legal mask
returns            2-4 players, at the end: ``P / (P - 1) * (credit - 1 / P)`` for a seat's
                   share ``credit`` of the win (``SingleGame.win_credits``: shared wins split,
                   a truncated game a draw), so a sole winner gets +1, every loser
                   ``-1 / (P - 1)``, and the returns sum to 0; solo: the final score
observation        tensor: ``SingleGame.observe(player)`` (899 floats, the envs'
                   observation), zeros during the deal; string: the board as text from the
                   player's seat (``render_text``), public information only
information state  string only (no tensor): the public history, perfect recall: the
                   public board after the deal, then every action, each but a slide with
                   the tops of the stacks after it (the tiles a validation revealed or a
                   player received; a slide moves no tile)
resampling         ``resample_from_infostate(player, sampler)``: a copy whose hidden tiles
                   are redrawn (:func:`umbrella_env.core.hidden.determinize` with ``recall``:
                   a covered tile that was a top once is remembered, docs/rules.md decision
                   15), for OpenSpiel's ISMCTS
=================  =============================================================================

Information state strings are the same for every player (nothing is private) but for
the ``seat N`` they start with.  A resampled state keeps the original's chance history
(the deal key's bytes) although its hidden tiles differ: ``state.history()`` and
``serialize()`` describe the true deal, not the resampled tiles.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from umbrella_env.cli_args import missing_extra

try:
    import pyspiel
except ImportError as exc:  # one line naming the extra, not a bare ModuleNotFoundError
    missing_extra(__name__, exc, "umbrella_env.envs.openspiel", extra="openspiel")

from umbrella_env.core import actions as A
from umbrella_env.core import facts as F
from umbrella_env.core.config import DEFAULT_MAX_TURNS, GameConfig
from umbrella_env.core.errors import ActionError, ArgumentError, ConfigError
from umbrella_env.core.hidden import determinize
from umbrella_env.core.observation import OBS_SIZE
from umbrella_env.core.render import render_text
from umbrella_env.core.single import SingleGame, single_tables
from umbrella_env.core.tables import POWER_EXTRA_TURN

__all__ = ["GAME_NAME", "SOLO_GAME_NAME", "UmbrellaGame", "UmbrellaState", "load_game"]

GAME_NAME = "python_umbrella"
SOLO_GAME_NAME = "python_umbrella_solo"
_SLIDES = (A.PHASE_SLIDE, A.PHASE_FALLBACK)
#: decisions in a turn at most: one per phase (game over is none)
_TURN_DECISIONS = len(A.PHASES) - 1
KEY_BYTES = 8  # chance nodes at the start: the deal key's bytes, least significant first


def _game_type(solo: bool) -> pyspiel.GameType:
    return pyspiel.GameType(
        short_name=SOLO_GAME_NAME if solo else GAME_NAME,
        long_name="Umbrella (solo)" if solo else "Umbrella",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.GENERAL_SUM if solo else pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=1 if solo else 4,
        min_num_players=1 if solo else 2,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=(
            {"level": 1, "max_turns": DEFAULT_MAX_TURNS}
            if solo
            else {"players": 2, "level": 1, "max_turns": DEFAULT_MAX_TURNS}
        ),
    )


def _config(params: dict[str, Any] | None, solo: bool) -> GameConfig:
    """The game's configuration from its parameters, each checked with its valid range."""
    params = dict(params or {})
    values = {"players": 1 if solo else 2, "level": 1, "max_turns": DEFAULT_MAX_TURNS}
    ranges = {"players": (1, 1) if solo else (2, 4), "level": (1, 4), "max_turns": (1, MAX_TURNS)}
    if solo and "players" in params:
        raise ConfigError(f"{SOLO_GAME_NAME} has one player and no 'players' parameter ({GAME_NAME} has 2-4)")
    unknown = sorted(set(params) - set(values))
    if unknown:
        raise ConfigError(f"unknown parameter(s) {', '.join(map(repr, unknown))}: expected {', '.join(sorted(values))}")
    for name, value in params.items():
        low, high = ranges[name]
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
            raise ConfigError(f"parameter {name!r}: expected an int in [{low}, {high}], got {value!r}")
        values[name] = int(value)
    return GameConfig(num_players=values["players"], plate_level=values["level"], max_turns=values["max_turns"])


def _solo_score_bound(config: GameConfig) -> int:
    """The most a solo game can score: every token placed, the best bonus of that many
    tokens, and an umbrella in the zones for each of the 20 but one per token (a token is
    validated after a slide of the same turn, and a slide takes an umbrella from a zone),
    plus the one the extra-turn power of a level-4 plate gives back (docs/rules.md §7)."""
    T = single_tables(config)
    best = max(int(T.bonus[bits]) for bits in range(1 << 10) if bin(bits).count("1") <= T.solo_tokens)
    returned = 1 if POWER_EXTRA_TURN in T.power else 0
    umbrellas = F.scored_umbrellas_bound(1) - T.solo_tokens + returned
    return int(F.score(1, T.solo_tokens, best, umbrellas, T.solo_tokens))


#: A solo game's turns at most: each slide takes an umbrella from the zones and only the
#: extra-turn power gives one back, once (docs/rules.md decision 11).
SOLO_TURNS = F.scored_umbrellas_bound(1) + 1
#: The largest max_turns: OpenSpiel keeps max_game_length in a C int.
MAX_TURNS = (2**31 - 1 - KEY_BYTES) // _TURN_DECISIONS - 4


class UmbrellaGame(pyspiel.Game):
    """An OpenSpiel game of Umbrella (see the module doc); ``params`` as ``load_game``'s."""

    def __init__(self, params: dict[str, Any] | None = None, solo: bool = False) -> None:
        self.config = _config(params, solo)
        P = self.config.num_players
        # a turn has at most one decision per phase; each seat gets at most one extra turn
        # (the level-4 power fires once per plate)
        turns = min(self.config.max_turns, SOLO_TURNS) if P == 1 else self.config.max_turns + P
        decisions = turns * _TURN_DECISIONS
        info = pyspiel.GameInfo(
            num_distinct_actions=A.NUM_ACTIONS,
            max_chance_outcomes=256,
            num_players=P,
            min_utility=-1.0 / (P - 1) if P > 1 else 0.0,
            max_utility=1.0 if P > 1 else float(_solo_score_bound(self.config)),
            utility_sum=0.0 if P > 1 else None,
            max_game_length=KEY_BYTES + decisions,
        )
        game_params = {"level": self.config.plate_level, "max_turns": self.config.max_turns}
        if not solo:
            game_params["players"] = P
        super().__init__(_game_type(solo), info, game_params)

    def new_initial_state(self) -> UmbrellaState:
        return UmbrellaState(self)

    def make_py_observer(
        self, iig_obs_type: pyspiel.IIGObservationType | None = None, params: dict[str, Any] | None = None
    ) -> UmbrellaObserver:
        if params:
            raise ConfigError(f"the Umbrella observer takes no parameters, got {params!r}")
        return UmbrellaObserver(iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False))


class UmbrellaSoloGame(UmbrellaGame):
    """The solo game (``python_umbrella_solo``): one player, the return is the final score."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        super().__init__(params, solo=True)


class _Strings(list):  # type: ignore[type-arg]
    """A list of strings that ``copy.deepcopy`` (pyspiel's clone of a Python state) copies
    shallowly: its items are immutable, and walking them made a clone 3 times slower."""

    def __deepcopy__(self, memo: dict[int, Any]) -> _Strings:
        return _Strings(self)


class UmbrellaState(pyspiel.State):
    """A state of :class:`UmbrellaGame`: the deal's chance nodes, then a :class:`SingleGame`
    (``state.game``, ``None`` during the deal)."""

    def __init__(self, game: UmbrellaGame) -> None:
        super().__init__(game)
        self._config = game.config
        self._key_bytes: list[int] = []
        self.game: SingleGame | None = None
        self._public = _Strings()  # the public history: the board after the deal, then moves

    # ------------------------------------------------------------------ OpenSpiel API
    def current_player(self) -> int:
        if self.game is None:
            return int(pyspiel.PlayerId.CHANCE)
        if self.game.done:
            return int(pyspiel.PlayerId.TERMINAL)
        return self.game.actor

    def _legal_actions(self, player: int) -> list[int]:
        assert self.game is not None and player == self.game.actor  # pyspiel asks for the current player
        return self.game.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return [(b, 1.0 / 256) for b in range(256)]

    def _apply_action(self, action: int) -> None:
        if self.game is None:
            if not 0 <= action < 256:
                raise ActionError(f"a chance outcome is a byte of the deal key, an int in [0, 256), got {action}")
            self._key_bytes.append(int(action))
            if len(self._key_bytes) == KEY_BYTES:
                key = sum(b << (8 * i) for i, b in enumerate(self._key_bytes))
                self.game = SingleGame.new(self._config, key)
                self._public.append(render_text(self.game, layout="lines"))
            return
        self.game.step_checked(action)
        if A.ACTION_PHASE[action] in _SLIDES:  # a slide moves umbrellas only: no tile changes
            self._public.append(A.ACTION_STRINGS[action])
        else:  # a validation and what follows it move tiles: the tops after it are public
            self._public.append(f"{A.ACTION_STRINGS[action]} -> tops {self._tops()}")

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            if not 0 <= action < 256:
                return f"chance outcome {action} (out of range [0, 256))"
            return f"deal key byte {action}"
        if not 0 <= action < A.NUM_ACTIONS:
            return f"action {action} (out of range [0, {A.NUM_ACTIONS}))"
        return A.ACTION_STRINGS[action]

    def is_terminal(self) -> bool:
        return self.game is not None and self.game.done

    def returns(self) -> list[float]:
        P = self._config.num_players
        if self.game is None or not self.game.done:
            return [0.0] * P
        if P == 1:
            return [float(self.game.score(0))]
        return [P / (P - 1) * (credit - 1 / P) for credit in self.game.win_credits()]

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> UmbrellaState:
        """A copy with the hidden tiles redrawn from what ``player_id`` cannot see
        (remembering the covered tiles that were tops once); seeded by ``probability_sampler``
        (a callable returning a float in [0, 1), as OpenSpiel's samplers)."""
        players = self.get_game().num_players()
        if isinstance(player_id, bool) or not isinstance(player_id, int | np.integer) or not 0 <= player_id < players:
            raise ArgumentError(f"player_id: expected a player in [0, {players}), got {player_id!r}")
        copy = self.clone()
        if self.game is not None:
            seed = int(float(probability_sampler()) * 2**53)
            copy.game = determinize(self.game, player_id, np.random.default_rng(seed), recall=True)
        return copy

    def __str__(self) -> str:
        if self.game is None:
            return f"dealing: {len(self._key_bytes)} of {KEY_BYTES} key bytes drawn"
        return render_text(self.game)

    # ------------------------------------------------------------------ helpers
    def _tops(self) -> str:
        g = self.game
        assert g is not None
        return ",".join(str(g.top_tile(p, k)) for p in range(self._config.num_players) for k in range(4))

    def information_state(self, player: int) -> str:
        """The perfect-recall public history (the module doc), from ``player``'s seat."""
        return f"seat {player}\n" + "\n".join(self._public)


class UmbrellaObserver:
    """The observer of the OpenSpiel Python game API for an ``IIGObservationType``.

    Everything a player sees is public (nothing is private in Umbrella), so
    ``private_info`` changes nothing (``NONE``, ``SINGLE_PLAYER`` and ``ALL_PLAYERS`` alike)
    and ``public_info=False`` leaves nothing to show: an empty string and tensor.  With
    ``public_info``: the board as text (``string_from``) and the envs' observation
    (``tensor``); with ``perfect_recall`` too, the information state string and no tensor
    (``tensor`` is None, as OpenSpiel's Python games without one have it).
    """

    def __init__(self, iig_obs_type: pyspiel.IIGObservationType) -> None:
        self.public = bool(iig_obs_type.public_info)
        self.perfect_recall = bool(iig_obs_type.perfect_recall)
        self.tensor: np.ndarray | None
        self.dict: dict[str, np.ndarray] = {}
        if self.perfect_recall:
            self.tensor = None  # information state strings only
        elif self.public:
            self.tensor = np.zeros(OBS_SIZE, np.float32)
            self.dict = {"observation": self.tensor}
        else:
            self.tensor = np.zeros(0, np.float32)

    def set_from(self, state: UmbrellaState, player: int) -> None:
        if self.tensor is None or not self.public:
            return
        if state.game is None:
            self.tensor.fill(0.0)
        else:
            self.tensor[:] = state.game.observe(player)

    def string_from(self, state: UmbrellaState, player: int) -> str:
        if not self.public:
            return ""
        if self.perfect_recall:
            return state.information_state(player)
        if state.game is None:
            return str(state)
        return render_text(state.game, player)


def load_game(players: int = 2, level: int = 1, max_turns: int = DEFAULT_MAX_TURNS) -> pyspiel.Game:
    """``pyspiel.load_game`` of ``python_umbrella`` (``players`` 2-4) or, for ``players=1``,
    ``python_umbrella_solo``; each parameter checked, with its valid range in the error."""
    if isinstance(players, bool) or not isinstance(players, (int, np.integer)) or not 1 <= players <= 4:
        raise ConfigError(f"players: expected an int in [1, 4] (1 is the solo game), got {players!r}")
    solo = players == 1
    params = {"level": level, "max_turns": max_turns} | ({} if solo else {"players": players})
    _config(params, solo)  # checked here first: pyspiel refuses a value that is not an int in its own words
    return pyspiel.load_game(SOLO_GAME_NAME if solo else GAME_NAME, {name: int(v) for name, v in params.items()})


pyspiel.register_game(_game_type(False), UmbrellaGame)
pyspiel.register_game(_game_type(True), UmbrellaSoloGame)
