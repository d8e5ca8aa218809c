"""A sequenced task's examples (`Sequenced`: a conversation's turns, each asked with the system's own answers to the
turns before it) as a run reads and runs them: the records of one sequence that must run go to one example worker
together (`InOrder`) and run one after another, while other sequences and records run at once.

Reading (`Sequences`): a sequence's examples come together in the task's stream (one that comes after another
sequence's is a bad record); once one of them runs (not saved yet, failed, or changed since), every later one runs
too, since its question holds that answer; the answers of the ones saved before it are read back from the run
folder's samples (`--resume`), never asked again. Running (`process_step`): each is asked as the task continues it
from the answers before it; after one fails, the later ones are not asked and fail, counted (`--resume` asks them
again)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from .._errors import RecordError
from .._plugin_calls import PluginCall
from .._records import read_samples
from .._storage.rundir import RunDir
from .._task.protocols import Sequenced
from .._types import Example, Prediction
from .example import process_example, sample_record
from .plan.planned_task import PlannedTask
from .plugin_values import Sample, writable_sample
from .services import ExampleServices

Entry = tuple[PlannedTask, int, Example | RecordError]  # a record to do, at its position in the task's stream


@dataclass
class InOrder:
    """The records of sequence `key` to run, in order, each at its position; `answers`: the answers to the
    sequence's examples before the first of them (saved by an earlier attempt), to which each answer given is added;
    `failed`: the id of the example of the sequence that failed (the later ones are not asked)."""

    planned: PlannedTask
    key: str
    records: list[tuple[int, Example]]
    answers: list[str]
    failed: str | None = None

    def up_to(self, positions: frozenset[int]) -> InOrder | None:
        """The records up to the last one at `positions` (a pilot's: the earlier ones hold its question's
        answers), None where none is there."""
        last = max((i for i, (position, _) in enumerate(self.records) if position in positions), default=None)
        return None if last is None else InOrder(self.planned, self.key, self.records[: last + 1], list(self.answers))


Work = Iterator[Entry | InOrder]  # a run's records to do: each alone, or a sequence's in order


@dataclass
class Sequences:
    """A sequenced task's records as the run reads its stream (`checked`, then `runs`, for each record in turn);
    `saved_answers`: the answers of the task's saved samples, by example id, read once where a sequence to run
    begins after saved examples."""

    task: Sequenced
    name: str
    saved_answers: Callable[[], dict[str, str]]
    current: str | None = None  # the sequence being read
    ended: set[str] = field(default_factory=set)
    saved: list[str] = field(default_factory=list)  # ids of its examples passed as saved, in order
    running: bool = False  # one of its examples runs: every later one does too
    _answers: dict[str, str] | None = None

    @classmethod
    def of(cls, planned: PlannedTask, run_dir: RunDir) -> Sequences | None:
        """The reading of a sequenced task; None for any other task (its records are independent)."""
        if not isinstance(planned.task, Sequenced):
            return None
        return cls(planned.task, planned.name, lambda: saved_answers(run_dir, planned.name))

    def checked(self, item: Example | RecordError, position: int) -> Example | RecordError:
        """`item`, or a bad record where it belongs to a sequence whose examples came before another's."""
        if isinstance(item, RecordError):
            return item
        with PluginCall() as call:
            key = self.task.sequence(item)
        if call.failed:
            return RecordError(self.name, position + 1, f"its sequence cannot be told: {call.error}", "sequence")
        if key != self.current:
            if key is not None and key in self.ended:
                return RecordError(
                    self.name,
                    position + 1,
                    f"example {item.id!r} of sequence {key!r} comes after another sequence's examples (a sequence's "
                    "examples must come together, in order)",
                    "sequence",
                )
            if self.current is not None:
                self.ended.add(self.current)
            self.current, self.saved, self.running = key, [], False
        return item

    def runs(self, item: Example | RecordError, needs_run: bool) -> bool:
        """Whether `item` runs: where its checkpoint says so, or an earlier example of its sequence runs."""
        if not isinstance(item, Example) or self.current is None:
            return needs_run
        self.running = self.running or needs_run
        if not self.running:
            self.saved.append(str(item.id))
        return self.running

    def grouped(self, records: Iterator[Entry]) -> Work:
        """`records` (read through `checked` and `runs`) with each sequence's records to run as one `InOrder`."""
        together: InOrder | None = None
        for entry in records:
            planned, position, item = entry
            if isinstance(item, RecordError):
                yield entry
                continue
            key = self.task.sequence(item)
            if together is not None and key != together.key:
                yield together
                together = None
            if key is None:
                yield entry
                continue
            if together is None:
                together = InOrder(planned, key, [], self.answers_before())
            together.records.append((position, item))
        if together is not None:
            yield together

    def answers_before(self) -> list[str]:
        """The saved answers of the current sequence's examples passed so far."""
        if not self.saved:
            return []
        if self._answers is None:
            self._answers = self.saved_answers()
        return [self._answers[example_id] for example_id in self.saved]


def saved_answers(run_dir: RunDir, task: str) -> dict[str, str]:
    """The answer of each finished example saved in the task's samples, by id as text (the last saved counts; a
    checkpoint's keys are ids as text too, and an id of a plugin's task may be no string, or read back as another
    type)."""
    return {
        str(record.id): record.answer
        for record in read_samples(run_dir.sample_path(task), has_text=False)
        if record.error is None and record.id is not None
    }


def steps(entry: Entry | InOrder) -> Iterator[tuple[PlannedTask, int, Example | RecordError, InOrder | None]]:
    """The records of a work entry, in order, each with its sequence (None: a record alone)."""
    if isinstance(entry, InOrder):
        for position, example in entry.records:
            yield entry.planned, position, example, entry
    else:
        yield (*entry, None)


async def process_step(
    planned: PlannedTask, example: Example, services: ExampleServices, position: int, sequence: InOrder
) -> Sample:
    """`example` of `sequence` run as its task continues it from the answers before it, its answer added to them;
    not asked (failed) after one of the sequence failed."""
    task = planned.task
    assert isinstance(task, Sequenced)
    if sequence.failed is None:
        with PluginCall() as call:
            asked = task.continued(example.read_only(), tuple(sequence.answers))
        if not call.failed:
            sample = await process_example(planned, asked, services, position, read_as=example)
            if sample.record.error is None:
                sequence.answers.append(sample.record.answer)
            else:
                sequence.failed = str(example.id)
            return sample
        error, trace = f"the task could not continue it: {call.error}", call.traceback
    else:
        error, trace = (
            f"not asked: example {sequence.failed!r} of its sequence failed (--resume asks it again, then those after it)",
            None,
        )
    sequence.failed = sequence.failed or str(example.id)
    failed = Prediction(example_id=example.id, error=error)
    return writable_sample(sample_record(example, failed, task, index=position, traceback=trace))


def drawn(work: Work, positions: dict[str, frozenset[int]]) -> Work:
    """Those of `work` (the records a mode would run, in its order) at a pilot's drawn positions (`Pilot`); of a
    sequence's records, those up to the last one drawn (the earlier ones' answers are in its question)."""
    for entry in work:
        if isinstance(entry, InOrder):
            kept = entry.up_to(positions[entry.planned.name])
            if kept is not None:
                yield kept
        elif entry[1] in positions[entry[0].name]:
            yield entry
