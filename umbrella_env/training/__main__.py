"""``python -m umbrella_env.training``: the same command as ``python train.py``."""

import sys

from umbrella_env.training.cli import main

sys.exit(main())
