"""The `smart` system: SMART (Yue et al., AAAI 2025): four agents in one trajectory - Intent Reconstructor,
Knowledge Retriever, Fact Locator, Response Generator - as the paper's Algorithm 1 runs them. system.py holds
the System class the registry loads; its other module: prompts.py.
"""
