"""The `dragun_report` task: TREC 2025 DRAGUN's Task 2, a report of at most 250 words that helps a reader judge a
news article's trustworthiness, citing MS MARCO V2.1 segments; each topic's gold its article, its assessors'
rubric and AutoJudge's two few-shot example reports (data.py), scored by `dragun_autojudge`.

`--data dragun_report=DATA` names the resources repository's data/ folder; systems search an index of the MS
MARCO V2.1 segmented corpus (`ragbench index build --corpus FOLDER_OF_SHARDS`). A run's reports export to the
track's submission format (`ragbench export dragun`), and a folder holding one submitted run file (beside the
organizer runs AutoJudge takes its examples from, which are left out, as auto_judge.py leaves them out) is
scored as predictions (`ragbench score --predictions FOLDER`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from ragbench.api import ConfigError, Document, Example, Prompt, RecordError, Task, TaskPrompting, TaskScoring
from ragbench.api.data import JsonObject
from ragbench.api.text import cited_numbers, sent_tokenize

from ..shared.given_data import given_data
from .data import (
    ASSESSMENT_ORDERS,
    EXAMPLE_RUNS,
    Topic,
    few_shot_examples,
    files,
    read_rubrics,
    read_topics,
    the_one_run,
)
from .submission import run_records

MOST_WORDS = 250  # the track's report length (words split at whitespace, as produce_run.py counts them)
ARTICLE_WORDS = 1000  # the article's words a system is shown (a topic's body runs to 54,000 characters)
INSTRUCTION = (
    "Write a well-attributed report that gives a reader the background and context they need to judge the "
    "trustworthiness of the news article below: its source, its author and its claims."
)


def article_text(article: JsonObject) -> str:
    text = article.get("body", "")
    if not isinstance(text, str):
        raise TypeError(f"the article's body is {type(text).__name__}, not text")
    body = text.split()
    shown = " ".join(body[:ARTICLE_WORDS]) + (" ..." if len(body) > ARTICLE_WORDS else "")
    return f"Title: {article.get('title', '')}\nURL: {article.get('url', '')}\n{shown}"


class ArticlePrompting(TaskPrompting):
    """The task's instruction and the article; sources a system shows follow, numbered [n], then the answer's
    lead (`lead`; without sources only where `lead_without_sources`)."""

    answer_format = "long"
    instruction: ClassVar[str]
    lead: ClassVar[str]
    lead_without_sources: ClassVar[bool]

    def query_text(self, example: Example) -> str:
        return f"{self.instruction}\n\n{article_text(example.gold['article'])}"

    def build_prompt(self, example: Example, docs: list[Document] | None = None, **options: Any) -> Prompt:
        prompt = options.get("question") or self.query_text(example)
        if not docs:
            return f"{prompt}\n\n{self.lead}:" if self.lead_without_sources else str(prompt)
        sources = "\n".join(f"[{n}] {doc.title}: {doc.text}" for n, doc in enumerate(docs, start=1))
        return f"{prompt}\n\nSources:\n{sources}\n\n{self.lead}:"


class DragunPrompting(ArticlePrompting):
    """Task 2's: the report, citing the sources by [n]."""

    instruction, lead, lead_without_sources = INSTRUCTION, "Report", False

    def citations(self, answer: str) -> list[list[int]]:
        return [cited_numbers(statement) for statement in sent_tokenize(answer)]


class DragunTask(Task):
    """What both DRAGUN tasks share: the data folder's files of its `track` (data.files), and an example of each
    topic whose gold `topic_gold` makes, a topic it cannot score the RecordError saying why."""

    own_documents = False
    track: ClassVar[str]  # "report" (Task 2) or "question" (Task 1)

    def _files(self) -> dict[str, Path]:
        where = (
            ", the data/ folder of github.com/trec-dragun/resources with the topics, rubrics and assessments "
            "(docs/benchmarks/dragun.md)"
        )
        return files(given_data(self, "DRAGUN's data", "DATA", where), self.track)

    def prepare(self) -> None:
        self.path = self._files()["topics"]

    def examples(self) -> Iterator[Example | RecordError]:
        found = self._files()
        rubrics, bad = read_rubrics(found["rubrics"])
        yield from bad
        shots = self.few_shots(found)
        index = 0
        for topic in read_topics(found["topics"]):
            if isinstance(topic, RecordError):
                yield topic
                continue
            gold = self.topic_gold(topic, rubrics, shots)
            if isinstance(gold, str):
                yield RecordError(str(found["topics"]), topic.line, gold)
                continue
            yield Example(id=topic.id, question=str(topic.article.get("title", "")), gold=gold, index=index)
            index += 1

    def few_shots(self, found: dict[str, Path]) -> dict[str, Any]:
        """Topic id -> AutoJudge's few-shot examples."""
        raise NotImplementedError

    def topic_gold(self, topic: Topic, rubrics: dict[str, list[Any]], shots: dict[str, Any]) -> dict[str, Any] | str:
        """The topic's gold, or why the topic cannot be scored."""
        raise NotImplementedError


class DragunReport(DragunTask):
    """DRAGUN Task 2: a report per news article, searched for by the article's title."""

    name = "dragun_report"
    prompting = DragunPrompting()
    scoring = TaskScoring(gold_fields=("article", "rubric", "autojudge_examples"), metrics=("dragun_autojudge",))
    track = "report"

    def __init__(self, data_path: str | Path | None = None, assessment_order: str = "upstream") -> None:
        """`assessment_order`: of the few-shot examples' human assessments whose answer ids share a trailing number,
        "upstream" (auto_judge.py's pandas sort) or "file_order" (data.read_assessments)."""
        if assessment_order not in ASSESSMENT_ORDERS:
            raise ConfigError(
                f"task {self.name}: assessment_order={assessment_order} is not one of {', '.join(ASSESSMENT_ORDERS)}"
            )
        super().__init__(data_path, assessment_order=assessment_order)
        self.assessment_order = assessment_order

    def system_defaults(self) -> dict[str, object]:
        """A report system's word limit is the track's 250 words."""
        return {"max_words": MOST_WORDS}

    def few_shots(self, found: dict[str, Path]) -> dict[str, Any]:
        return few_shot_examples(found, self.assessment_order)

    def topic_gold(self, topic: Topic, rubrics: dict[str, list[Any]], shots: dict[str, Any]) -> dict[str, Any] | str:
        missing = [
            what for what, has in (("rubric", rubrics), ("AutoJudge example reports", shots)) if topic.id not in has
        ]
        if missing:
            return (
                f"topic {topic.id} has no {' and no '.join(missing)} (AutoJudge needs its rubric and both "
                f"organizer runs' reports with their human assessments: {', '.join(EXAMPLE_RUNS)})"
            )
        return {"article": topic.article, "rubric": rubrics[topic.id], "autojudge_examples": shots[topic.id]}

    def prediction_records(self, folder: Path) -> Iterator[tuple[int, JsonObject | RecordError | str]]:
        """The folder's one run file (any name but the organizer runs') as `ragbench score` records."""
        yield from run_records(the_one_run(folder, EXAMPLE_RUNS, "Task 2"))
