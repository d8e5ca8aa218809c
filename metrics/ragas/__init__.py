"""RAGAS's metrics (explodinggradients/ragas 0.4.3, its `ragas.metrics.collections`) asked of the run's judge
as ragas asks its `llm_factory` LLM: the same chat requests in the same order, the replies read and the
scores computed as ragas computes them (docs/metrics.md, "RAGAS")."""
