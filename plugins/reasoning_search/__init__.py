"""The reasoning-search systems (`r1_searcher`, `search_r1`, `autorefine`, `simple_deep_searcher`, `o2_searcher`):
the model reasons, writes a search in its own tags, the passages come back in its own format, it goes on.
system.py holds the System classes the registry loads, prompts.py FlashRAG's prompts and tags.
"""
