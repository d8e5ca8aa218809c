"""`ragbench estimate` and `--estimate`: a pilot of a few examples run for real in the run's folder, and the rest of the
run estimated from it by the cost's room (ragbench._cost: the pilot's size and draw, the figures, the estimate's lines)."""
