"""Agents that play a Gumbel AlphaZero network: alone (one forward pass per decision) or
guiding the Gumbel search (:mod:`agents.az.search`).

    make_agent("az-2p")                        # shipped 2-player network + search (32 simulations, playouts)
    make_agent("az-2p", rollout_weight=0.0, max_considered=None)   # search with the value network, as trained
    make_agent("az-2p-net")                    # the 2-player network trained to play alone (heuristic inputs)
    make_agent("az-solo", seconds=0.5)         # shipped solo network + search, 0.5 s per decision
    make_agent("runs/az/best.pt", search=False, deterministic=False)   # a checkpoint, sampled

The shipped models live in ``agents/models`` (see ``docs/alphazero.md`` for how each was
trained); :data:`SHIPPED_MODELS` maps the names to the files.
"""

from __future__ import annotations

import copy
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from agents.az.net import AZNet, HeuristicInputs, load_network
from agents.az.search import DEFAULT_C_SCALE, GumbelSearch
from agents.base import GAME_FROM_ENV, agent_generator
from agents.checkpoint import check_configuration_options, check_given_game
from agents.checks import (
    MAX_SECONDS,
    MAX_SIMULATIONS,
    check_finite_outputs,
    check_flag,
    check_int,
    check_mask,
    check_name,
    check_observation,
    check_real,
)
from agents.search import PLAYOUT_TURNS
from umbrella_env.core.single import SingleGame

MODELS_DIR = Path(__file__).resolve().parent.parent / "models"
#: The play-time search of :class:`AZAgent` by default: heuristic playouts alone at the
#: leaves (``rollout_weight`` 1) and 4 considered root actions, measured stronger than the
#: value network of the shipped models (docs/alphazero.md, "Leaf values").
PLAY_ROLLOUT_WEIGHT = 1.0
PLAY_MAX_CONSIDERED = 4
#: Simulations of the small search that times each decision under a ``seconds`` budget (its
#: time counts in the budget; the decision's search gets the rest).
CALIBRATION_SIMULATIONS = 4
#: The play-time search budget per decision when neither ``simulations`` nor ``seconds`` is given.
DEFAULT_SIMULATIONS = 32
#: name -> (model file in agents/models, with search)
SHIPPED_MODELS: dict[str, tuple[str, bool]] = {
    "az-2p": ("az-2p.pt", True),
    "az-2p-net": ("az-2p-net.pt", False),
    "az-solo": ("az-solo.pt", True),
    "az-solo-net": ("az-solo.pt", False),
}


def shipped_path(name: str) -> Path:
    return MODELS_DIR / SHIPPED_MODELS[name][0]


def model_file(spec: str | os.PathLike[str]) -> Path:
    """The ``.pt`` file a checkpoint argument names: a shipped model's file for its name
    (``az-solo-net`` names ``az-solo``'s network), else the path as given.  A wheel's users
    have no ``agents/models/`` of a clone to type."""
    name = os.fspath(spec).strip().lower()
    return shipped_path(name) if name in SHIPPED_MODELS else Path(spec)


