"""Storage: a run's folder (config, per-task sample files that are also the checkpoint, results.json), the
one JSONL reader and writer with its error policy, the SQLite response cache and the non-blocking
SQLite table under it, the page cache shared by runs, and finding a task's data file.
"""
