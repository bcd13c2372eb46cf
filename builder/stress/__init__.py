"""Stress-test slices (docs/stress.md): destructive requests and security reviews, built and checked apart."""

from .checks import StressSpec
from .slices import build_slices

__all__ = ["StressSpec", "build_slices"]
