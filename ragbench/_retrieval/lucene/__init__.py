"""pyserini's BM25 without Java: Lucene's StandardTokenizer, Anserini's English analyzer and Porter stemmer, and its
index's scores, as `lucene_bm25` ranks."""
