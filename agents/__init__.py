"""Agents for umbrella-env (random, greedy, heuristic, search, trained policies).

The agent ladder is issue #4; until then ``umbrella_env.core.engine.random_legal_actions``
plays uniformly random legal moves for a whole batch.
"""
