"""BM25 on bm25s: the `bm25` retriever, FlashRAG's BM25 (`flashrag_bm25`), bm25s's index files and its numba top k."""
