"""The reasoning-search systems (`r1_searcher`, `search_r1`, `autorefine`, `simple_deep_searcher`, `o2_searcher`,
`search_r1_own`): the model reasons, writes a search in its own tags, the passages come back in its own format, it
goes on. system.py holds the System classes of FlashRAG's settings, prompts.py FlashRAG's prompts and tags,
o2_searcher.py O2-Searcher's conversation, search_r1_own.py Search-R1 as its own scripts run it.
"""
