"""CRAG-MM's mock search APIs as a retriever (`cragmm_search`): its chromadb indexes read without chromadb."""
