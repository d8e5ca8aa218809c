"""`python -m ragbench ...`: the `ragbench` command, for environments without the console script."""

from ._cli.entry import main

main()
