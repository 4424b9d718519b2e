#!/usr/bin/env python
"""Train an agent for Umbrella: ``python train.py --help``.

MaskablePPO by default (:mod:`umbrella_env.training.ppo`); ``--algo alphazero`` runs the
Gumbel AlphaZero trainer instead (:mod:`umbrella_env.training.alphazero`, its own options:
``python train.py --algo alphazero --help``).  Installed as ``umbrella-train``
(:mod:`umbrella_env.training.cli`).
"""

import sys

from umbrella_env.training.cli import main

if __name__ == "__main__":
    sys.exit(main())
