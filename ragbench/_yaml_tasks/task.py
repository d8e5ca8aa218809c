"""The Task a YAML file declares: `YamlTask` reads the records its `data` names, maps them with its
`fields`, and prompts and post-processes as its `prompting` (ragbench._yaml_tasks.prompting: its
Jinja2 templates in the `template` prompt style, its filters). A prompt style that needs logic is a subclass
registered by name (`prompt.style`), with a prompting class of its own; the file's task is then a subclass of
that style (`task_class`)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar, cast

from .._checks import PROBE_RECORDS, Preflight, probe_data
from .._class_defaults import EMPTY
from .._errors import ConfigError, RecordError
from .._storage.datafiles import check_data_path, named_data, resolve_data_file
from .._task import Task
from .._task.scoring import TaskScoring
from .._types import Example
from .._values.json_values import JsonObject
from .data_spec import FORMATS, unused_data_option
from .fields import MISSING, FieldError, Mapper, Record
from .filters import chain, check_filter
from .formats import RecordFormat
from .gold_kinds import GoldKind
from .hf import load_split
from .located import SpecError
from .places import RecordPlace
from .prompting import YamlPrompting
from .sources import count_lines, file_format, file_records
from .spec import GOLD_KINDS, TEMPLATE_VARIABLES, FieldRef, TaskSpec, load_spec


class YamlTask(Task):
    """A task declared by a YAML file (docs/yaml-tasks.md), prompted by its `prompting` (the file's Jinja2
    templates, or a prompt style's own prompts)."""

    spec: ClassVar[TaskSpec]
    # the class of the file's `prompting`: a prompt style with prompts of its own names its YamlPrompting subclass
    prompting_class: ClassVar[type[YamlPrompting]] = YamlPrompting
    prompting: YamlPrompting  # the file's, of `prompting_class` (task_class)
    record_format: ClassVar[RecordFormat | None] = None  # the registered format `data.format` names (not the core's)
    gold_kinds: ClassVar[Mapping[str, GoldKind]] = EMPTY  # the registered kinds `fields.gold` maps (not the core's)

    def __init__(self, data_path: str | Path | None = None) -> None:
        """A style with options takes them as keyword arguments of its own `__init__` and records them
        in `self.args` (the run's config)."""
        super().__init__(data_path)
        self.format: str | None = None
        self.dataset: Any = None  # a datasets.Dataset, loaded once when the records come through `datasets`
        self.mapper = Mapper(self.spec.fields, self.gold_kinds)

    # --- data -------------------------------------------------------------------------------------------
    def prepare(self) -> None:
        data, name, source = self.spec.data, self.name, self.spec.source
        if self.data_path is not None:
            self.path = named_data(name, self.data_path)
        elif data is None:
            raise ConfigError(f"task {name} ({source}) names no data; pass --data {name}=PATH")
        elif data.path is not None:
            if not data.path.exists():
                raise ConfigError(f"task {name}: data.path {data.path} ({source}) not found; pass --data {name}=PATH")
            check_data_path(data.path, f"task {name}: data.path {data.path} ({source})")
            self.path = data.path
        elif data.file is not None:
            self.path = resolve_data_file(name, data.file, None, data.url)
        declared = data.format if data is not None else "auto"
        self.format = file_format(Path(self.path), declared, name) if self.path is not None else "hf"
        unused = unused_data_option(data, self.format, self.where()) if data and self.data_path is None else None
        if unused:  # the file's own options for its own data (--data replaces the data, not the options)
            raise ConfigError(f"task {name} ({source}): {unused}")

    def records(self) -> Iterator[tuple[RecordPlace, Any]]:
        """(where the record is, the record or a RecordError) in data order."""
        fmt = self.prepared_format()
        if fmt in ("hf", "parquet"):
            where = self.where()
            return ((RecordPlace(where, i, i + 1, f"row {i}"), row) for i, row in enumerate(self.hf_dataset()))
        data = self.spec.data
        if self.record_format is not None and data is not None and fmt == data.format:
            return self.record_format.read(self.local_file())
        if data is None:
            return file_records(self.local_file(), fmt)
        return file_records(self.local_file(), fmt, data.records, data.delimiter, data.keys_as, data.header_row)

    def prepared_format(self) -> str:
        """The data's format, found by `prepare` on first use."""
        if self.format is None:
            self.prepare()
        assert self.format is not None
        return self.format

    def local_file(self) -> Path:
        """The data file `prepare` found (a dataset of the Hugging Face hub has none)."""
        assert self.path is not None, f"task {self.name}: no local data file"
        return Path(self.path)

    def hf_dataset(self) -> Any:
        if self.dataset is None:
            data = self.spec.data
            config, split, revision = (data.config, data.split, data.revision) if data else (None, None, None)
            if self.format == "parquet":
                self.dataset = load_split(self.name, parquet=self.local_file())
            elif self.path is not None:
                self.dataset = load_split(
                    self.name, folder=Path(self.path), config=config, split=split, revision=revision
                )
            else:
                self.dataset = load_split(
                    self.name, name=data.hf if data else None, config=config, split=split, revision=revision
                )
        return self.dataset

    def data_fingerprint(self) -> JsonObject | None:
        """A hub dataset by its name, config, split and revision (a dataset without a pinned revision may
        change unseen); a local source as any task's."""
        data = self.spec.data
        if self.path is None and self.data_path is None and data is not None and data.hf:
            return {"hf": data.hf, "config": data.config, "split": data.split, "revision": data.revision}
        return super().data_fingerprint()

    def where(self) -> str:
        return (
            str(self.path) if self.path is not None else f"Hugging Face dataset {self.spec.data and self.spec.data.hf}"
        )

    def examples(self) -> Iterator[Example | RecordError]:
        by_position = None  # the data's records numbered by position (they have no id), from the first that maps
        for place, record in self.records():
            if isinstance(record, RecordError):
                yield record
                continue
            try:
                example = self.parse(record, place)
                by_position = self.numbering(record, place, by_position)
            except RecordError as exc:
                yield exc
                continue
            yield example

    def numbering(self, record: Record, place: RecordPlace, by_position: bool | None) -> bool:
        """Whether the data's records are numbered by their position (`by_position`: as the first record that
        maps is; None: this is it), a record that departs from it being a bad record naming the id field:
        a record without an id among records with ids would take its position as its id, which can be
        another record's real id (and that record be blamed for repeating it); a record with an id among
        records numbered by position could repeat one of their positions."""
        ref = self.mapper.fields.id
        has_id = self.mapper.value(record, ref, place, required=False) is not MISSING
        if by_position is None or by_position == (not has_id):
            return not has_id
        if has_id:
            raise self.mapper.fail(
                place,
                ref,
                "an id, while the data's first record has none (records without "
                "ids are numbered by their position, which an id can repeat); give "
                "every record an id, or none",
            )
        raise self.mapper.fail(
            place,
            ref,
            "missing field, while the data's records have ids (its position would "
            "be its id, which can be another record's); give it an id",
        )

    def parse(self, record: Any, place: RecordPlace) -> Example:
        """The example of one record (a style may adjust it); `place` is where it is (`place.index`: its
        position in the data; `place.error(problem, field)`: a bad record named by it)."""
        return self.mapper.example(record, place)

    def gold(self, record: Record, path: Any, index: int) -> dict[str, object]:
        """The gold of one record of the file at `path` (the field mapping's `gold`)."""
        return self.mapper.gold(record, RecordPlace(str(path), index, index + 1))

    def size_hint(self) -> int | None:
        fmt = self.prepared_format()
        if fmt in ("hf", "parquet"):
            return len(self.hf_dataset())
        counts_lines = fmt == "jsonl" or (self.record_format is not None and self.record_format.counts_lines)
        return count_lines(self.local_file()) if counts_lines else None

    # --- pre-flight ---------------------------------------------------------------------------------------
    def preflight(self, check: Preflight) -> None:
        """Task.preflight's checks (data found; a text file UTF-8, its first records read), after the file's
        mapping and prompt are tried on the first records: when none maps, the mistake is the file's, named
        by its line and key."""
        before = len(check.problems)
        with check.step(f"task {self.name}: data found"):
            self.prepare()
        if len(check.problems) > before:
            return
        with check.step(f"task {self.name}: {self.spec.source} maps the records and renders the prompt"):
            self.try_first_records()
        if len(check.problems) == before and self.format not in ("hf", "parquet"):  # binary: no UTF-8 to check
            probe_data(self, check)

    def try_first_records(self) -> None:
        stream = self.records()
        first: FieldError | None = None
        try:
            for place, record in itertools.islice(stream, PROBE_RECORDS):
                if isinstance(record, RecordError):
                    continue
                try:
                    example = self.parse(record, place)
                except FieldError as exc:
                    first = first or exc.with_hint(record)
                    continue
                except RecordError:
                    continue
                self.try_prompts(example)
                return
        finally:
            getattr(stream, "close", lambda: None)()
        if first is not None:
            raise first.spec_error()
        if self.format in ("hf", "parquet"):  # (a text file's records are counted by probe_data)
            raise ConfigError(
                f"task {self.name}: {self.where()} holds no usable record among its first "
                f"{PROBE_RECORDS}; pass --data {self.name}=PATH to other data"
            )

    def try_prompts(self, example: Example) -> None:
        try:
            self.prompting.build_prompt(example, example.docs)
            self.prompting.query_text(example)
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc

    def demonstration(self) -> tuple[str, str] | None:
        return self.spec.prompt.demonstration

    def gold_references(self, gold: Mapping[str, object]) -> list[str]:
        """The declared gold as reference texts, the fullest first: the long answer(s); a list answer's first
        aliases joined (as QAMPARI's); a registered kind's references (CRAG's answer and alternatives); the short answers; the sub-questions'
        short answers; the label."""
        kinds = self.scoring.gold_fields or ()
        if "long_answer" in kinds and (gold.get("long_answers") or gold.get("answer")):
            return [str(a) for a in cast("Iterable[object]", gold.get("long_answers") or [gold["answer"]])]
        if "answer_lists" in kinds:
            lists = cast("Iterable[Sequence[object]]", gold.get("answers") or [])
            return [", ".join(str(aliases[0]) for aliases in lists if aliases)]
        registered = next((kind for name, kind in self.gold_kinds.items() if name in kinds), None)
        if registered is not None:
            return registered.references(gold)
        if not gold.get("answers") and "qa_pairs" in kinds:
            pairs = cast("Iterable[Mapping[str, Iterable[object] | None]]", gold.get("qa_pairs") or [])
            return [str(a) for pair in pairs for a in pair.get("short_answers") or []]
        return super().gold_references(gold)

    def config(self) -> JsonObject:
        return {**super().config(), "yaml": self.spec.source, "yaml_sha256": self.spec.digest}


def task_class(
    spec: TaskSpec,
    style: Callable[[str], type] | None = None,
    formats: Callable[[str], RecordFormat] | None = None,
    gold_kinds: Callable[[str], GoldKind] | None = None,
) -> type[YamlTask]:
    """The Task class of a YAML task: a subclass of its prompt style (`style` finds a named one), with
    the file's declarations as class attributes and its templates and filters checked; a `data.format`
    the core does not read is found by `formats` (a name -> registered RecordFormat lookup), a gold kind
    it does not map by `gold_kinds` (a name -> registered GoldKind lookup)."""
    base = YamlTask if spec.prompt.style == "template" else _style(spec, style)
    record_format = _record_format(spec, formats)
    registered_kinds = _gold_kinds(spec, gold_kinds)
    if record_format is not None and spec.data is not None and not spec.fields.gold and record_format.default_gold:
        gold = {
            kind: FieldRef((path,), f"fields.gold.{kind} ({spec.data.format}'s default)", spec.source, 1)
            for kind, path in record_format.default_gold.items()
        }
        spec = replace(spec, fields=replace(spec.fields, gold=gold))
    attrs: dict[str, Any] = {
        "spec": spec,
        "name": spec.name,
        "record_format": record_format,
        "gold_kinds": registered_kinds,
        "scoring": TaskScoring(
            metrics=tuple(name for name, _ in spec.metrics),
            metric_options={name: args for name, args in spec.metrics if args},
            slice_fields=tuple(spec.fields.slices),
            gold_fields=spec.gold_fields(),
            missing_scores_zero=spec.missing_scores_zero,
        ),
        "own_documents": spec.fields.documents is not None,
        "prompting": _prompting(spec, base),
        "__doc__": spec.description or base.__doc__,
    }
    if spec.corpus is not None:  # open domain over passages of its own (OwnCorpus)
        attrs["corpus"] = spec.corpus
    if spec.instruction_key is not None:  # a standing instruction (StandingInstruction), under the question as posed
        attrs.update(instruction_key=spec.instruction_key, task_input=getattr(base, "task_input", _posed_question))
    return type(f"YamlTask[{spec.name}]", (base,), attrs)


def _prompting(spec: TaskSpec, base: type[YamlTask]) -> YamlPrompting:
    """The file's prompting, of its style's class: the `template` style's templates checked, a style with
    prompts of its own refusing them."""
    prompt, prompting_class = spec.prompt, base.prompting_class
    if not prompting_class.renders_templates:
        for key in ("template", "system", "query"):
            if getattr(prompt, key) is not None:
                raise SpecError(
                    spec.source,
                    getattr(prompt, key).line,
                    f"prompt.{key}",
                    f"prompt style '{prompt.style}' writes its own prompts: leave {key} out",
                )
    answer_filter = chain([check_filter(f.value, spec.source, f.key, f.line) for f in spec.postprocess])
    templates: dict[str, Any] = {}
    if prompting_class.renders_templates:
        from .templates import DEFAULT_TEMPLATE, PromptTemplate  # jinja2: the style with prompts of its own needs none

        variables = (*TEMPLATE_VARIABLES, *spec.fields.inputs)
        templates["template"] = PromptTemplate(prompt.template, spec.source, variables, DEFAULT_TEMPLATE)
        templates["query_template"] = (
            PromptTemplate(prompt.query, spec.source, variables, "") if prompt.query is not None else None
        )
    return prompting_class(
        answer_format=spec.answer_format,
        cites=spec.cites,
        answer_filter=answer_filter,
        system=prompt.system.value if prompt.system else None,
        **templates,
    )


def _posed_question(task: YamlTask, example: Example) -> str:
    """The `task_input` of a task with a standing instruction whose style has none: the question as posed."""
    return task.prompting.query_text(example)


def yaml_task_class(
    path: str | Path,
    style: Callable[[str], type] | None = None,
    source: str | None = None,
    formats: Callable[[str], RecordFormat] | None = None,
    gold_kinds: Callable[[str], GoldKind] | None = None,
) -> type[YamlTask]:
    """The Task class of the YAML task file at `path` (`source`: how messages name it), its prompt style
    found by `style` (a name -> YamlTask subclass lookup; None: the `template` style only), a registered
    `data.format` by `formats` and a registered gold kind by `gold_kinds` (name -> RecordFormat, GoldKind
    lookups; None: the core's only)."""
    return task_class(load_spec(Path(path), source), style, formats, gold_kinds)


def _record_format(spec: TaskSpec, formats: Callable[[str], RecordFormat] | None) -> RecordFormat | None:
    """The registered format the file's `data.format` names; None for the core's own formats."""
    data = spec.data
    if data is None or data.format in FORMATS:
        return None
    if formats is None:
        raise SpecError(
            spec.source,
            data.format_line,
            "data.format",
            f"format '{data.format}' is not one the "
            f"core reads ({', '.join(FORMATS)}); a registered one needs a registry to be found",
        )
    try:
        return formats(data.format)
    except ConfigError as exc:
        raise SpecError(
            spec.source, data.format_line, "data.format", f"{exc}; the core reads {', '.join(FORMATS)}"
        ) from exc


def _gold_kinds(spec: TaskSpec, lookup: Callable[[str], GoldKind] | None) -> Mapping[str, GoldKind]:
    """The registered kinds the file's `fields.gold` maps (name -> GoldKind), each part it maps one of the
    kind's and its first part mapped."""
    kinds = {}
    for name, refs in spec.fields.gold.items():
        if name in GOLD_KINDS:
            continue
        line = next(iter(refs.values())).line if refs else 1
        if lookup is None:
            raise SpecError(
                spec.source,
                line,
                f"fields.gold.{name}",
                f"gold kind '{name}' is not one the core maps "
                f"({', '.join(GOLD_KINDS)}); a registered one needs a registry to be found",
            )
        try:
            kind = lookup(name)
        except ConfigError as exc:
            raise SpecError(
                spec.source, line, f"fields.gold.{name}", f"{exc}; the core maps {', '.join(GOLD_KINDS)}"
            ) from exc
        unknown = [part for part in refs if part not in kind.parts]
        if unknown or not kind.parts or kind.parts[0] not in refs:
            raise SpecError(
                spec.source,
                line,
                f"fields.gold.{name}",
                f"expected the paths of {', '.join(kind.parts)} (the first required), got {', '.join(refs) or 'none'}",
            )
        kinds[name] = kind
    return MappingProxyType(kinds)


def _style(spec: TaskSpec, style: Callable[[str], type] | None) -> type[YamlTask]:
    if style is None:
        raise ConfigError(f"{spec.source}: prompt style '{spec.prompt.style}' needs a registry to be found")
    try:
        return style(spec.prompt.style)
    except ConfigError as exc:
        raise SpecError(spec.source, spec.prompt.style_line, "prompt.style", str(exc)) from exc
