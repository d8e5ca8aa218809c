"""Answering an engine's requests through a vendor's batch API, whatever the engine (`--model-arg batch=true`): the
loop (runner.py) over the public interface an engine and its vendor's side implement (interface.py), the records
kept in the run folder (store.py, results.py), what the engines of one model share (shelf.py) and what the run's
progress bar shows (board.py)."""
