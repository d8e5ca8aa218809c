"""CRAG-MM (Meta, KDD Cup 2025): single- and multi-turn visual questions read from the user's copy of the hub
datasets (crag-mm-2025/crag-mm-*-public, v0.1.2), with the images as the examples' images, and its evaluation
(`local_evaluation.py`) as metrics: upstream's, and one with upstream's mistakes corrected."""
