"""Base class of task plugins: where the examples come from, how systems prompt for them, how answers are scored."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar, cast

from .._checks import Preflight, probe_data
from .._class_defaults import refuse_by_name
from .._errors import RecordError
from .._storage.datafiles import stat_fingerprint
from .._types import Example
from .._values.json_values import JsonObject
from .prompting import PROMPTING_NAMES, TaskPrompting
from .protocols import plot_keys
from .scoring import TaskScoring


class Task:
    """A benchmark, in three parts: its data (`prepare`, `preflight`, `examples`, `data_fingerprint`,
    `size_hint`, `own_documents`, `gold_references`), its `prompting` (a `TaskPrompting`: the baseline
    prompt and the hooks systems call, which generic systems such as closed_book and vanilla follow so that
    their prompts match the benchmark's reference baselines) and its `scoring`. Subclasses set the class
    attributes and implement `examples`; what only one benchmark needs is an optional protocol
    (ragbench._task.protocols).
    """

    name: ClassVar[str] = ""
    # metrics, metric_options, slice_fields, missing_scores_zero, gold_fields (ragbench._task.scoring): one
    # TaskScoring on the class, or an instance's own (`self.scoring = dataclasses.replace(self.scoring, ...)`)
    scoring: TaskScoring = TaskScoring()
    # answer_format, cites and the prompting hooks (ragbench._task.prompting; docs/writing-plugins.md, "The
    # task-system contract"): one object on the class, or an instance's own made from its options
    prompting: TaskPrompting = TaskPrompting()
    # The TaskPrompting subclass an instance makes its own `prompting` of, from its options (ALCE's, a YAML
    # file's): its class-level facts (`cites`, `answer_format`) are what a task class prompts for before it is
    # instantiated (`declared_prompting`).
    prompting_class: ClassVar[type[TaskPrompting] | None] = None
    # The examples carry documents of their own, what the `provided`, `example_bm25` and `example_dense`
    # retrievers return: True (CRAG's pages, ALCE's top-100, Self-RAG's ctxs), False (open domain: a system
    # that retrieves needs a corpus retriever, and the pre-flight says so), None (not declared: not checked);
    # an instance may set it from its options (squad's passages=).
    own_documents: bool | None = None
    # The examples hold images (`Example.images`: CRAG-MM's pictures), or the prompting shows documents as images
    # (ViDoRe's pages), that systems send with the question: the pre-flight refuses a model that takes none
    # (`EngineNeeds.images`), unless the system says it sends none.
    holds_images: bool = False
    # Where the prompting can show the documents as text instead (ViDoRe's `images=0`): the option that does, and
    # what changes, named where a model that takes no images is refused ("--task-arg vidore.images=0 (...)").
    text_only: str = ""
    # The corpus is pages (images: ViDoRe's), searched by a retriever whose passages are pages (`Retriever.page_images`):
    # how to pass one, named where a system retrieves with any other (a text index holds none of the pages).
    page_retrieval: str = ""
    # The examples' questions come with pictures of their own (`Example.images`: CRAG-MM's, not ViDoRe's pages): a system
    # that searches by the question's picture needs a retriever that can (`SystemDeclaration.searches_by_picture`).
    question_images: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A scoring field or a prompting hook defined on the class is refused: nothing would read it (the run
        reads `scoring`, systems call `prompting`'s hooks)."""
        super().__init_subclass__(**kwargs)
        _refuse_prompting(cls.__qualname__, cls.__dict__)
        refuse_by_name(cls, vars(cls), "scoring")

    @classmethod
    def declared_prompting(cls) -> TaskPrompting | type[TaskPrompting]:
        """What the class says of its prompting without an instance (`ragbench list`'s "fits" reads `cites`):
        its `prompting`, or the `prompting_class` its instances make theirs of when that one is not of it."""
        made = cls.prompting_class
        return cls.prompting if made is None or isinstance(cls.prompting, made) else made

    def __setattr__(self, name: str, value: Any) -> None:
        """A scoring field (`self.metrics = ...`) or a prompting member (`self.answer_format = ...`) assigned by
        name is refused."""
        _refuse_prompting(type(self).__qualname__, (name,))
        refuse_by_name(type(self), (name,), "scoring", instance=True)
        super().__setattr__(name, value)

    def __init__(self, data_path: str | Path | None = None, **args: Any) -> None:
        self.data_path = Path(data_path) if data_path is not None else None
        self.args = args
        self.path: Path | None = None  # the data file `prepare` found (the pre-flight reads its first records)

    def prepare(self) -> None:
        """Find (or download) the data before the run starts, so a missing file stops it
        before any model loads."""

    def preflight(self, check: Preflight) -> None:
        """The task's pre-flight (`ragbench check`), before anything loads: `prepare`, then the first
        records read (encoding, format, not empty). A task with prerequisites (a tokenizer, a service)
        extends this, calling super(), and reports each problem with `check.problem(...)` or a
        `ConfigError` inside `with check.step(...)`, naming the option that fixes it."""
        before = len(check.problems)
        with check.step(f"task {self.name}: data file found"):
            self.prepare()
        if len(check.problems) == before:
            probe_data(self, check)

    def examples(self) -> Iterator[Example | RecordError]:
        """Examples in data order; a bad record is yielded as a `RecordError`, not raised."""
        raise NotImplementedError

    def data_fingerprint(self) -> JsonObject | None:
        """A cheap identity of the data `prepare` found, recorded when a run starts: the --resume of a
        finished run whose data's fingerprint changed reads the data again (changed records run again).
        Default: the local file or folder (`path`, else `data_path`; ragbench._storage.datafiles); None
        when the task reads no local data (a task that downloads its own data tells its source here)."""
        source = self.path or self.data_path
        return stat_fingerprint(source) if source is not None else None

    def size_hint(self) -> int | None:
        """The number of records, if it is cheap to know (for the progress bar's ETA)."""
        return None

    def gold_references(self, gold: Mapping[str, object]) -> list[str]:
        """Every gold answer of one example (`example.gold`) as a reference text, the preferred first: what a
        metric that knows no benchmark compares an answer with (an LLM judge's reference, an HF
        `evaluate` metric's references). Default: the `answers` kind, else the `label`; a task whose
        gold is shaped otherwise says how to read it by overriding this."""
        answers = gold.get("answers")
        if answers:
            return [str(answer) for answer in cast("Iterable[object]", answers)]
        return [str(gold["label"])] if gold.get("label") is not None else []

    def config(self) -> JsonObject:
        plots = {"plot_keys": list(plot_keys(self))} if plot_keys(self) else {}
        return {"name": self.name, "data_path": str(self.data_path) if self.data_path else None, **self.args, **plots}


def _refuse_prompting(owner: str, names: Iterable[str]) -> None:
    """A TypeError naming the move when a task defines or sets what is its `prompting`'s."""
    moved = sorted(PROMPTING_NAMES.intersection(names))
    if moved:
        raise TypeError(
            f"{owner} defines {', '.join(moved)}: a task's prompting is its `prompting` object "
            "(a ragbench.api.TaskPrompting subclass; docs/changelog.md)"
        )
