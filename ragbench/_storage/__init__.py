"""Storage: a run's folder (config, per-task sample files that are also the checkpoint, results.json) and
its lock, files replaced whole, the one JSONL reader and writer with its error policy, the SQLite
response cache and the non-blocking, checksummed SQLite table under it, the page cache shared by runs,
and finding a task's data file.
"""
