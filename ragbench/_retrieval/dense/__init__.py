"""Dense retrieval: the `dense` retriever (sentence-transformers), FlashRAG's faiss index and encoder (`faiss_index`),
Tevatron's shards and query encoder (`tevatron_dense`)."""
