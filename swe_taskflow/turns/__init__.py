"""Every checked answer turn, core side: repository QA's kind, the augmentations (execute, debug, planning,
review; docs/augmentations.md) and the stress-test kinds (destructive-request, security-review; docs/stress.md).

Pure: kinds and placement rules (:mod:`.kinds`), what the core does per kind (:mod:`.registry`: score,
re-prove, the step verifier's config), unified-diff parsing, test-log parsing, the seeded-defect catalogue,
references derived from recorded output, and the deterministic scorers. Generation and the sandbox checks live
in ``builder/turns``. A new kind adds its rows to :mod:`.kinds` and :mod:`.registry` and its own functions.
"""
