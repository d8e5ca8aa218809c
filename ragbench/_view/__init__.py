"""`ragbench view`: a web viewer for run folders (runs, a run's slices, examples, traces, comparisons),
served locally (server.py) or exported as a static site (export.py). Read only: run folders are never
written to."""
