"""`ragbench estimate` and `--estimate`: a pilot of a few examples run for real, and the figures of the rest of the run
estimated from it."""
