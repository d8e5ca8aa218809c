"""The `langchain` system: a LangChain Runnable of the user's (a LangGraph graph included), called through its own
API once per example, its answer and documents read from what it returns (or from its retrievers), its spans those of
OpenInference's LangChain instrumentor. system.py holds the System class the registry loads; reading.py what is read
of LangChain's values (it imports langchain-core, which system.py checks for first).
"""
