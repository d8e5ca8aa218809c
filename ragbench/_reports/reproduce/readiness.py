"""Whether a reproduction row runs on this machine now, and if not what it lacks: the tasks' data files on disk
(found as a run finds them, nothing downloaded), its models (the embedded one always; a hub model only when
it is a folder or in the local Hugging Face cache; an API model only with its key) and the extras their
engines need, and the retriever's index, corpus and model paths. `ragbench reproduce --list` shows it."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from ..._registry import Registry
from ..._values.json_values import JsonObject, json_object

# engine kind: (the Python package it runs on, the extra that installs it)
ENGINE_PACKAGES = {"hf": ("transformers", "hf"), "vllm": ("vllm", "vllm")}
RETRIEVER_PATHS = ("index", "corpus", "model")  # retriever options that name files of the user's


def missing_for(
    registry: Registry, run: JsonObject, data: dict[tuple[str, str], list[str]], retriever_paths: tuple[str, ...] = ()
) -> list[str]:
    """What the run of a row lacks here, each a few words, the models and engines first, then the data (empty:
    it runs now). `data` memoises the tasks' data checks across rows (many rows share their tasks);
    `retriever_paths` names the retriever's other options that are the user's files or model folders."""
    judges, tasks = run.get("judges"), run.get("tasks")
    roles = json_object(run.get("role_models")).values()
    models = [
        str(run.get("model") or "hf:embedded"),
        *map(str, roles),
        *map(str, judges if isinstance(judges, list) else []),
    ]
    if run.get("nli"):
        models.append(str(run["nli"]))
    missing = [need for spec in dict.fromkeys(models) for need in model_missing(spec)]
    retriever_args = json_object(run.get("retriever_args"))
    for option in (*RETRIEVER_PATHS, *retriever_paths):
        if option in retriever_args and not on_disk(str(retriever_args[option])):
            missing.append(f"retriever {option} {retriever_args[option]}")
    task_args, data_paths = json_object(run.get("task_args")), json_object(run.get("data"))
    for task in map(str, tasks if isinstance(tasks, list) else []):
        path = data_paths.get(task)
        key = (task, repr((sorted(task_args.items()), path)))
        if key not in data:
            data[key] = task_data_missing(registry, task, task_args, None if path is None else str(path))
        missing += data[key]
    files = [need.removeprefix("data ") for need in dict.fromkeys(missing) if need.startswith("data ")]
    others = [need for need in dict.fromkeys(missing) if not need.startswith("data ")]
    return others + ([f"data {', '.join(files)}"] if files else [])


def task_data_missing(registry: Registry, task: str, task_args: JsonObject, data_path: str | None = None) -> list[str]:
    """The data (and prerequisites) of `task` that are not on disk, as its `prepare` finds them with downloads
    refused (its options and `--data` path as a run gives them): the files it would download, else the first
    clause of why it cannot start."""
    from ..._errors import ConfigError
    from ..._storage.datafiles import local_only
    from ..._values.options import task_args_for

    with local_only() as refused:
        try:
            entry = registry.entry("tasks", task)
            options = {**entry.defaults.get("task_args", {}), **task_args_for(entry.name, entry.load(), task_args)}
            instance = entry.load()(**options, **({"data_path": data_path} if data_path is not None else {}))
            instance.prepare()
        except ConfigError as exc:
            if refused:
                return [f"data {name}" for name in refused]
            why = str(exc).removeprefix(f"task {task}").strip(" :").split(";")[0].split(" (")[0]
            return [f"{task}: {why}"]
        except Exception as exc:  # a plugin task's own fault: the listing goes on, and says it cannot tell
            return [f"{task}: its data check raised {type(exc).__name__}"]
    if instance.data_fingerprint() is None:
        return [f"{task} data (fetched by the run)"]
    return []


def model_missing(spec: str) -> list[str]:
    """What an engine:model lacks here: the engine's package (its extra), a model neither a folder nor in the
    Hugging Face cache, an API key; the embedded model is always there."""
    from ..._engines.local.embedded import is_embedded

    kind, _, name = spec.partition(":")
    missing = []
    package = ENGINE_PACKAGES.get(kind)
    if package and importlib.util.find_spec(package[0]) is None:
        missing.append(f"the {package[1]} extra")
    if kind in ENGINE_PACKAGES and not is_embedded(name) and not on_disk(name):
        missing.append(f"model {name}")
    if kind == "openai" and not os.environ.get("OPENAI_API_KEY"):
        missing.append("OPENAI_API_KEY")
    if names_file(kind, name) and not Path(name).expanduser().exists():
        missing.append(f"{kind} file {name}")
    return missing


def names_file(kind: str, name: str) -> bool:
    """Whether the model is a file of the user's: a replay's recording, a scripted rules file (`scripted:echo` and a
    `package.module:function` script are no files)."""
    return kind == "replay" or (kind == "scripted" and name.endswith(".json"))


def on_disk(model: str) -> bool:
    """A model folder, or a hub name whose files are in the local Hugging Face cache."""
    if Path(model).expanduser().exists():
        return True
    try:
        from huggingface_hub import try_to_load_from_cache

        return isinstance(try_to_load_from_cache(model, "config.json"), str)
    except Exception:  # huggingface_hub absent, or not a hub name
        return False
