"""Running agents on a release the paper's way (Appendix E and H), on Harbor.

``export`` writes a release condition as a Harbor dataset (one multi-step task per row, one step per
user turn, a checkpoint verifier per issue turn, an answer-copying verifier per answer turn);
``results`` reads a Harbor job folder back, ``scoring`` judges answer turns through a per-kind
registry, ``report`` aggregates and plots, ``importer`` binds trajectories to the release rows.
Nothing here imports ``harbor``: the Harbor-side pieces (environment, agent) live in
``swe_taskflow_harbor`` and run in Harbor's own virtual environment.
"""
