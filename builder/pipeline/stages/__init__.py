"""The release pipeline's stages: one module each, ``run(inputs, ctx) -> Outputs``.

A stage module declares its typed ``Inputs`` (the upstream stages' Outputs it consumes, by stage name)
at its top and returns its ``Outputs`` (builder.pipeline.stage_data); the runner loads and stores
both, so a stage never touches the cache folder, never imports a sibling stage, the runner or the
hashing of the pipeline. The order and each stage's key material live in builder.pipeline.registry.
"""

STAGE_NAMES = ("ingest", "classify_prompts", "split", "questions", "proofs", "augment", "stress", "classify_turns",
               "assemble", "select", "write", "verify", "report")
