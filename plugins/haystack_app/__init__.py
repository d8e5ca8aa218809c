"""The `haystack` system: a Haystack pipeline of the user's, run once per example through its own API with the
question at the inputs declared for it, its answer and documents read from its components' outputs, its spans those
of OpenInference's Haystack instrumentor. system.py holds the System class the registry loads; reading.py what is
given to and read of a pipeline (it imports haystack-ai, which system.py checks for first).
"""