class AZAgent:
    """A Gumbel AlphaZero network as an agent.

    Args:
        model: a ``.pt`` checkpoint path, or an :class:`~agents.az.net.AZNet`.
        search: guide the Gumbel search (needs the game) or play the network alone.
        simulations: search budget per decision (>= 1; default :data:`DEFAULT_SIMULATIONS`,
            or no count when only ``seconds`` is given).
        seconds: search budget in wall time per decision (> 0): each decision first times
            a search of :data:`CALIBRATION_SIMULATIONS` simulations on its own position, and
            spends the rest of the budget on as many simulations as that rate allows, or
            ``simulations`` if that is fewer (with both, whichever budget is reached first).
            The search options (``simulations``, ``seconds``, ``max_considered``,
            ``rollout_weight``, ``rollout_turns``, ``recall``) are refused with ``search=False``: the
            network alone would ignore them.
        deterministic: network alone: the most likely legal action, else sampled from the
            policy; with search: no Gumbel noise at the root, else the self-play sampling.
        num_players, plate_level: when given, the checkpoint must have been trained for them.
        max_considered: root actions considered by the search (default
            :data:`PLAY_MAX_CONSIDERED`; None: the value the network was trained with, from
            its sidecar, 16 for a network object).  The search's ``c_scale`` is the one the
            network was trained with.
        rollout_weight: lambda in [0, 1], the weight of heuristic playouts in the search's
            leaf values (:class:`~agents.az.search.HeuristicRollout`; default
            :data:`PLAY_ROLLOUT_WEIGHT`, playouts alone; 0: the value network alone; None:
            the value the network was trained with, from its sidecar, else 0).
        rollout_turns: whole turns of a playout at 2-4 players (default: the sidecar's, else
            :data:`agents.search.PLAYOUT_TURNS`).
        recall: the search's determinizations keep the hidden tiles that were tops once
            (:func:`~umbrella_env.core.hidden.determinize`); False (the default, as the agent was
            measured) forgets them.
    """

    def __init__(
        self,
        model: str | Path | AZNet,
        *,
        search: bool = True,
        simulations: int | None = None,
        seconds: float | None = None,
        deterministic: bool = True,
        seed: int | None = None,
        num_players: int | None = None,
        plate_level: int | None = None,
        max_considered: int | None = PLAY_MAX_CONSIDERED,
        rollout_weight: float | None = PLAY_ROLLOUT_WEIGHT,
        rollout_turns: int | None = None,
        recall: bool = False,
        name: str | None = None,
    ) -> None:
        search = check_flag("search", search)
        deterministic = check_flag("deterministic", deterministic)
        recall = check_flag("recall", recall)
        name = check_name(name, optional=True)
        check_configuration_options(num_players=num_players, plate_level=plate_level)
        if not search:
            given = {
                "simulations": simulations is not None,
                "seconds": seconds is not None,
                "max_considered": max_considered != PLAY_MAX_CONSIDERED,
                "rollout_weight": rollout_weight != PLAY_ROLLOUT_WEIGHT,
                "rollout_turns": rollout_turns is not None,
                "recall": recall,
            }
            if any(given.values()):
                names = ", ".join(name for name, g in given.items() if g)
                raise ValueError(
                    f"{names}: search options, but this agent plays the network alone (search=False); "
                    "leave them out, or use the agent with search"
                )
        if simulations is not None:
            simulations = check_int("simulations", simulations, maximum=MAX_SIMULATIONS)
        if rollout_turns is not None:
            rollout_turns = check_int("rollout_turns", rollout_turns)
        if seconds is not None:
            seconds = check_real("seconds", seconds, positive=True, maximum=MAX_SECONDS)
        elif simulations is None:
            simulations = DEFAULT_SIMULATIONS
        if isinstance(model, AZNet):
            self.net, self.meta, self.path = (
                model,
                {"num_players": model.num_players, "plate_level": plate_level},
                "<net>",
            )
        else:
            self.net, self.meta = load_network(model, num_players=num_players, plate_level=plate_level)
            self.path = str(model)
        self.net.eval()
        self.use_search = search
        #: the search, and a network with heuristic inputs, read the game
        self.needs_game = self.use_search or self.net.needs_game
        self._inputs = HeuristicInputs() if self.net.needs_game else None
        #: the simulation budget per decision; None: only ``seconds`` bounds the search
        self.simulations: int | None = simulations
        self.seconds = seconds
        self.deterministic = deterministic
        self.name = name or (Path(self.path).stem + ("+search" if search else ""))
        meta: dict[str, Any] = dict(self.meta)  # the sidecar's values, checked when it was read
        self.search = GumbelSearch(
            self._predict,
            simulations=DEFAULT_SIMULATIONS if simulations is None else simulations,
            max_considered=meta.get("max_considered", 16) if max_considered is None else max_considered,
            c_scale=meta.get("c_scale", DEFAULT_C_SCALE),
            gumbel_scale=0.0 if deterministic else 1.0,
            rollout_weight=meta.get("rollout_weight", 0.0) if rollout_weight is None else rollout_weight,
            rollout_turns=meta.get("rollout_turns", PLAYOUT_TURNS) if rollout_turns is None else rollout_turns,
            heuristic_inputs=self.net.heuristic_inputs,
            recall=recall,
        )
        self._rng = agent_generator(seed)

    def reset(self, seed: int | None = None) -> None:
        """Re-seed the agent's generator; ``None`` keeps it (as every agent does)."""
        if seed is not None:
            self._rng = agent_generator(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, game: SingleGame | None = None) -> int:
        legal = check_mask(action_mask)
        check_given_game(self.meta, self.path, game, legal)
        obs = None if self.use_search else check_observation(observation)  # the search reads the game alone
        if legal.size == 1:
            return int(legal[0])
        if game is None and self.needs_game:
            why = "searches" if self.use_search else "reads the heuristic's action values"
            raise ValueError(f"{self.name} {why} and needs the game (needs_game=True): {GAME_FROM_ENV}")
        if obs is not None:
            return self._policy_action(obs, legal, game)
        assert game is not None  # the search needs the game, checked above
        return self._search_action(game)

    def _predict(self, obs: np.ndarray, heur: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """The network's logits and values of a batch, refused when they are not finite
        (:func:`~agents.checks.check_finite_outputs`): a NaN prior or value would steer the search, and
        the network alone, to the first legal action."""
        logits, values = self.net.predict(obs, heur)
        check_finite_outputs(f"network {self.path!r}", logits, values)
        return logits, values

    def _policy_action(self, observation: np.ndarray, legal: np.ndarray, game: SingleGame | None) -> int:
        heur = None
        if self._inputs is not None:  # heuristic inputs: the network needs the game, checked in act
            assert game is not None
            heur = self._inputs(game, legal)[None]
        logits, _ = self._predict(observation[None], heur)
        z = logits[0, legal].astype(np.float64)
        if self.deterministic:
            return int(legal[int(np.argmax(z))])
        p = np.exp(z - z.max())
        return int(self._rng.choice(legal, p=p / p.sum()))

    def _search_action(self, game: SingleGame) -> int:
        sims = self.simulations
        if self.seconds is not None:
            # Timed on this decision, inside its budget: a cost carried over from another
            # position (the cheap end of a game) ran the next game's first move 19 times over.
            t0 = time.perf_counter()
            # on a copy of the generator: the decision's search draws as it would without the
            # timing run, so with both budgets a count reached first plays as that count alone
            self.search.run([game], [copy.deepcopy(self._rng)], simulations=CALIBRATION_SIMULATIONS)
            spent = time.perf_counter() - t0
            per_sim = spent / (CALIBRATION_SIMULATIONS + 1)  # + the root's network call
            timed = max(1, min(MAX_SIMULATIONS, int((self.seconds - spent) / per_sim) - 1))
            sims = timed if sims is None else min(sims, timed)
        result = self.search.run([game], [self._rng], simulations=sims)[0]
        return int(result.action)


def shipped_agent(name: str, /, **kwargs: Any) -> AZAgent:
    """The shipped model ``name`` (a key of :data:`SHIPPED_MODELS`)."""
    file, search = SHIPPED_MODELS[name]
    path = MODELS_DIR / file
    if not path.is_file():
        raise ValueError(f"agent {name!r}: the shipped model {str(path)!r} is missing from this installation")
    kwargs.setdefault("search", search)
    if kwargs["search"] != search:  # the name says how it plays: az-2p without its search is not az-2p
        name += "+search" if kwargs["search"] else " without search"
    kwargs.setdefault("name", name)
    return AZAgent(path, **kwargs)
