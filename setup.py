"""Which packages the wheel holds, and under which names (the rest of the metadata is in pyproject.toml).

The ``builder/`` folder installs as ``swe_taskflow_builder``: a top-level ``builder`` is a name any other
distribution may own. Inside the folder every import of its own modules is relative, so a checkout runs it as
``python -m builder.cli`` and an install as ``swe-taskflow`` / ``python -m swe_taskflow_builder.cli``.
"""

from setuptools import find_namespace_packages, setup

BUILDER = "swe_taskflow_builder"
#: Folders holding only data (prompts, the example) are listed too, as namespace packages: their files ship as
#: package data (pyproject.toml), as ``[tool.setuptools.packages.find]`` would list them.
OWN = ["swe_taskflow", "swe_taskflow.*", "swe_taskflow_harbor", "swe_taskflow_harbor.*"]

setup(
    packages=[*find_namespace_packages(include=OWN),
              *(BUILDER + p[len("builder"):] for p in find_namespace_packages(include=["builder", "builder.*"]))],
    package_dir={BUILDER: "builder"},
)
