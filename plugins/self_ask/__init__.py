"""The `self_ask` and `self_ask_fixed` systems: Self-Ask as FlashRAG's SelfAskPipeline runs it. system.py holds the
System classes the registry loads."""
