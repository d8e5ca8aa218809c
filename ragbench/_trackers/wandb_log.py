"""A finished run logged to Weights & Biases: the config, the headline metrics as the run's summary and a
`results` table, a `samples/TASK` table per task, and the run folder as an artifact of type `ragbench-run`.
W&B's own settings apply (`wandb login`, WANDB_PROJECT, WANDB_MODE=offline ...); `--wandb-arg` sets
`wandb.init`'s keywords. What W&B writes beside its runs (its debug logs, the staged copies of an artifact's files
that an offline run keeps until `wandb sync`) goes under ragbench's cache folder, not ~/.cache/wandb and
~/.local/share/wandb, unless the user's WANDB_CACHE_DIR / WANDB_DATA_DIR say otherwise (`logging_environment`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._storage.cache_root import cache_root
from .run_log import RunLog
from .trackers import TrackerRequest, environment_defaults

ARTIFACT_TYPE = "ragbench-run"


def files_dir() -> Path:
    """Where W&B's cache and data folders go, unless the user sets them: `ragbench cache` lists it."""
    return cache_root() / "wandb"


def logging_environment() -> dict[str, str]:
    """What ragbench sets while it logs to W&B, where the user has not (docs/outputs.md). WANDB_ERROR_REPORTING off:
    W&B's SDK (0.31 on) sends its own usage metrics to the W&B server as it ends, and a server that never answered
    held the command 10 s after ragbench had said the logging failed; they concern W&B's product, not the run."""
    return {
        "WANDB_CACHE_DIR": str(files_dir() / "cache"),
        "WANDB_DATA_DIR": str(files_dir() / "data"),
        "WANDB_ERROR_REPORTING": "false",
    }


def init_keywords(run_log: RunLog, options: Mapping[str, object]) -> dict[str, Any]:
    """`wandb.init`'s keywords: the run named after its folder, job type `eval`, then --wandb-arg's (tags: a
    list, or names separated by commas; the others as text)."""
    keywords: dict[str, Any] = {"name": run_log.name, "job_type": "eval"}
    for key, value in options.items():
        if key == "tags":
            keywords[key] = (
                value if isinstance(value, list) else [t.strip() for t in str(value).split(",") if t.strip()]
            )
        else:
            keywords[key] = str(value)
    return keywords


def artifact_name(folder_name: str) -> str:
    """An artifact name W&B accepts (letters, digits, `-`, `_`, `.`) made from the run folder's name."""
    return "run-" + re.sub(r"[^A-Za-z0-9_.-]", "_", folder_name)


def log(run_log: RunLog, request: TrackerRequest) -> str:
    with environment_defaults(logging_environment()):
        return logged(run_log, request)


def logged(run_log: RunLog, request: TrackerRequest) -> str:
    import wandb

    settings = wandb.Settings(console="off")  # ragbench's console is not the run's log
    try:
        with wandb.init(config=run_log.config(), settings=settings, **init_keywords(run_log, request.options)) as run:
            run.summary.update(run_log.summary())
            headline = run_log.headline()
            tables = {"results": wandb.Table(columns=headline.columns, data=headline.rows)}
            cut = []
            for task in run_log.tasks:
                samples = run_log.samples(task)
                tables[f"samples/{task}"] = wandb.Table(columns=samples.columns, data=samples.rows)
                if len(samples.rows) > wandb.Table.MAX_ROWS:
                    cut.append(f"samples/{task} shows {wandb.Table.MAX_ROWS:,} of its {len(samples.rows):,} examples")
            run.log(tables)
            artifact = wandb.Artifact(
                artifact_name(run_log.name), type=ARTIFACT_TYPE, metadata=dict(run_log.identity())
            )
            for path, name in run_log.files():
                artifact.add_file(str(path), name=name)
            run.log_artifact(artifact)
            offline = Path(run.dir).parent  # the run's folder; its files are in files/
            where = run.url or f"{offline} (an offline run: `wandb sync {offline}` uploads it)"
            return where + "".join(f"; {line} (W&B's limit on a table; the artifact has them all)" for line in cut)
    finally:
        wandb.teardown()  # W&B's service process ends here, not left running after the command
