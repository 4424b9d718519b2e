"""Agents for umbrella-env: random, greedy, heuristic, search and trained policies.

``make_agent(spec)`` builds one from a name or a checkpoint path; the interface is in
:mod:`agents.base`.
"""

from agents.base import Agent, BatchAgent, RandomAgent
from agents.registry import AGENT_NAMES, make_agent

__all__ = ["AGENT_NAMES", "Agent", "BatchAgent", "RandomAgent", "make_agent"]
