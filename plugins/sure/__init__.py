"""The `sure` and `sure_fixed` systems: SuRe (Kim et al., ICLR 2024), summarised retrieval, as FlashRAG's
`SuRePipeline` runs it. system.py holds the System classes the registry loads; prompts.py FlashRAG's prompts.
"""
