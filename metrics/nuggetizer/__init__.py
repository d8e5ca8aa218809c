"""castorini's AutoNuggetizer (the `nuggetizer` package, 0.0.5: TREC 2024 RAG's nugget evaluation) on ragbench's
judge: nuggets created from the passages, labelled vital or okay, then assigned against the system's answer, with
nuggetizer's prompts, windows, retries and reply parsing, and its four scores (docs/metrics.md, "Nuggetizer")."""
