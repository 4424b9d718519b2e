"""umbrella-env: reinforcement-learning environments for the board game Umbrella.

``umbrella_env.env(num_players=2, ...)`` / ``umbrella_env.raw_env(...)``: the PettingZoo
AEC environment for 2-4 players.  The rules core is :mod:`umbrella_env.core`.
"""

from umbrella_env.envs.aec import env, raw_env

__version__ = "0.1.0"
__all__ = ["env", "raw_env", "__version__"]
