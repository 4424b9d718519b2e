"""umbrella-env: reinforcement-learning environments for the board game Umbrella.

``umbrella_env.env(num_players=2, ...)`` / ``umbrella_env.raw_env(...)``: the PettingZoo
AEC environment for 2-4 players; ``gymnasium.make("umbrella_env/Solo-v0")`` the solo game
(registered on import).  The rules core is :mod:`umbrella_env.core`.
"""

import gymnasium as _gym
import pettingzoo as _pettingzoo

from umbrella_env.envs.aec import ENV_ID as _AEC_ID
from umbrella_env.envs.aec import env, raw_env
from umbrella_env.envs.parallel import parallel_env
from umbrella_env.envs.solo import SOLO_ENV_ID as _SOLO_ID

if _SOLO_ID not in _gym.registry:
    _gym.register(
        id=_SOLO_ID,
        entry_point="umbrella_env.envs.solo:UmbrellaSoloEnv",
        vector_entry_point="umbrella_env.envs.vector:UmbrellaSoloVectorEnv",
        # Gymnasium's PassiveEnvChecker marks its first reset checked before the env takes it:
        # after a refused first reset (a bad seed or state), the first step was played and then
        # failed inside the checker (TypeError, no transition).  The env passes Gymnasium's
        # check_env (tests/test_solo_env.py); make(..., disable_env_checker=False) adds it back.
        disable_env_checker=True,
    )

__version__ = "0.2.0.dev0"  # the one place the version is written: pyproject.toml reads it from here
__all__ = ["env", "parallel_env", "raw_env", "__version__"]

# PettingZoo >= 1.27 has registries: pettingzoo.make("aec", "umbrella_env/Umbrella-v0", num_players=3),
# and the same id in "parallel" for the Parallel API.
if hasattr(_pettingzoo, "register"):
    for _kind, _entry in (
        ("aec", "umbrella_env.envs.aec:env"),
        ("parallel", "umbrella_env.envs.parallel:parallel_env"),
    ):
        if _AEC_ID not in getattr(_pettingzoo, f"{_kind}_registry", {}):
            _pettingzoo.register(_kind, _AEC_ID, entry_point=_entry)
