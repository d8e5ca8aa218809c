"""The `dragun_questions` task: TREC 2025 DRAGUN's Task 1, a ranked list of 10 questions a reader should ask to
judge a news article's trustworthiness; each topic's gold its article, its assessors' rubric and AutoJudge's
few-shot examples per rubric question (question_data.py), scored by `dragun_question_autojudge`.

`--data dragun_questions=DATA` names the resources repository's data/ folder. A system writes the questions one a
line (question_runs.py reads them); a run's questions export to the track's TSV run file (`ragbench export dragun
--task dragun_questions`), and a folder holding one submitted run file (beside the organizer runs AutoJudge takes
its examples from, left out as auto_judge.py leaves them out) is scored as predictions.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragbench.api import RecordError, TaskScoring
from ragbench.api.data import JsonObject

from .data import Topic, the_one_run
from .question_data import EXAMPLE_RUNS, question_examples
from .question_runs import MOST_QUESTIONS, run_records
from .task import ArticlePrompting, DragunTask

INSTRUCTION = (
    f"Write the {MOST_QUESTIONS} questions a reader should ask, and have answered, to judge the trustworthiness of "
    "the news article below: about its source, its author and its claims. Rank them, the most important first; "
    "each question asks one thing. Write one question a line, numbered, and nothing else."
)


class DragunQuestionPrompting(ArticlePrompting):
    """Task 1's: the questions, after the sources a system shows."""

    instruction, lead, lead_without_sources = INSTRUCTION, "Questions", True


def unscorable(topic: str, rubric: list[Any], examples: dict[int, Any] | None) -> str | None:
    """Why the released scripts stop at this topic: a rubric question without short answers (score.py finds its
    weight missing) or without the organizer runs' assessed examples (auto_judge.py: no examples of its rank)."""
    empty = [str(q["question_id"]) for q in rubric if not q["short_answers"]]
    if empty:
        return f"topic {topic}: rubric question(s) {', '.join(empty)} have no short answers (score.py weighs none)"
    ranks = sorted({int(str(q["question_id"]).split("-")[-1]) for q in rubric} - set(examples or {}))
    if ranks:
        return (
            f"topic {topic} has no AutoJudge examples for rubric question rank(s) {', '.join(map(str, ranks))} "
            f"(the human question assessments of the organizer runs {', '.join(EXAMPLE_RUNS)})"
        )
    return None


class DragunQuestions(DragunTask):
    """DRAGUN Task 1: ten ranked questions per news article, searched for by the article's title."""

    name = "dragun_questions"
    prompting = DragunQuestionPrompting()
    scoring = TaskScoring(
        gold_fields=("article", "rubric", "question_examples"), metrics=("dragun_question_autojudge",)
    )
    track = "question"

    def few_shots(self, found: dict[str, Path]) -> dict[str, Any]:
        return question_examples(found["runs"], found["assessments"])

    def topic_gold(self, topic: Topic, rubrics: dict[str, list[Any]], shots: dict[str, Any]) -> dict[str, Any] | str:
        if topic.id not in rubrics:
            return f"topic {topic.id} has no rubric"
        why = unscorable(topic.id, rubrics[topic.id], shots.get(topic.id))
        if why:
            return why
        examples = {str(rank): shown for rank, shown in shots[topic.id].items()}
        return {"article": topic.article, "rubric": rubrics[topic.id], "question_examples": examples}

    def prediction_records(self, folder: Path) -> Iterator[tuple[int, JsonObject | RecordError | str]]:
        """The folder's one run file (any name but the organizer runs') as `ragbench score` records."""
        yield from run_records(the_one_run(folder, EXAMPLE_RUNS, "Task 1"))
