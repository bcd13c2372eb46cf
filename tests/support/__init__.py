"""Test doubles and generated inputs shared by tests and benchmarks (never imported by the product).

- ``fakehub``: a recording in-memory Hugging Face Hub the real ``huggingface_hub`` client talks to.
- ``synthetic``: paper-sized synthetic releases (texts marked ``[synthetic]``) from real schema objects.

Import as ``tests.support.<module>`` with the repository root on ``sys.path`` (pytest's ``pythonpath``
setting puts it there; benchmarks insert it themselves).
"""
