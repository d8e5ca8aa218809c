"""The `dspy` system: a DSPy module of the user's, called once per example through its own API, its prediction's
answer field the answer and its passages field the documents, its spans those of OpenInference's DSPy
instrumentor. system.py holds the System class the registry loads; reading.py what is read of a prediction (it
imports dspy, which system.py checks for first).
"""
