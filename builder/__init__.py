"""Building releases: stages, adapters (LLM, containers, classifiers, Hub), pipeline, CLI.

Heavy dependencies (torch, transformers, docker, openai, matplotlib) are imported lazily,
inside the functions that need them, so ``import builder`` stays light.
"""
