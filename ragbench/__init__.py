"""ragbench: evaluate RAG systems on the benchmarks of CRAG, ALCE/LLatrieval, Self-RAG/SMART and
OmniEval, with upstream-exact metrics and a scheduler that batches every example's LLM calls.

Plugins use `ragbench.api` (and their tests `ragbench.testing`); every other module is internal."""

__version__ = "0.1.0"
