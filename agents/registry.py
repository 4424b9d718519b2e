"""Build an agent from a name or a checkpoint path.

    make_agent("random")                      # uniformly random legal actions
    make_agent("greedy", seed=1)              # best immediate outcome
    make_agent("heuristic", seed=1)           # short plans, plate and endgame aware
    make_agent("search", simulations=400)     # Monte Carlo search (or seconds=0.5)
    make_agent("search-common")               # the same search on common random numbers (agents/search.py)
    make_agent("runs/ppo/model.zip")          # a trained policy (agents.policy.PolicyAgent)
    make_agent("runs/ppo/model.onnx")         # the same, exported to ONNX (agents.onnx_agent, no torch)
    make_agent("az-2p")                       # shipped Gumbel AlphaZero network + search (agents.az, torch)
    make_agent("az-2p-net")                   # a 2-player network alone; also "az-solo", "az-solo-net"
    make_agent("runs/az/best.pt", search=False)   # an alphazero checkpoint (agents.az.agent.AZAgent)
    make_agent("rllib:runs/rllib/best")       # an RLlib checkpoint folder (agents.rllib_agent, the ray extra)

Every agent has ``act(observation, action_mask, game)`` and ``reset(seed)`` (agents/base.py).
"""

from __future__ import annotations

import inspect
import os
import re
from typing import Any

from agents.base import Agent, RandomAgent
from agents.checks import check_flag
from agents.greedy import GreedyAgent
from agents.heuristic import HeuristicAgent
from agents.rllib_agent import PREFIX as RLLIB_PREFIX
from agents.rllib_agent import RLlibAgent, holds_checkpoint
from agents.search import SearchAgent
from umbrella_env.cli_args import install_hint

#: The built-in agent names accepted by :func:`make_agent` (besides ``*.zip`` and ``*.onnx`` paths).
AGENT_NAMES: tuple[str, ...] = ("random", "greedy", "heuristic", "search", "search-common")
#: ``net:PATH.pt``: a Gumbel AlphaZero checkpoint played by its network alone (no search);
#: ``net:NAME`` the same of a shipped model (``net:az-2p``: ``az-2p``'s network alone).
NET_PREFIX = "net:"
#: A ``package.module:factory`` spec: a callable that builds an agent, which
#: ``umbrella_env.match.build_agent`` imports (:func:`make_agent` builds this package's agents).
SPEC_FACTORY = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
#: The shipped Gumbel AlphaZero models accepted by :func:`make_agent` (need torch; docs/alphazero.md).
AZ_NAMES: tuple[str, ...] = ("az-2p", "az-2p-net", "az-solo", "az-solo-net")


def net_shipped_name(spec: str) -> str | None:
    """The shipped network ``net:NAME`` names (``net:AZ-2P`` is ``az-2p``), or None: the one
    reading of a ``net:`` spec that is a name, not a path, for every caller."""
    if not spec.startswith(NET_PREFIX):
        return None
    name = spec[len(NET_PREFIX) :].strip().lower()
    return name if name in AZ_NAMES else None


def expand_home(spec: str) -> str:
    """``spec`` with a ``~`` after its ``rllib:`` or ``net:`` prefix expanded to the home
    folder (a shell expands ``~`` only at the start of a word: ``rllib:~/runs/x/best`` reaches
    us as typed); every other spec unchanged."""
    for prefix in (RLLIB_PREFIX, NET_PREFIX):
        if spec.startswith(prefix + "~"):
            return prefix + os.path.expanduser(spec[len(prefix) :])
    return spec


def spec_choices(*more: str) -> str:
    """The agent specs :func:`make_agent` takes, in words ("one of 'random', ..."), and
    ``more`` that a caller takes besides (``match.build_agent``: a factory): every
    "unknown agent" message lists them from here."""
    choices = [
        f"one of {', '.join(repr(n) for n in AGENT_NAMES + AZ_NAMES)} (the az- networks need torch)",
        "the path of a trained checkpoint ending in '.zip', '.onnx' or '.pt'",
        f"'{NET_PREFIX}PATH.pt' or '{NET_PREFIX}NAME' of a shipped one (an alphazero network alone)",
        f"'{RLLIB_PREFIX}FOLDER' (an RLlib checkpoint)",
        *more,
    ]
    return ", ".join(choices[:-1]) + " or " + choices[-1]


