"""What differs between two runs' configurations (results.json `config`, as run.json records it): every setting
whose value differs, named by its path in the normalised config (`system_config.demo.top_n`), except the few
that change how a run goes, not what it measures (`NOT_MEASURED`). Read from the whole config rather than from a
list of the settings that matter, so that an option added later is named without anyone adding it here."""

from __future__ import annotations

import json
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from ..._config.run_config import index_by_key
from ..._values.json_values import JsonObject, json_object

# Settings that do not change what a system sees or how it is scored, by path pattern (fnmatch), with why.
NOT_MEASURED = {
    "output": "where the run folder is",
    "resume": "whether an earlier attempt was continued",
    "overwrite": "whether an earlier run in the folder was replaced",
    "progress": "whether a progress bar was shown",
    "max_inflight": "how many examples ran at once (batching does not change results)",
    "cache": "where the response cache is (it answers only identical requests)",
    "page_cache": "where parsed pages are cached",
    "replay_tools": "where recorded tool calls were read (their answers are in the samples' traces)",
    "replay_apps": "where an application's recorded answers were read (its answers and spans are in the samples)",
    "fail_fast": "whether the run stopped at the first failure (an incomplete run is said apart)",
    "bootstrap_iters": "the resamples of the run's own intervals (compare draws its own)",
    "data": "where the data files are (the examples themselves are compared by id and digest)",
    "task_configs.*.data_path": "where the task's data file is (as `data`)",
    "shipped_corpus_index": "whether the index is the index cache's of the task's own corpus (named by its key)",
    "retriever_metadata.index": "where the index searched is (what it holds: `retriever_contents`)",
    "retriever_metadata.corpus.path": "where the index's corpus is (its bytes: `retriever_contents`)",
}
NOT_SET = "(not set)"
# A setting of the system that one run's config lacks altogether: its system has no such option (or declares no
# such budget), which "(not set)" would read as an option left unset.
ABSENT = {"system_config": "not an option of {system}", "like_for_like": "not declared by {system}"}


@dataclass(frozen=True)
class Difference:
    """A setting whose value differs: its path in the config and each run's value (None: not set; `unset_a`,
    `unset_b`: how a run without a value says so)."""

    key: str
    a: Any
    b: Any
    unset_a: str = NOT_SET
    unset_b: str = NOT_SET

    def line(self, width: int = 80) -> str:
        return f"{self.key}: {shown(self.a, width, self.unset_a)} vs {shown(self.b, width, self.unset_b)}"


def shown(value: Any, width: int = 80, unset: str = NOT_SET) -> str:
    """A setting's value in a line: its JSON, cut at `width` characters; `unset` where it has none."""
    if value is None:
        return unset
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= width else text[: width - 1] + "…"


def described(config: JsonObject) -> str:
    """What ran, in words, from a run's config: "system vanilla, engine hf, model embedded", each --role-model
    after it; "no model" for a system that calls none (a config records the model a run loaded: `hf:embedded`
    where --model was left at its default). The retriever: `retriever`."""
    engine, _, model = str(config.get("model") or "").partition(":")
    system = f"system {config['system']}" if config.get("system") else "system not recorded"
    said = f"{system}, " + (f"engine {engine}, model {model}" if model else "no model")
    roles = json_object(config.get("role_models"))
    return said + "".join(f"; role {role}: {spec}" for role, spec in sorted(roles.items()))


def retriever(config: JsonObject) -> str:
    """The retriever a run searched, in words, as its config records it (`retriever_metadata`): "retriever bm25
    (index bm25_wiki, 4 shards)", the index by its folder's name (its path and contents: the full comparison's
    settings), or the task's own corpus's; "retriever provided" where the examples' own passages were shown; "not
    recorded" where the configuration says nothing of it."""
    metadata = json_object(config.get("retriever_metadata"))
    if not metadata and "retriever" not in config:
        return "retriever not recorded"  # a configuration written without it
    name = metadata.get("retriever") or config.get("retriever") or "provided"  # older runs: the option
    index = (
        "the task's corpus index"
        if config.get("shipped_corpus_index")
        else f"index {Path(str(metadata.get('index'))).name}"
    )
    details = [index] if metadata.get("index") else []
    details += [f"{metadata['shards']} shards"] if metadata.get("shards") else []
    return f"retriever {name}" + (f" ({', '.join(details)})" if details else "")


def searched(a: JsonObject, b: JsonObject) -> str:
    """What two runs (their configs) searched: each one's retriever, index and shards (`retriever`), once where both
    share it (`compare`'s line)."""
    first, second = retriever(a), retriever(b)
    return f"both searched with {first}" if first == second else f"A searched with {first}; B with {second}"


def flattened(config: JsonObject, prefix: str = "") -> JsonObject:
    """Every setting of a nested config by its dotted path; a value that is not an object is one setting. An
    empty object and a null are no setting (an option given no value is the option not given)."""
    out: JsonObject = {}
    for key, value in config.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flattened(value, path + "."))
        elif value is not None:
            out[path] = value
    return out


def measured(key: str) -> bool:
    """Whether a setting can change what a run measures: not one of `NOT_MEASURED` (nor inside one)."""
    return not any(fnmatchcase(key, pattern) or fnmatchcase(key, pattern + ".*") for pattern in NOT_MEASURED)


def config_differences(a: JsonObject, b: JsonObject) -> list[Difference]:
    """The measured settings whose values differ between configs `a` and `b`, in path order."""
    flat_a, flat_b = (flattened(index_named_by_key(same_named_contents(x, y))) for x, y in ((a, b), (b, a)))
    return [
        Difference(key, flat_a.get(key), flat_b.get(key), unset_text(a, key), unset_text(b, key))
        for key in sorted(set(flat_a) | set(flat_b))
        if measured(key) and flat_a.get(key) != flat_b.get(key)
    ]


def unset_text(config: JsonObject, key: str) -> str:
    """How `config` says it has no value at `key`: a system option (or declared budget) its config lacks
    altogether is no option of its system (`ABSENT`); one there as null, or any other setting, is NOT_SET."""
    top, *path = key.split(".")
    absent = ABSENT.get(top)
    node: Any = config.get(top)
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return absent.format(system=config.get("system") or "its system") if absent else NOT_SET
        node = node[part]
    return NOT_SET


def same_named_contents(config: JsonObject, other: JsonObject) -> JsonObject:
    """`config` with `model_contents` ("kind:model digest" by place) kept for the models the other run names
    alike: the files of one model name changed between the runs. Models named otherwise differ already."""
    mine, theirs = json_object(config.get("model_contents")), json_object(other.get("model_contents"))
    kept = {
        place: value
        for place, value in mine.items()
        if str(theirs.get(place, "")).rpartition(" ")[0] == str(value).rpartition(" ")[0]
    }
    return {**config, "model_contents": kept} if "model_contents" in config else config


def index_named_by_key(config: JsonObject) -> JsonObject:
    """`config` with the index cache's index of a task's own corpus named by its key, as the run's identity names
    it: the same index in a cache elsewhere is no difference."""
    args = config.get("retriever_args")
    if not isinstance(args, dict):
        return config
    return {**config, "retriever_args": index_by_key(args, config.get("shipped_corpus_index") is True)}
