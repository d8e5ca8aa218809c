"""The `flare` system: FLARE as FlashRAG's FLAREPipeline runs it. system.py holds the System class the registry
loads."""
