"""``python -m umbrella_env.play``: play Umbrella against agents in the terminal."""

import sys

from umbrella_env.play.cli import main

sys.exit(main())
