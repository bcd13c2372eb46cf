"""Stress-test slices (docs/stress.md): destructive requests and security reviews, built and checked apart."""

from .checks import realize
from .slices import build_slices
from .spec import StressSpec

__all__ = ["StressSpec", "realize", "build_slices"]
