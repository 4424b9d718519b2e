"""Gumbel AlphaZero for Umbrella: a policy + value network (:mod:`agents.az.net`), a
Gumbel search over determinized games batched across many trees
(:mod:`agents.az.search`) and the agents that play them (:mod:`agents.az.agent`).

Needs the ``train`` extra (torch).  The trainer is :mod:`umbrella_env.training.alphazero`;
the method is explained in ``docs/alphazero.md``.
"""
