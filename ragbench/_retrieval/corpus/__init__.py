"""Retrieval corpora read as a stream of passages: the file formats, saved and segmented corpora, rows by number,
passages by id, and chunking."""
