"""TREC RAG 2024 and 2025 (trec-rag.github.io): the topics and qrels (data.py) as the `trec_rag24` and
`trec_rag25` tasks (task.py) over an index of the MS MARCO V2.1 segmented corpus (read in its gzip shards by
ragbench._retrieval.corpus.segmented), the retrieval measures as trec_eval reports them (metric.py) and the
generation tasks' submission format (ag_output.py, commands.py) as ragnarok's validators check it (rag25_checks.py),
and the agreement of two evaluations' run rankings (ranking.py)."""
