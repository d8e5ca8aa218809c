"""`ragbench --replay RUN_DIR`: re-execute a recorded run offline.

The run's own configuration (run.json) is taken as it was, and every external call is answered
from what the run recorded in its `calls/` folder (ragbench._replay.recording): the system's model, the
judges, the NLI model and the system's role models by `replay` engines (each reading only its own role's lines), a searching
retriever by the `replay` retriever, the tasks' tools (CRAG's KG API) by replayed tools, and an application system
(ragbench._apps) by its recorded answers and spans (calls/app.jsonl), the application never called (a system that
loads it, `python` and the framework systems, still imports it). No model, index or server is needed; the task
data files must still be where the run read them.
The example's own documents (`provided`) are deterministic and are not replayed, and neither are a
system's own steps (`ctx.record_step`): they are not external calls, the replayed system records them again.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._config.run_config import RUN_OPTIONS, RunConfig
from .._errors import ConfigError
from .._storage.jsonl import read_json
from .recording import APP_FILE, CALLS_DIR, LLM_FILE, RETRIEVAL_FILE


def replay_config(
    run_dir: str | Path,
    output: str | None = None,
    progress: bool = True,
    resume: bool = False,
    overwrite: bool = False,
    found: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]] = lambda config, fingerprints: config,
) -> RunConfig:
    """The RunConfig of the run recorded in `run_dir`, every external call replayed; `found`: the recorded config
    (given with run.json's data fingerprints) with the run's task and data files found again (the command's:
    ragbench._run.plan.task_files and data_paths, a layer above)."""
    run_dir = Path(run_dir)
    meta_path = run_dir / "run.json"
    if not meta_path.is_file():
        raise ConfigError(f"--replay {run_dir}: no run.json there (give the folder of a ragbench run)")
    calls = run_dir / CALLS_DIR
    answered_by_app = (calls / APP_FILE).is_file()  # an application system's run: its answers are recorded there
    if not (calls / LLM_FILE).is_file() and not answered_by_app:
        raise ConfigError(
            f"--replay {run_dir}: the run recorded no calls ({calls / LLM_FILE} is missing); "
            "only runs made by this version of ragbench can be replayed"
        )
    meta = read_json(meta_path, "the run.json of a ragbench run")
    recorded = meta.get("config") if isinstance(meta, dict) else None
    if not isinstance(recorded, dict):
        raise ConfigError(f"--replay {run_dir}: {meta_path} holds no run configuration ('config')")
    fingerprints = meta.get("data") if isinstance(meta.get("data"), dict) else {}
    config = {k: v for k, v in found(recorded, fingerprints).items() if k in RUN_OPTIONS}
    llm_file = str(calls / LLM_FILE)
    roles = list(config.get("role_models", {}))
    judges = range(len(config.get("judges", [])))
    replayed: dict[str, Any] = {
        "model": f"replay:{llm_file}",
        "model_args": {"role": "model", "cacheable": True},
        "role_models": {role: f"replay:{llm_file}" for role in roles},
        "role_model_args": {role: {"role": role, "cacheable": True} for role in roles},
        "judges": [f"replay:{llm_file}" for _ in judges],
        "judge_args": {str(i): {"role": f"judge:{i}", "cacheable": True} for i in judges},
    }
    if config.get("nli") is not None:
        replayed.update(nli=f"replay:{llm_file}", nli_args={"role": "nli", "cacheable": True})
    if config.get("retriever") not in (None, "provided"):
        replayed.update(retriever="replay", retriever_args={"file": str(calls / RETRIEVAL_FILE)})
    if answered_by_app:
        replayed.update(replay_apps=str(calls))
    replayed.update(
        replay_tools=str(calls),
        output=output or str(run_dir.parent / f"{run_dir.name}__replay"),
        resume=resume,
        overwrite=overwrite,
        cache=None,
        progress=progress,
    )
    return RunConfig.of(**{**config, **replayed})
