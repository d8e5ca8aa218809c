"""The command line: the `ragbench` command and its subcommands (`check`, `list`, `score`, `compare`, `view`,
`reproduce`, `index`), the run options and the RunConfig fields they become, and the commands plugins add
through the `ragbench_cli_commands` hook. It parses and reports; the work is done by the layers below,
imported lazily so that `ragbench --help` loads no engine.
"""
