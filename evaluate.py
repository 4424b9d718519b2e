#!/usr/bin/env python
"""Tournaments and solo evaluations of umbrella-env agents: ``python evaluate.py --help``.

The command of :mod:`umbrella_env.evaluation` (installed as ``umbrella-evaluate``).
"""

import sys

from umbrella_env.evaluation.cli import main

if __name__ == "__main__":
    sys.exit(main())
