"""The schema of a YAML task file (docs/yaml-tasks.md), checked key by key into a `TaskSpec`.

Every problem is one line naming the file, the line and the dotted key; an unknown key suggests the
nearest known one."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from .._values.names import name_problem
from .data_spec import DataSpec, data_spec
from .located import LocatedList, Section, read_file_bytes, read_yaml_bytes

ANSWER_FORMATS = ("short", "long", "list", "choice", "label")
# the formats the core reads; another name is a format a benchmark registers (ragbench_record_formats)
SHAPES = ("dicts", "pairs", "sentences", "columns")
# the core's gold kinds (TaskScoring.gold_fields) -> the sub-keys of a kind whose value is a mapping of paths;
# another kind given as a mapping of paths is one a benchmark registers (ragbench._yaml_tasks.gold_kinds)
GOLD_KINDS = {
    "answers": None,
    "label": None,
    "choices": ("texts", "labels", "answer_key", "answer_index"),
    "qa_pairs": None,
    "answer_lists": None,
    "long_answer": None,
    "claims": None,
}
TEMPLATE_VARIABLES = ("question", "docs", "choices", "meta")  # every task's, beside its `fields.inputs`
TOP_KEYS = (
    "task",
    "description",
    "aliases",
    "groups",
    "data",
    "fields",
    "answer_format",
    "cites",
    "instruction_key",
    "prompt",
    "postprocess",
    "metrics",
    "system_args",
    "missing_scores_zero",
    "corpus",
)


@dataclass(frozen=True)
class FieldRef:
    """Where a value is in a record: the first of `paths` present, or (`combine` "all") every one."""

    paths: tuple[str, ...]
    key: str  # the YAML key, for messages ("fields.gold.answers")
    source: str  # the YAML file ...
    line: int  # ... and the key's line
    combine: str = "first"
    optional: bool = False
    list: str | None = None  # the value is a list written as text: "json", or the separator of its items


@dataclass(frozen=True)
class DocumentsSpec:
    source: FieldRef
    shape: str = "dicts"
    title: str = "title"
    text: str = "text"
    id: str = "id"
    score: str = "score"
    join: str = ""
    metadata: tuple[str, ...] = ()


@dataclass(frozen=True)
class FieldsSpec:
    id: FieldRef
    question: FieldRef
    gold: dict[str, Any] = field(default_factory=dict)  # kind -> FieldRef, or {sub-key: FieldRef}
    extra_gold: dict[str, FieldRef] = field(default_factory=dict)
    documents: DocumentsSpec | None = None
    inputs: dict[str, FieldRef] = field(default_factory=dict)
    slices: dict[str, FieldRef] = field(default_factory=dict)
    meta: dict[str, FieldRef] = field(default_factory=dict)


@dataclass(frozen=True)
class Located:
    """A value of the file and where it was written (templates, filters), for messages."""

    value: Any
    key: str
    line: int


@dataclass(frozen=True)
class PromptSpec:
    style: str = "template"
    style_line: int = 1
    template: Located | None = None
    system: Located | None = None
    query: Located | None = None
    demonstration: tuple[str, str] | None = None


@dataclass(frozen=True)
class TaskSpec:
    name: str
    source: str  # the file as named in messages
    folder: Path  # relative data paths start here
    digest: str  # sha256 of the file's bytes, recorded in the run's config
    fields: FieldsSpec
    description: str = ""
    aliases: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    data: DataSpec | None = None
    answer_format: str = "short"
    cites: bool = False
    instruction_key: str | None = None
    prompt: PromptSpec = PromptSpec()
    postprocess: tuple[Located, ...] = ()
    metrics: tuple[tuple[str, dict[str, Any]], ...] = ()
    system_args: dict[str, Any] = field(default_factory=dict)
    missing_scores_zero: bool = False
    corpus: Path | None = None  # the passages the task ships, searched when a run names no retriever (OwnCorpus)

    def gold_fields(self) -> tuple[str, ...]:
        return (*self.fields.gold, *self.fields.extra_gold)


def load_spec(path: Path, source: str | None = None) -> TaskSpec:
    """The checked spec of the YAML task at `path` (`source`: how messages name the file). The file is read once:
    its digest is of the very bytes parsed, whatever writes to it meanwhile."""
    source = source or str(path)
    raw = read_file_bytes(path, source)
    data = read_yaml_bytes(raw, source)
    top = Section(source, data if data is not None else {}, "", 1)
    top.only(TOP_KEYS)
    data_format = data_spec(top.section("data"), path.parent)
    return TaskSpec(
        **header_fields(top),
        source=source,
        folder=path.parent,
        digest=hashlib.sha256(raw).hexdigest(),
        data=data_format,
        fields=_fields(top.section("fields"), source),
        answer_format=top.get("answer_format", str, "short", choices=ANSWER_FORMATS),
        cites=top.get("cites", bool, False),
        instruction_key=top.get("instruction_key", str),
        prompt=_prompt(top.section("prompt")),
        postprocess=_filters(top),
        metrics=_metrics(top),
        missing_scores_zero=top.get("missing_scores_zero", bool, False),
        corpus=_corpus(top, path.parent),
    )


class HeaderFields(TypedDict):
    """What names and describes a task (`TaskSpec`'s and `TaskHeader`'s fields of the same names)."""

    name: str
    description: str
    aliases: tuple[str, ...]
    groups: tuple[str, ...]
    system_args: dict[str, Any]  # the file's `system_args` mapping, YAML values as read


def header_fields(top: Section) -> HeaderFields:
    """The checked values of the keys that name and describe the task (`TaskSpec`'s name, description, aliases,
    groups and system_args): what listing and lookups read (ragbench._yaml_tasks.header)."""
    return {
        "name": _name(top, "task", top.get("task", str, required=True)),
        "description": top.get("description", str, ""),
        "aliases": tuple(_name(top, "aliases", alias) for alias in top.strings("aliases")),
        "groups": tuple(top.strings("groups")),
        "system_args": dict(top.get("system_args", dict, {})),
    }


def _corpus(top: Section, folder: Path) -> Path | None:
    """`corpus`: a passage file beside the YAML file (relative to it), which must be there."""
    name = top.get("corpus", str)
    if name is None:
        return None
    path: Path = folder / name
    if not path.is_file():
        raise top.error("corpus", f"no passage file {path} (a path relative to the task's file)")
    return path


def _name(section: Section, key: str, name: Any) -> str:
    """`name`, given at `key`, when it keeps the rule for names that become file names (ragbench._values.names)."""
    problem = name_problem(name)
    if problem is None and isinstance(name, str):  # no problem: a string
        return name
    raise section.error(key, str(problem))


def field_ref(section: Section, name: str, default: str | None = None) -> FieldRef | None:
    """A path form (docs/yaml-tasks.md: a path, a list of paths, {path|first_of|all_of, optional, list})."""
    key, line = section.at(name)
    value = section.data.get(name, default)
    if value is None:
        return None
    if isinstance(value, str):
        return FieldRef((value,), key, section.source, line)
    if isinstance(value, list):
        return FieldRef(_paths(section, name, value), key, section.source, line)
    inner = Section(section.source, value, key, line)
    inner.only(("path", "first_of", "all_of", "optional", "list"))
    forms = [form for form in ("path", "first_of", "all_of") if form in inner.data]
    if len(forms) != 1:
        raise inner.error(None, "give exactly one of path, first_of and all_of")
    paths = inner.data[forms[0]]
    paths = _paths(inner, forms[0], paths if isinstance(paths, list) else [paths])
    listed = inner.get("list", str)
    if listed == "":
        raise inner.error("list", "expected json or the separator of the items (e.g. '|')")
    return FieldRef(
        paths,
        key,
        section.source,
        line,
        "all" if forms[0] == "all_of" else "first",
        inner.get("optional", bool, False),
        listed,
    )


def _paths(section: Section, name: str, values: list[Any]) -> tuple[str, ...]:
    if not values or not all(isinstance(v, str) and v for v in values):
        raise section.error(name, "expected a path (keys joined by dots) or a list of paths")
    return tuple(values)


def _refs(section: Section | None) -> dict[str, FieldRef]:
    return {} if section is None else {str(name): _path(section, str(name)) for name in section.data}


def _fields(section: Section | None, source: str) -> FieldsSpec:
    if section is None:
        section = Section(source, {}, "fields", 1)
    section.only(FieldsSpec.__dataclass_fields__)
    gold_section = section.section("gold")
    gold: dict[str, Any] = {}
    if gold_section is not None:
        registered = {
            str(kind): ()
            for kind, value in gold_section.data.items()
            if kind not in GOLD_KINDS and isinstance(value, dict)
        }
        gold_section.only([*GOLD_KINDS, *registered])
        for kind, parts in {**GOLD_KINDS, **registered}.items():
            if kind not in gold_section.data:
                continue
            if parts is None:
                gold[kind] = field_ref(gold_section, kind)
                continue
            sub = gold_section.section(kind)
            if sub is None:
                continue
            if kind in GOLD_KINDS:
                sub.only(parts)
            gold[kind] = {str(part): field_ref(sub, str(part)) for part in parts or sub.data if part in sub.data}
        if "answers" in gold and "answer_lists" in gold:
            raise gold_section.error(
                "answer_lists", "answers and answer_lists both fill the gold's `answers`: give one"
            )
        if "choices" in gold and "texts" not in gold["choices"]:
            raise gold_section.error("choices", "choices needs `texts` (the path to the list of choice texts)")
    docs = section.section("documents")
    inputs = section.section("inputs")
    slices = section.section("slices")
    if slices is not None:
        for name in slices.data:
            _name(slices, str(name), name)  # a slice field names plot files
    if inputs is not None:
        for name in inputs.data:
            if name in TEMPLATE_VARIABLES:
                raise inputs.error(name, f"'{name}' is a template variable of every task: give the input another name")
    return FieldsSpec(
        id=_path(section, "id", "id"),
        question=_path(section, "question", "question"),
        gold=gold,
        extra_gold=_refs(section.section("extra_gold")),
        documents=_documents(docs),
        inputs=_refs(inputs),
        slices=_refs(slices),
        meta=_refs(section.section("meta")),
    )


def _path(section: Section, name: str, default: str | None = None) -> FieldRef:
    """The path form given for `name` (`default` when the file leaves it out): null is no path."""
    ref = field_ref(section, name, default)
    if ref is None:
        raise section.error(name, "expected a path (keys joined by dots) or a list of paths")
    return ref


def _documents(section: Section | None) -> DocumentsSpec | None:
    if section is None:
        return None
    section.only((*DocumentsSpec.__dataclass_fields__, "path", "optional"))
    ref = field_ref(section, "path")
    if ref is None:
        raise section.error(None, "'path' is required (the path to the list of documents in a record)")
    ref = FieldRef(ref.paths, section.key, ref.source, ref.line, ref.combine, section.get("optional", bool, False))
    shape = section.get("shape", str, "dicts", choices=SHAPES)
    return DocumentsSpec(
        source=ref,
        shape=shape,
        title=section.get("title", str, "title"),
        text=section.get("text", str, "sentences" if shape == "columns" else "text"),
        id=section.get("id", str, "id"),
        score=section.get("score", str, "score"),
        join=section.get("join", str, ""),
        metadata=tuple(section.strings("metadata")),
    )


def _prompt(section: Section | None) -> PromptSpec:
    if section is None:
        return PromptSpec()
    section.only(("style", "template", "system", "query", "demonstration"))
    demo = section.section("demonstration")
    demonstration = None
    if demo is not None:
        demo.only(("question", "answer"))
        demonstration = (demo.get("question", str, required=True), demo.get("answer", str, required=True))
    return PromptSpec(
        style=section.get("style", str, "template"),
        style_line=section.at("style")[1],
        template=_located(section, "template"),
        system=_located(section, "system"),
        query=_located(section, "query"),
        demonstration=demonstration,
    )


def _located(section: Section, name: str) -> Located | None:
    value = section.get(name, str)
    return None if value is None else Located(value, *section.at(name))


def _items(top: Section, name: str) -> list[tuple[Any, str, int]]:
    """(item, key, line) of a top-level list."""
    value = top.get(name, list, [])
    key, line = top.at(name)
    lines = value.lines if isinstance(value, LocatedList) else [line] * len(value)
    return [(item, f"{key}[{i + 1}]", lines[i]) for i, item in enumerate(value)]


def _filters(top: Section) -> tuple[Located, ...]:
    from .filters import check_filter

    out = []
    for item, key, line in _items(top, "postprocess"):
        check_filter(item, top.source, key, line)
        out.append(Located(item, key, line))
    return tuple(out)


def _metrics(top: Section) -> tuple[tuple[str, dict[str, Any]], ...]:
    items = _items(top, "metrics")
    if not items:
        raise top.error(
            "metrics" if "metrics" in top.data else None,
            "key 'metrics' is required: the metric names that score the task (ragbench list metrics)",
        )
    out: list[tuple[str, dict[str, Any]]] = []
    for item, key, line in items:
        if isinstance(item, str):
            out.append((item, {}))
            continue
        entry = Section(top.source, item, key, line)
        entry.only(("name", "args"))
        out.append((entry.get("name", str, required=True), dict(entry.get("args", dict, {}))))
    return tuple(out)
