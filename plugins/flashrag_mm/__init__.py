"""The `flashrag_mm` system: FlashRAG's multimodal pipeline (MMSequentialPipeline). system.py holds the System class
the registry loads, prompts.py its prompt templates and choices.py GAOKAO-MM's answer parsing."""
