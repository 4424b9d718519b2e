"""``python -m umbrella_env.evaluation``: the same command as ``python evaluate.py``."""

import sys

from umbrella_env.evaluation.cli import main

sys.exit(main())
