"""MultiHop-RAG (Tang & Yang, COLM 2024, yixuantt/MultiHop-RAG): 2,556 queries over a corpus of 609 news
articles, as a YAML task (multihop_rag.yaml), open domain: systems search an index of the corpus, cut as
the repository's retrieval experiments cut it (`ragbench index multihop-rag-corpus`, corpus.py), and
are scored by its qa_evaluate.py and retrieval_evaluate.py (metrics.py)."""
