"""Verifiable answer turns beyond repository QA: execute, debug, planning, review (docs/augmentations.md).

Pure: kinds and placement rules, unified-diff parsing, test-log parsing, the seeded-defect
catalogue, references derived from recorded output, and the deterministic scorers. Generation
and the sandbox checks live in ``builder/augment``.
"""
