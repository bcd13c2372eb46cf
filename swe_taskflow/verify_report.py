"""What ``verify`` found: one summary per split and every error (an empty error list = the release verifies)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from .errors import VerifyError


@dataclass
class SplitSummary:
    config: str
    name: str
    rows: int
    sha256: str
    files: int
    bytes: int
    tfas: Mapping[str, float] | None = None
    stress: bool = False       # a stress-test slice: reported apart, never calibrated (no TFAS)


@dataclass
class VerifyReport:
    """What was checked, and every error found (empty = the release verifies)."""

    root: str
    manifest_path: str = ""
    release_id: str = ""
    splits: list[SplitSummary] = field(default_factory=list)
    errors: list[VerifyError] = field(default_factory=list)
    rows: int = 0
    bytes_hashed: int = 0      # file bytes hashed
    json_bytes: int = 0        # canonical JSON bytes of the rows hashed
    questions: int = 0
    reproved: int = 0
    rechecked: int = 0         # augmentation references re-derived (reprove)
    selection: Mapping[str, str] = field(default_factory=dict)   # split -> its candidate-selection configuration
    stress: Mapping[str, str] = field(default_factory=dict)      # stress split -> how its rows were chosen

    @property
    def ok(self) -> bool:
        return not self.errors

    def raise_for_errors(self) -> None:
        """Raise the first error (the rest are in ``errors``)."""
        if self.errors:
            raise self.errors[0]

    def table(self) -> str:
        """A plain-text summary table (one line per split)."""
        head = f"{'config':<13} {'split':<28} {'rows':>6} {'files':>5} {'MB':>8} {'TFAS':>7} {'S_L':>6} {'S_T':>6} {'S_R':>6}  sha256"
        lines = [f"release {self.release_id}  ({self.manifest_path})", head, "-" * len(head)]
        core = [s for s in self.splits if not s.stress]
        stress = [s for s in self.splits if s.stress]
        for s in core:
            t = s.tfas or {}
            fmt = lambda k, w, p: f"{t[k]:>{w}.{p}f}" if k in t else f"{'-':>{w}}"  # noqa: E731
            lines.append(f"{s.config:<13} {s.name:<28} {s.rows:>6} {s.files:>5} {s.bytes / 1e6:>8.2f} "
                         f"{fmt('tfas', 7, 2)} {fmt('S_L', 6, 3)} {fmt('S_T', 6, 3)} {fmt('S_R', 6, 3)}  {s.sha256[:16]}")
            if s.tfas and s.name in self.selection:
                lines.append(f"{'':<13}   selection: {self.selection[s.name]}")
        if stress:   # apart from the calibrated core (paper Appendix C, step 7): hashes checked, no TFAS
            lines += ["stress-test slices (reported apart from the calibrated splits; never calibrated, no TFAS):"]
            for s in stress:
                lines.append(f"{s.config:<13} {s.name:<28} {s.rows:>6} {s.files:>5} {s.bytes / 1e6:>8.2f} "
                             f"{'stress':>7} {'-':>6} {'-':>6} {'-':>6}  {s.sha256[:16]}")
                if s.config == "default" and self.stress.get(s.name):
                    lines.append(f"{'':<13}   chosen: {self.stress[s.name]}")
        n_stress = sum(s.rows for s in stress)
        lines.append(f"{self.rows} rows" + (f" ({n_stress} in stress-test slices)" if stress else "")
                     + f", {self.bytes_hashed / 1e6:.2f} MB hashed, {self.questions} questions"
                     + (f", {self.reproved} proofs re-run" if self.reproved else "")
                     + (f", {self.rechecked} augmentation and stress references reproduced" if self.rechecked else "")
                     + ": all hashes hold")
        return "\n".join(lines)


__all__ = ["SplitSummary", "VerifyReport"]
