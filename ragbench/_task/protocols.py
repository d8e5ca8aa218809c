"""What one benchmark's task adds to the Task contract: optional protocols, not members of every task.

A task implements a protocol by having its members (or by subclassing it, which gives its defaults);
the run and the systems test for it with `isinstance` and otherwise do without, through the functions
below, so a task that has nothing to do with CRAG's tools or Self-RAG's instructions declares nothing.

  UsesRunResources     the run's worker processes, page caches and shared models (CRAG's page workers)
  UsesTools            services the examples need at run time, started in the run (CRAG's KG API)
  PredictionRecords    a benchmark's own folder of saved outputs, for the `recorded` system (OmniEval)
  StandingInstruction  the task's instruction by its name in Self-RAG's and SMART's TASK_INST
  Demonstration        a worked (question, answer) in the task's answer style (LLatrieval's verifier)
  PlotKeys             metric keys report.md draws per slice value (CRAG)
  SystemDefaults       system options that follow from the task's own options (RGB, BEIR)
  OwnCorpus            the corpus the task ships, searched when the run names no retriever (fictional_multihop)
  Sequenced            examples in ordered sequences, each asked with the system's answers to those before it
                       (CRAG-MM's conversations with `history=own`)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .._types import Example

if TYPE_CHECKING:
    from .._run.lifetime.resources import RunResources

Task = Any  # any ragbench._task.Task (not imported: Task's config reads `plot_keys` from here)


@runtime_checkable
class UsesRunResources(Protocol):
    """A task that works in the run's resources itself (not only through its systems' `ctx.resources`)."""

    def bind(self, resources: RunResources) -> None:
        """Called by the run before anything else (before `examples` and `setup`): the run's worker
        processes, page caches and shared models (ragbench._run.lifetime.resources), which the run closes. A
        task that works in the worker processes names the modules they should import here
        (`resources.workers.warm(...)`), so that they start warm while the engines load."""


@runtime_checkable
class Sequenced(Protocol):
    """A task whose examples form ordered sequences (a conversation's turns) in which a later example shows the
    system's own answers to the earlier ones. The run answers a sequence's examples one after another (different
    sequences run at once), asking each as `continued` makes it from the answers before it, and reads the answers
    of the examples saved already on `--resume`. Where an example of a sequence fails, the later ones are not
    asked: each fails, counted, and `--resume` asks them again."""

    def sequence(self, example: Example) -> str | None:
        """The key of the sequence `example` belongs to; None: it stands alone. A sequence's examples come one after
        another in the task's stream, in their order (one that comes after another sequence's is a bad record)."""
        ...

    def continued(self, example: Example, answers: Sequence[str]) -> Example:
        """`example` as the system is asked it, given the answers (`Prediction.answer`) to the examples of its
        sequence before it, in order (none for the first)."""
        ...


@runtime_checkable
class UsesTools(Protocol):
    """A task whose examples need services started inside the run's event loop. It may also have
    `async teardown()`, which stops them after every example has ended. The run sets its
    `tools_replayed` before `prepare`: True when the tools are answered from a recording (--replay),
    when `setup` is not called and the services the tools would reach need not exist."""

    async def setup(self) -> dict[str, Any]:
        """Start what the task's examples need at run time (e.g. a KG API server and its client); the
        returned tools reach systems as `ctx.tools`."""
        ...


async def stop_tools(task: Task) -> None:
    """The `teardown` of a task that uses tools, where it has one."""
    teardown = getattr(task, "teardown", None)
    if isinstance(task, UsesTools) and teardown is not None:
        await teardown()


@runtime_checkable
class PredictionRecords(Protocol):
    """A benchmark that saves its outputs in a folder of its own."""

    def prediction_records(self, folder: Path) -> Iterator[tuple[int, Any]]:
        """The folder's outputs as `ragbench score` records: (line index, `{"id", "output"[, "docs"]}` or
        a `RecordError`) for the `recorded` system."""
        ...


@runtime_checkable
class PredictionFile(Protocol):
    """A benchmark whose own output file (`ragbench score --predictions FILE`) ragbench reads (CRAG-MM's response.jsonl)."""

    def prediction_file_records(self, path: Path) -> Iterator[tuple[int, Any]] | None:
        """The file's outputs as `ragbench score` records, as `PredictionRecords`' (a record may also give the
        `answer` as the benchmark's evaluation scores it, which the task's post-processing then leaves alone); None
        where the file is not the benchmark's (a JSONL of `{"id", "output"}`, read as any task's)."""
        ...


@runtime_checkable
class StandingInstruction(Protocol):
    """A task with a standing instruction, named in Self-RAG's and SMART's TASK_INST."""

    instruction_key: str | None  # "fever", "arc_c", "asqa"; None: the question is the whole instruction

    def task_input(self, example: Example) -> str:
        """What a system shows under the instruction: the question, with the answer options of a
        multiple-choice task."""
        ...


@runtime_checkable
class Demonstration(Protocol):
    """A task whose prompt shows worked examples."""

    def demonstration(self) -> tuple[str, str] | None:
        """The first worked (question, answer) of its prompt, in the task's own answer style; None: none."""
        ...


@runtime_checkable
class PlotKeys(Protocol):
    """A task whose report draws some metric keys per slice value."""

    plot_keys: tuple[str, ...]


@runtime_checkable
class SystemDefaults(Protocol):
    """A task whose options set defaults of the system's options."""

    def system_defaults(self) -> Mapping[str, object]:
        """Over the task's declared `system_args`, under `--system-arg` (RGB's passage_num is the top_n
        that shows every passage it sampled); an option the run's system does not take is left out."""
        ...


@runtime_checkable
class OwnCorpus(Protocol):
    """An open-domain task that ships the corpus its questions are answered from: a run that names no
    `--retriever` searches a BM25 index of it (ragbench._run.plan.task_corpus), so it needs nothing but the task."""

    corpus: Path  # a passage file `ragbench index build` reads (JSONL {id, title, text}, DPR TSV)


def task_corpus(task: Task) -> Path | None:
    """The corpus the task ships; None when it ships none."""
    return Path(task.corpus) if isinstance(task, OwnCorpus) else None


def task_input(task: Task, example: Example) -> str:
    """What a system shows under the task's standing instruction; `prompting.query_text` for a task without one."""
    return task.task_input(example) if isinstance(task, StandingInstruction) else task.prompting.query_text(example)


def instruction_key(task: Task) -> str | None:
    """The task's standing instruction by its TASK_INST name; None: the question is the whole instruction."""
    return task.instruction_key if isinstance(task, StandingInstruction) else None


def closed_answer(task: Task) -> bool:
    """Answers come from a fixed set (choices, labels): Self-RAG's and SMART's closed tasks."""
    return task.prompting.answer_format in ("choice", "label")


def task_demonstration(task: Task) -> tuple[str, str] | None:
    """The task's first worked (question, answer); None when it has none."""
    return task.demonstration() if isinstance(task, Demonstration) else None


def plot_keys(task: Task) -> tuple[str, ...]:
    return tuple(task.plot_keys) if isinstance(task, PlotKeys) else ()


def system_defaults(task: Task) -> dict[str, object]:
    return dict(task.system_defaults()) if isinstance(task, SystemDefaults) else {}
