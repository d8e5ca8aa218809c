"""YAML tasks: the bases of a prompt style, and the record formats and gold kinds a benchmark registers.

    from ragbench.api.yaml_tasks import RecordPlace, YamlTask

`YamlTask` (the base of a prompt style) and `YamlPrompting` (the base of a style's prompting),
`RecordPlace` (where the record a style's `parse` gets is, for its bad-record errors), `yaml_task_class`
(the Task class of a YAML task file); `RecordFormat` (a benchmark's own layout of data files, registered
through the `ragbench_record_formats` hook) and the readers it builds on (`jsonl_records`, `json_records`,
`file_records`: a file in any of the core's formats, `jsonl`, `json` or `csv`, as `data.format` names them;
`read_document`; `kind`: a value's kind in words, for a bad record's message); `GoldKind` (a benchmark's
own kind of gold, registered through the `ragbench_gold_kinds` hook) and the `GoldReader` it reads a
record's paths with. docs/yaml-tasks.md is the guide.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragbench.api._lazy import lazy_names

if TYPE_CHECKING:  # type checkers read each name where it is defined; it is imported on first use (below)
    from ragbench._yaml_tasks.fields import GoldReader
    from ragbench._yaml_tasks.formats import RecordFormat
    from ragbench._yaml_tasks.gold_kinds import GoldKind
    from ragbench._yaml_tasks.places import RecordPlace
    from ragbench._yaml_tasks.prompting import YamlPrompting
    from ragbench._yaml_tasks.sources import file_records, json_records, jsonl_records, read_document
    from ragbench._yaml_tasks.task import YamlTask, yaml_task_class
    from ragbench._yaml_tasks.values import kind

_MODULES = {
    "ragbench._yaml_tasks.task": ("YamlTask", "yaml_task_class"),
    "ragbench._yaml_tasks.prompting": ("YamlPrompting",),
    "ragbench._yaml_tasks.places": ("RecordPlace",),
    "ragbench._yaml_tasks.formats": ("RecordFormat",),
    "ragbench._yaml_tasks.gold_kinds": ("GoldKind",),
    "ragbench._yaml_tasks.fields": ("GoldReader",),
    "ragbench._yaml_tasks.sources": ("jsonl_records", "json_records", "file_records", "read_document"),
    "ragbench._yaml_tasks.values": ("kind",),
}
__all__, __getattr__, __dir__ = lazy_names(__name__, _MODULES)
