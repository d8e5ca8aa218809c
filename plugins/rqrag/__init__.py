"""The `rqrag` system: RQ-RAG (Chan et al., COLM 2024), a tree of rewritten, decomposed and disambiguated queries
written by RQ-RAG's own model, as FlashRAG's `RQRAGPipeline` runs it. system.py holds the System class the registry
loads; prompts.py FlashRAG's prompt strings.
"""
