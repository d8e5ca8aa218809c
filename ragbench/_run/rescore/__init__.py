"""Saved predictions scored again without running the system: the examples whose metrics failed on `--resume`, and
`ragbench rescore` into a new folder."""
