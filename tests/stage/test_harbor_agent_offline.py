"""The project's Harbor agent never lets LiteLLM fetch its model price map from GitHub (it did at import when
``LITELLM_LOCAL_MODEL_COST_MAP`` was unset: traffic to an address that is not loopback); run in Harbor's venv."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

pytestmark = [pytest.mark.harbor]
ROOT = Path(__file__).resolve().parents[2]
#: records the variable as it is when litellm is first imported (mini-swe-agent imports it when the agent makes
#: its model, after Harbor has loaded the agent's module)
PROBE = """
import os, sys
seen = []
class Watch:
    def find_spec(self, name, path=None, target=None):
        if name == "litellm":
            seen.append(os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP"))
        return None
sys.meta_path.insert(0, Watch())
import swe_taskflow_harbor.agent
import minisweagent.models.litellm_model
import litellm
print(seen)
"""


def test_litellm_is_imported_with_its_local_price_map(harbor_venv):
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    proc = subprocess.run([str(harbor_venv / "bin" / "python"), "-c", PROBE],
                          env={**env, "PYTHONPATH": str(ROOT), "HARBOR_TELEMETRY": "0"},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "['True']"
    assert "model cost map" not in proc.stderr