def _options(spec: str, cls: type, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs``, or a TypeError naming the options ``cls`` does not take and those it does
    (Python's own "unexpected keyword argument" names neither the agent nor its options)."""
    params = inspect.signature(cls).parameters  # the constructor's, without self
    fixed = {"seed", *_BUILT_IN.get(spec.strip().lower(), (None, {}, {}))[1]}
    valid = [
        name
        for name, p in params.items()
        if name not in fixed and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.default is not p.empty
    ]
    unknown = sorted(set(kwargs) - set(valid))
    if unknown:
        raise TypeError(
            f"agent {spec!r} takes no option {', '.join(repr(k) for k in unknown)}; its options: {', '.join(valid)}"
        )
    return kwargs


#: The class each built-in name builds (its constructor's options are the name's), and the
#: options the name sets itself: ``search-common`` is the search with ``common_numbers=True``
#: (not an option of that name), under its own name (which a ``name=`` replaces).
_BUILT_IN: dict[str, tuple[type, dict[str, Any], dict[str, Any]]] = {
    "random": (RandomAgent, {}, {}),
    "greedy": (GreedyAgent, {}, {}),
    "heuristic": (HeuristicAgent, {}, {}),
    "search": (SearchAgent, {}, {}),
    "search-common": (SearchAgent, {"common_numbers": True}, {"name": "search-common"}),
}


def _az_module(spec: str) -> Any:
    """:mod:`agents.az.agent`, which needs torch; without it, a ValueError that says how to get it."""
    try:
        import agents.az.agent as az_agent
    except ImportError as exc:
        raise ValueError(
            f"agent {spec!r} plays a torch network and needs the train extra: {install_hint('train')} ({exc})"
        ) from None
    return az_agent


def make_agent(spec: str | os.PathLike[str], *, seed: int | None = None, **kwargs: Any) -> Agent:
    """The agent named by ``spec``: one of :data:`AGENT_NAMES` or :data:`AZ_NAMES`, or a
    path ending in ``.zip`` (a trained checkpoint, loaded by ``agents.policy.PolicyAgent``),
    ``.onnx`` (an exported one, loaded by ``agents.onnx_agent.OnnxAgent``) or ``.pt`` (a
    Gumbel AlphaZero network and its search, loaded by ``agents.az.agent.AZAgent``;
    ``net:PATH.pt`` plays that network alone).

    ``seed`` seeds the agent's randomness; other keyword arguments go to the agent's
    constructor (e.g. ``simulations=`` / ``seconds=`` for ``"search"``).  Raises
    :class:`ValueError` for an unknown name and :class:`TypeError` for an argument the
    agent does not take.

    Load only checkpoints you trust: a ``.zip`` (and an ``rllib:`` folder) is unpickled as
    it loads, so a crafted one runs code (docs/agents.md, "Checkpoints from others").
    """
    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    if not isinstance(spec, str):
        raise ValueError(f"agent spec must be a string, got {type(spec).__name__}: {spec!r}")
    spec = expand_home(spec)
    if spec.startswith(RLLIB_PREFIX):  # an RLlib checkpoint folder (python -m umbrella_env.rllib_train)
        return RLlibAgent(spec, seed=seed, **_options(spec, RLlibAgent, kwargs))
    if spec.startswith(NET_PREFIX):
        target = spec[len(NET_PREFIX) :]
        shipped = net_shipped_name(spec)
        if shipped is None and not target.lower().endswith(".pt"):
            raise ValueError(
                f"agent {spec!r}: {NET_PREFIX}PATH needs the path of an alphazero .pt checkpoint "
                f"or the name of a shipped one ({', '.join(AZ_NAMES)})"
            )
        if "search" in kwargs and check_flag("search", kwargs["search"]):
            raise ValueError(
                f"agent {spec!r}: {NET_PREFIX}PATH plays the network alone; "
                f"give the path without {NET_PREFIX!r} for the network with search"
            )
        module = _az_module(spec)
        path = module.model_file(shipped) if shipped else target
        return module.AZAgent(path, seed=seed, **{**_options(spec, module.AZAgent, kwargs), "search": False})
    if spec.lower().endswith(".zip"):
        from agents.policy import PolicyAgent

        return PolicyAgent(spec, seed=seed, **_options(spec, PolicyAgent, kwargs))
    if spec.lower().endswith(".onnx"):
        from agents.onnx_agent import OnnxAgent

        return OnnxAgent(spec, seed=seed, **_options(spec, OnnxAgent, kwargs))
    if spec.lower().endswith(".pt"):
        az = _az_module(spec).AZAgent
        return az(spec, seed=seed, **_options(spec, az, kwargs))
    if spec.strip().lower() in AZ_NAMES:
        module = _az_module(spec)
        return module.shipped_agent(spec.strip().lower(), seed=seed, **_options(spec, module.AZAgent, kwargs))
    built_in = _BUILT_IN.get(spec.strip().lower())
    if built_in is None and holds_checkpoint(spec):
        raise ValueError(f"agent {spec!r} is an RLlib checkpoint or run folder: give it as 'rllib:{spec}'")
    head = spec.strip().split(":", 1)[0].lower()
    if built_in is None and ":" in spec and head in AGENT_NAMES + AZ_NAMES:
        raise ValueError(
            f"agent {spec!r}: make_agent takes an agent's options as keywords, "
            f"make_agent({head!r}, key=value) ('name:key=value' is the ladder's spec)"
        )
    if built_in is None and SPEC_FACTORY.match(spec.strip()):
        raise ValueError(
            f"agent {spec!r} names a factory ('module:factory'): make_agent builds this package's agents; "
            "umbrella_env.match.build_agent builds a factory's, as every command does"
        )
    if built_in is None:
        raise ValueError(f"unknown agent {spec!r}: expected {spec_choices()}")
    cls, fixed, defaults = built_in
    options = _options(spec, cls, kwargs)
    try:
        return cls(seed=seed, **{**defaults, **options, **fixed})
    except TypeError as exc:
        raise TypeError(f"agent {spec!r}: {exc}") from None
