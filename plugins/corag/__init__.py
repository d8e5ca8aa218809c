"""The `corag` system: CoRAG's chain of sub-queries, each searched and answered, then a final answer over all
of them. system.py holds the System class the registry loads, prompts.py FlashRAG's CoRAG prompts.
"""
