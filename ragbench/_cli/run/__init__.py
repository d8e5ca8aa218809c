"""A run on the command line: its options (made from their declarations, options.py) and the RunConfig they build
(option_values.py), their topics in `--help`, the experiment trackers' options, and `ragbench estimate`."""
