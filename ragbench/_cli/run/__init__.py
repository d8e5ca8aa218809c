"""A run on the command line: its options and the RunConfig fields they become, their topics in `--help`, the experiment
trackers' options, and `ragbench estimate`."""
