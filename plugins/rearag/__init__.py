"""The `rearag` system: ReaRAG's Thought/Action loop (search or finish), each search answered by a long-answer
call over its passages. system.py holds the System class the registry loads, prompts.py FlashRAG's prompts.
"""
