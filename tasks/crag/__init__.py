"""CRAG (Meta, KDD Cup 2024): Tasks 1-3 read from the released `.jsonl.bz2` / `.tar.bz2.part*` files,
the pages parsed in worker processes and cached, the RAG baseline's sentence ranking (MiniLM,
batched across examples), the mock KG API as a client and a server (`ragbench serve crag-kg`), and
CRAG's auto-eval metrics with their LLM judge."""
