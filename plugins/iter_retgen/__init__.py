"""The `iter_retgen` system: Iter-RetGen as FlashRAG's IterativePipeline runs it. system.py holds the System class
the registry loads."""
