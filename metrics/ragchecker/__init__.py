"""RAGChecker's claim-level metrics (metric.py), RefChecker's prompts and reply parsing (prompts.py, claims.py)
and the formulas (scores.py)."""
