"""A `Sequenced` task of any kind (here a plugin's dialogues): its sequences' examples are asked in order, each
continued with the system's answers to the ones before it; one out of its sequence's place is a bad record; --limit
keeps a cut sequence's first examples; a pilot runs a drawn example's earlier ones too."""

from __future__ import annotations

from dataclasses import replace

from ragbench._run.sequences import InOrder, drawn
from ragbench.api import Example, Task, TaskPrompting, TaskScoring
from ragbench.testing import ScriptedLLM, run_eval
from support.helpers import samples

# (id, dialogue or None, question), in the task's order: d1's last turn comes after d2's, out of its place
RECORDS = [
    ("d1-0", "d1", "hello"),
    ("d1-1", "d1", "and then"),
    ("alone", None, "by itself"),
    ("d2-0", "d2", "hi"),
    ("d2-1", "d2", "more"),
    ("d1-2", "d1", "late"),
]


class AskQuestion(TaskPrompting):
    def build_prompt(self, example, docs=None, **options):
        return example.question


class Dialogues(Task):
    name = "dialogues"
    scoring = TaskScoring(metrics=("match",))
    prompting = AskQuestion()

    def examples(self):
        for index, (key, dialogue, question) in enumerate(RECORDS):
            yield Example(id=key, question=question, gold={"answers": ["x"]}, meta={"dialogue": dialogue}, index=index)

    def sequence(self, example):
        return example.meta["dialogue"]

    def continued(self, example, answers):
        return replace(example, question=f"{example.question} after [{'; '.join(answers)}]")


def reply(request) -> str:
    return f"<{request.prompt.split(' after ')[0].split()[-1]}>"  # the question's last word, before what it continues


def asked(run_dir) -> dict[str, str]:
    return {s.get("id"): s.get("question") for s in samples(run_dir, "dialogues")}


def test_a_plugins_dialogues_are_asked_in_order_with_their_own_answers(tmp_path):
    run_eval(Dialogues, "closed_book", ScriptedLLM(reply), output=tmp_path / "run", max_inflight=4)
    assert asked(tmp_path / "run") == {
        "d1-0": "hello after []",
        "d1-1": "and then after [<hello>]",
        "alone": "by itself",
        "d2-0": "hi after []",
        "d2-1": "more after [<hi>]",
        None: None,  # d1-2, a bad record
    }
    late = next(s for s in samples(tmp_path / "run", "dialogues") if s["index"] == 5)
    assert late["error"] == (
        "bad record: dialogues:6 field 'sequence': example 'd1-2' of sequence 'd1' comes after another sequence's "
        "examples (a sequence's examples must come together, in order)"
    )


def test_the_limit_keeps_the_first_examples_of_a_sequence_it_cuts(tmp_path):
    run_eval(Dialogues, "closed_book", ScriptedLLM(reply), output=tmp_path / "run", limit=2)
    assert asked(tmp_path / "run") == {"d1-0": "hello after []", "d1-1": "and then after [<hello>]"}


def test_a_pilot_runs_a_drawn_example_of_a_sequence_with_the_ones_before_it():
    planned = type("Planned", (), {"name": "dialogues"})()
    examples = [Example(id=f"d{i}", question="q", index=i) for i in range(4)]
    work = [InOrder(planned, "d", list(enumerate(examples)), []), (planned, 7, examples[0])]
    kept = list(drawn(iter(work), {"dialogues": frozenset({1, 7})}))
    assert [(type(e).__name__, [p for p, _ in e.records] if isinstance(e, InOrder) else e[1]) for e in kept] == [
        ("InOrder", [0, 1]),
        ("tuple", 7),
    ]
    assert list(drawn(iter(work[:1]), {"dialogues": frozenset({9})})) == []


class NumberedDialogue(Dialogues):
    """One dialogue whose example ids are numbers (a plugin's task may give ids of any type)."""

    def examples(self):
        for index, question in enumerate(["hello", "then", "more"]):
            yield Example(id=index, question=question, gold={"answers": ["x"]}, meta={"dialogue": "d"}, index=index)


def test_a_resume_reads_the_saved_answers_of_a_sequence_whose_ids_are_not_text(tmp_path):
    def failing(request) -> str:
        if request.prompt.startswith("then"):
            raise RuntimeError("no answer")
        return reply(request)

    run_eval(NumberedDialogue, "closed_book", ScriptedLLM(failing), output=tmp_path / "run")
    run_eval(NumberedDialogue, "closed_book", ScriptedLLM(reply), output=tmp_path / "run", resume=True)
    last = {s["id"]: s for s in samples(tmp_path / "run", "dialogues")}
    assert {key: (s["question"], s["error"]) for key, s in last.items()} == {
        0: ("hello after []", None),
        1: ("then after [<hello>]", None),
        2: ("more after [<hello>; <then>]", None),
    }
