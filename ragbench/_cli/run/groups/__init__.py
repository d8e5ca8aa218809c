"""A run's options as typed groups, one per topic of `ragbench --help` (what to run, models, retrieval, judging
and metrics, output and resume, limits): each group declares its command-line options once and builds itself
from click's parsed values; `ragbench`, `check`, `estimate`, `score` and `reproduce` offer the groups (or some of a
group's options) they take (`offer.py`)."""
