"""A finished run logged to the experiment trackers researchers keep their results in (`--wandb`, `--mlflow`,
`ragbench log`): its config, headline metrics, per-sample table and files. Each tracker's package is an optional
extra, imported only when a run is logged to it."""
