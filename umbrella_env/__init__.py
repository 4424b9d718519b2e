"""umbrella-env: reinforcement-learning environments for the board game Umbrella."""

__version__ = "0.1.0"
