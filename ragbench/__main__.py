"""`python -m ragbench ...`: the `ragbench` command, for environments without the console script."""
from .cli.main import main

main()
