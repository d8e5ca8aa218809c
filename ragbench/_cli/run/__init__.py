"""A run on the command line: its options in groups (groups/) and the RunConfig they build, their topics in `--help`,
the experiment trackers' options, and `ragbench estimate`."""
