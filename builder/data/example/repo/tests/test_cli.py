"""The command line as a person runs it from a shell."""

import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


class ShellTests(unittest.TestCase):
    def test_main_runs_from_the_shell(self):
        with tempfile.TemporaryDirectory() as tmp:
            env = {**os.environ, "TICKETDESK_STORAGE_PATH": str(Path(tmp, "tickets.json")),
                   "PYTHONDONTWRITEBYTECODE": "1"}
            proc = subprocess.run([sys.executable, "-m", "ticketdesk.cli", "add", "printer jammed"], cwd=ROOT,
                                  env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.stdout, "1\n", proc.stderr)


if __name__ == "__main__":
    unittest.main()
