"""swe-taskflow core: what consumers and auditors need (light dependencies, no torch, no docker)."""

__version__ = "0.1.0"
