"""A finished run logged to MLflow at a tracking URI (a folder: a local file store): the config flattened into
params, the headline metrics as metrics, the headline and per-sample tables as JSON artifacts (MLflow's table
shape: columns and data), and the run folder's files under the artifact folder `run/`."""

from __future__ import annotations

import json
import posixpath
import re
import time
from collections.abc import Iterator, Mapping
from pathlib import PurePosixPath
from typing import Any

from .run_log import RunLog, Table
from .trackers import TrackerRequest, environment_defaults, tracking_uri

DEFAULT_EXPERIMENT = "ragbench"
MAX_PARAM_CHARS = 6000  # MLflow's limit on a param's value; the whole config is in run/results.json
MAX_KEY_CHARS = 250  # on a metric's or param's key
CUT = " ...(cut; the whole is in run/results.json)"


# ragbench's own logging bounded (docs/outputs.md, "Logging a run to W&B or MLflow"), where the environment does
# not set these: MLflow's defaults wait 120 s for each answer and try each request 8 times, backing off up to
# minutes (a server that never answers held the command for over 10 minutes, one answering 500 for 4). Its usage
# telemetry is off, so that nothing is written under ~/.config/mlflow (its telemetry.json) nor sent elsewhere.
BOUNDS = {
    "MLFLOW_HTTP_REQUEST_TIMEOUT": "10",  # seconds for the server to connect and to answer each request
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2",  # tries after the first
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",  # seconds: 0, then 2 between tries
    "MLFLOW_DISABLE_TELEMETRY": "true",
}


def logging_environment(uri: str) -> dict[str, str]:
    """What ragbench sets while it logs to `uri`, where the user has not: `BOUNDS`, and for a folder (a local file
    store, which MLflow 3 refuses unless MLFLOW_ALLOW_FILE_STORE is set) MLFLOW_ALLOW_FILE_STORE=true."""
    return {**BOUNDS, **({"MLFLOW_ALLOW_FILE_STORE": "true"} if uri.startswith("file:") else {})}


def key(name: str) -> str:
    """A metric or param key MLflow accepts: characters other than letters, digits, `_ - . / :` and spaces as `_`;
    a key that would read as another path (`a//b`, `../a`, `/a`, empty) without its slashes, after a `_`."""
    cleaned = re.sub(r"[^\w\-./: ]", "_", name)[:MAX_KEY_CHARS]
    if posixpath.normpath(cleaned) != cleaned or cleaned.startswith(("..", "/")) or cleaned in ("", "."):
        cleaned = ("_" + cleaned.replace("/", "_"))[:MAX_KEY_CHARS]
    return cleaned


def flattened(config: Mapping[str, object], prefix: str = "") -> Iterator[tuple[str, str]]:
    """(dotted key, text) of each leaf of a nested dict: lists and other values as JSON text, cut to MLflow's
    limit (an empty dict is a leaf, `{}`)."""
    for name, value in config.items():
        dotted = f"{prefix}.{name}" if prefix else str(name)
        if isinstance(value, dict) and value:
            yield from flattened(value, dotted)
            continue
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        if len(text) > MAX_PARAM_CHARS:
            text = text[: MAX_PARAM_CHARS - len(CUT)] + CUT
        yield key(dotted), text


def table_json(table: Table) -> dict[str, Any]:
    return {"columns": table.columns, "data": table.rows}


def log(run_log: RunLog, request: TrackerRequest) -> str:
    uri = tracking_uri(request.target or "")
    with environment_defaults(logging_environment(uri)):  # before MLflow is imported: it reads some of them then
        return logged(run_log, request, uri)


def logged(run_log: RunLog, request: TrackerRequest, uri: str) -> str:
    from mlflow.entities import Metric, Param
    from mlflow.tracking import MlflowClient

    name = str(request.options.get("experiment", DEFAULT_EXPERIMENT))
    identity = run_log.identity()
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name(name)
    experiment_id = experiment.experiment_id if experiment else client.create_experiment(name)
    tags = {f"ragbench.{k}": str(v) for k, v in identity.items() if v is not None}
    run_id = client.create_run(
        experiment_id, run_name=str(request.options.get("run_name", run_log.name)), tags=tags
    ).info.run_id
    try:
        now = int(time.time() * 1000)
        client.log_batch(
            run_id,
            metrics=[Metric(key(k), float(v), now, 0) for k, v in run_log.summary().items()],
            params=[Param(k, v) for k, v in dict(flattened(run_log.config())).items()],
        )
        client.log_dict(run_id, table_json(run_log.headline()), "results_table.json")
        for task in run_log.tasks:
            client.log_dict(run_id, table_json(run_log.samples(task)), f"samples/{key(task)}.json")
        for path, name_inside in run_log.files():
            folder = PurePosixPath("run", name_inside).parent
            client.log_artifact(run_id, str(path), str(folder))
    except BaseException:
        client.set_terminated(run_id, "FAILED")
        raise
    client.set_terminated(run_id, "FINISHED")
    return f"{uri} (experiment {name}, run {run_id})"
