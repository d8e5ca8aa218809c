"""Data files: reading JSONL and YAML, finding a task's data, writing a file whole, the built-in catalogue.

    from ragbench.api.data import iter_jsonl, require

`iter_jsonl` (a JSONL file's records, a bad line arriving as a `RecordError`), `read_lines`, `require`
(a record's field, or the bad record's error), `built_records` (what a function makes of each record, a bad line
or a record it refuses arriving as its `RecordError`), `parse_json` (json.loads where JSON nested too deeply is a
ValueError, not a RecursionError; `MAX_DEPTH`, the levels of arrays and objects ragbench reads, and `nested_deeper`,
whether a JSON text opens more than so many: a text nested deeper is refused before a parser recurses on it), `objects` (only the JSON objects of a stream of lines pass) and
`StreamBroken` (the record error where a stream broke off); `open_given`, `given_handle`, `given_bytes`,
`given_text`, `given_text_lines`, `given_lines`, `given_values`, `given_jsonl`, `given_json`, `decoded`, `utf8` and
`NotUtf8` (a file the user gave, read so that a FIFO, device or
folder is refused at once and bytes that are not UTF-8 or JSON nested too deeply are one line naming the file and
line); `resolve_data_file` and `data_dir` (where a
task's data is), `is_saved_dataset`; `stat_fingerprint` (a file's or folder's sizes and modification times, what
`Task.data_fingerprint` records: a task reading files beside its data, such as a cache of pictures, adds theirs); `cache_root` (where ragbench keeps what it makes outside a run folder, $RAGBENCH_CACHE_DIR else
~/.cache/ragbench: a plugin keeps its own caches under it, so that `ragbench cache` lists them and one variable
moves them all); `replacing` (a file written whole or not at all: a corpus a command builds);
`load_callable` (an option naming "module:function"); `import_extra` (an optional package imported on first use:
without it, the one-line `ConfigError` that says how to install it; installed but failing to import, the error at
its root); `packaged_yaml` (a YAML file a package ships, parsed
once per process, each caller given its own copy), `PackagedSection` (one section of such a file, parsed at its
first read: what a catalogue hands out that few commands read) and `section` (parts of ragbench's own registry.yaml,
which the built-in packages' `ragbench_catalog` hooks serve); `JsonValue` and `JsonObject` (the types of JSON
whose shape is open, such as a vendor's request body: a reader narrows them before use; `json_object` and
`json_list` narrow a field that should hold an object or an array, giving an empty one where it holds another shape); `find_tokenizer_dir`, `tokenizer_in_context` and
`refuse_tokenizer` (the tokenizer folder an evaluation cuts answers with: found, or one line saying how to give it);
`load_split` (one split of a
Hugging Face dataset from a `save_to_disk` folder, a folder of data files or a Parquet file, every failure one line).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragbench.api._lazy import lazy_names

if TYPE_CHECKING:  # type checkers read each name where it is defined; it is imported on first use (below)
    from ragbench._builtin import PackagedSection, packaged_yaml, section
    from ragbench._imports import import_extra, load_callable
    from ragbench._storage.cache_root import cache_root
    from ragbench._storage.datafiles import data_dir, is_saved_dataset, named_data, resolve_data_file, stat_fingerprint
    from ragbench._storage.files import replacing
    from ragbench._storage.given_files import (
        NotUtf8,
        decoded,
        given_bytes,
        given_handle,
        given_json,
        given_jsonl,
        given_lines,
        given_text,
        given_text_lines,
        given_values,
        open_given,
        utf8,
    )
    from ragbench._storage.jsonl import (
        StreamBroken,
        built_records,
        iter_jsonl,
        objects,
        parse_json,
        read_lines,
        require,
    )
    from ragbench._storage.tokenizer_files import find_tokenizer_dir, refuse_tokenizer, tokenizer_in_context
    from ragbench._values.json_values import MAX_DEPTH, JsonObject, JsonValue, json_list, json_object, nested_deeper
    from ragbench._yaml_tasks.hf import load_split

_MODULES = {
    "ragbench._storage.jsonl": (
        "iter_jsonl",
        "read_lines",
        "require",
        "built_records",
        "parse_json",
        "objects",
        "StreamBroken",
    ),
    "ragbench._storage.datafiles": (
        "resolve_data_file",
        "named_data",
        "data_dir",
        "is_saved_dataset",
        "stat_fingerprint",
    ),
    "ragbench._storage.cache_root": ("cache_root",),
    "ragbench._storage.files": ("replacing",),
    "ragbench._storage.tokenizer_files": ("find_tokenizer_dir", "tokenizer_in_context", "refuse_tokenizer"),
    "ragbench._storage.given_files": (
        "open_given",
        "given_handle",
        "given_bytes",
        "given_text",
        "given_text_lines",
        "given_lines",
        "given_values",
        "given_jsonl",
        "given_json",
        "decoded",
        "utf8",
        "NotUtf8",
    ),
    "ragbench._imports": ("load_callable", "import_extra"),
    "ragbench._builtin": ("PackagedSection", "packaged_yaml", "section"),
    "ragbench._values.json_values": (
        "JsonValue",
        "JsonObject",
        "json_object",
        "json_list",
        "MAX_DEPTH",
        "nested_deeper",
    ),
    "ragbench._yaml_tasks.hf": ("load_split",),
}
__all__, __getattr__, __dir__ = lazy_names(__name__, _MODULES)
