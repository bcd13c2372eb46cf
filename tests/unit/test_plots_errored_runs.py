"""`evaluate import` of runs whose every trial errored drew no figure: an internal error ("The number of
FixedLocator locations (0) ... does not match the number of labels (1)") from the checkpoint figure (issue 36,
seen with Harbor trials that all ended in an exception)."""

from __future__ import annotations

from builder.evaluation.plots import _pyplot, plot_checkpoints


def test_checkpoint_figure_of_runs_without_checkpoints(tmp_path):
    empty = {"mean": [], "min": [], "max": []}
    summary = [{"label": "r1", "condition": "tfas_optimized", "agent": "oracle", "model": "oracle",
                "settings_sha256": "0" * 64, "runs": 1, "trials": 1, "checkpoint_labels": [],
                "checkpoint_curves": {"resolved": empty, "test_pass_rate": empty}}]
    assert plot_checkpoints(summary, tmp_path, _pyplot()) == "checkpoints.png"
    assert (tmp_path / "checkpoints.png").read_bytes()[:4] == b"\x89PNG"
