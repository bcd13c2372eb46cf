"""The build pipeline: recipe -> cached, resumable stages -> a verified release and its report.

:mod:`builder.pipeline.recipe` reads a release recipe; :mod:`builder.pipeline.build` runs it;
:mod:`builder.pipeline.runner` (``run_stages`` / ``plan``) is the generic runner any list of stages can use.
"""
