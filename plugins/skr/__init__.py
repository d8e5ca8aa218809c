"""The `skr` system: SKR (Wang et al., Findings of EMNLP 2023), self-knowledge guided retrieval, as FlashRAG's
`ConditionalPipeline` runs it with its SKR-kNN judger. system.py holds the System class the registry loads;
judger.py the kNN judger; prompts.py FlashRAG's prompt for the questions answered without retrieval.
"""
