"""The `replug` system: REPLUG (Shi et al., NAACL 2024), one answer decoded from every retrieved passage's prompt at
once, their next-token logits mixed by the passages' retrieval scores, as FlashRAG's `REPLUGPipeline` runs it.
system.py holds the System class the registry loads.
"""
