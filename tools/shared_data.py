"""Where the shared data folder is, for the development tools and benchmarks that read it, and one error line
(not a traceback) when it is absent: a fresh clone has no ``../shared``.

The folder is ``$SWE_TASKFLOW_SHARED`` when set (as the tests read it), else ``shared`` beside the checkout.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from swe_taskflow.errors import InputError, TaskflowError

ROOT = Path(__file__).resolve().parents[1]


def shared_data(relative: str) -> Path:
    """``relative`` under the shared folder's ``data/``, whether or not it is there (see :func:`check_default`)."""
    return Path(os.environ.get("SWE_TASKFLOW_SHARED") or ROOT.parent / "shared") / "data" / relative


def check_default(path: str | Path, default: Path, flag: str) -> None:
    """Raise one :class:`InputError` naming the missing default and both ways to supply it."""
    if Path(path) == default and not default.exists():
        raise InputError("file not found in the shared data folder", path=str(default),
                         hint=f"Pass {flag} PATH, or set SWE_TASKFLOW_SHARED to the folder that holds data/")


def run_main(main: Callable[[], int | None], prog: str) -> int:
    """Run ``main``; a :class:`TaskflowError` becomes one line on stderr and exit 2, as in ``swe-taskflow``."""
    try:
        return int(main() or 0)
    except TaskflowError as exc:
        print(f"{prog}: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
