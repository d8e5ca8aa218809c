"""The `llamaindex` system: a LlamaIndex query engine or chat engine of the user's, asked once per example through its
own API, its response's text the answer and its source nodes the documents, its spans those of OpenInference's
LlamaIndex instrumentor. system.py holds the System class the registry loads; reading.py what is read of LlamaIndex's
values (it imports llama-index-core, which system.py checks for first).
"""
