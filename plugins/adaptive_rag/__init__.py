"""The `adaptive_rag` system: Adaptive-RAG (Jeong et al., NAACL 2024), a query-complexity classifier that picks
no retrieval, single-step RAG or multi-step RAG per question, as FlashRAG's `AdaptivePipeline` runs it.
system.py holds the System class the registry loads; judger.py the T5 classifier.
"""
