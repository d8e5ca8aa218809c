"""The `trec_rag24` and `trec_rag25` tasks: TREC RAG's topics (data.py) over an index of the MS MARCO V2.1
segmented corpus (`ragbench index build --corpus FOLDER_OF_SHARDS`), each topic's gold its graded qrels.

`--data trec_rag24=TOPICS` names the topics file as released and `--task-arg trec_rag24.qrels=QRELS` the qrels
(UMBRELA's or NIST's). As `trec_eval -c` averages over the qrels' topics, the examples are the topics that the
qrels judge, in the topics file's order; a judged topic missing from the topics file is a counted bad record.
A run's answers export to the track's submission format (`ragbench export trec-rag`, ag_output.py), and a
folder of submission files is scored as predictions (`ragbench score --predictions FOLDER`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragbench.api import (
    ConfigError,
    Document,
    Example,
    Preflight,
    Prompt,
    RecordError,
    Task,
    TaskPrompting,
    TaskScoring,
)
from ragbench.api.data import JsonObject
from ragbench.api.text import cited_numbers, sent_tokenize

from ..shared.given_data import given_data
from .ag_output import submission_records
from .data import read_qrels, read_topics
from .metric import DEPTH
from .submitted_topics import MISSING_TOPICS, MOST_WORDS, read_as_castorini

# ragnarok's ragnarok_v4 template (castorini/ragnarok 7233fa7): its system message and instruction; the contexts
# as its convert_doc_to_prompt_content shows a segment ("Title: ... Content: ...", one line, "[n]" in it as "(n)")
CITED = re.compile(r"\[(\d+)\]")  # a number in brackets in a segment, shown as (n): no citation marker
SYSTEM = (
    "This is a chat between a user and an artificial intelligence assistant. The assistant gives helpful and "
    "detailed answers to the user's question based on the context references. The assistant should also indicate "
    "when the answer cannot be found in the context references."
)
INSTRUCTION = (
    "Provide a concise, information-dense answer to the question. Your response must not exceed 380 words under "
    "any circumstances. Prioritize the most relevant and impactful information within this strict limit. Ensure "
    "your answer directly addresses the question and maintains coherence throughout. Cite supporting context "
    "documents inline using IEEE format in square brackets []. Include 1-3 citations per sentence, ordered by "
    "decreasing importance. Ensure each sentence has at least one citation. Use multiple sources to provide a "
    "well-rounded answer when possible. If sources contradict each other, acknowledge this and explain the "
    "discrepancy. Express uncertainty when appropriate rather than making unfounded claims. Prioritize factual "
    "accuracy and avoid speculation. Focus solely on answering the question with properly cited information. Avoid "
    "mentioning references or providing any meta-commentary about the answering process."
)


def context_line(number: int, doc: Document) -> str:
    content = f"Title: {doc.title} Content: {doc.text}" if doc.title else doc.text
    shown = CITED.sub(r"(\1)", " ".join(content.split()))
    return f"[{number}] {shown}"


class TrecRagPrompting(TaskPrompting):
    """The question over the numbered segments shown; an answer's sentences cite them as [n]."""

    def build_prompt(self, example: Example, docs: list[Document] | None = None, **options: Any) -> Prompt:
        contexts = "\n".join(context_line(i, doc) for i, doc in enumerate(docs or [], start=1))
        question = options.get("question") or example.question
        return f"{SYSTEM}\n\n{INSTRUCTION}\n\nQuestion: {question}\n\nContexts:\n{contexts}\n\nAnswer:"

    def citations(self, answer: str) -> list[list[int]]:
        return [cited_numbers(statement) for statement in sent_tokenize(answer)]


class TrecRagTask(Task):
    """TREC RAG 2024: the test topics (one-sentence queries), scored on the segments shown by trec_rag_retrieval."""

    name = "trec_rag24"
    prompting = TrecRagPrompting()
    scoring = TaskScoring(gold_fields=("qrels",), metrics=("trec_rag_retrieval",))
    own_documents = False

    def __init__(
        self, data_path: str | Path | None = None, qrels: str | None = None, missing_topics: str = "empty"
    ) -> None:
        if missing_topics not in MISSING_TOPICS:
            raise ConfigError(
                f"task {self.name}: missing_topics={missing_topics} is not one of {', '.join(MISSING_TOPICS)}"
            )
        super().__init__(data_path, qrels=qrels, missing_topics=missing_topics)
        self.qrels_path = Path(qrels) if qrels else None
        self.missing_topics = missing_topics

    def system_defaults(self) -> dict[str, object]:
        """A system shows as many segments as recall@100 scores; a report system's word limit is the track's
        (rag24_validation's 400 words, 2025's too)."""
        return {"top_n": DEPTH, "max_words": MOST_WORDS}

    @property
    def topics_path(self) -> Path:
        where = f" and --task-arg {self.name}.qrels=QRELS (docs/benchmarks/trec-rag.md says where to get them)"
        return given_data(self, "TREC RAG's topics", "TOPICS", where)

    def prepare(self) -> None:
        if self.qrels_path is None:
            raise ConfigError(f"task {self.name} scores against qrels: pass --task-arg {self.name}.qrels=QRELS")
        for what, path in (("topics", self.topics_path), ("qrels", self.qrels_path)):
            if not path.exists():  # what is there but no file: refused by its reader (given_files)
                raise ConfigError(f"task {self.name}: {what} file {path} not found")

    def preflight(self, check: Preflight) -> None:
        """Task.preflight's checks, then nltk's sentence splitting installed: every answer's citations are read by
        its sentences, so without it every example would fail after its model call."""
        super().preflight(check)
        with check.step(f"task {self.name}: nltk's sentence splitting installed"):
            try:
                sent_tokenize("")
            except ConfigError as exc:
                raise ConfigError(
                    f"task {self.name} reads an answer's citations by its sentences, with nltk's Punkt ({exc.__cause__}):"
                    " run `pip install 'ragbench[trec]'`"
                ) from None

    def examples(self) -> Iterator[Example | RecordError]:
        self.prepare()
        assert self.qrels_path is not None
        topics, unread = read_topics(self.topics_path)
        qrels, lines = read_qrels(self.qrels_path)
        judged = [topic for topic in topics if topic in qrels]
        for index, topic in enumerate(judged):
            yield Example(id=topic, question=topics[topic], gold={"qrels": qrels[topic]}, index=index)
        where = f" (its lines {', '.join(str(e.line) for e in unread)} are no topic)" if unread else ""
        for topic in qrels:
            if topic not in topics:
                message = f"topic {topic!r} is judged but not in {self.topics_path}{where}"
                yield RecordError(str(self.qrels_path), lines[topic], message)

    def prediction_records(self, folder: Path) -> Iterator[tuple[int, JsonObject | RecordError | str]]:
        """A folder of the track's submission files (*.jsonl, ag_output.py) as `ragbench score` records, read as
        castorini's tools read it, with notes of what they would say (submitted_topics.py)."""
        judged = [example.id for example in self.examples() if isinstance(example, Example)]
        return read_as_castorini(submission_records(folder), judged, self.missing_topics, self.name)


class TrecRag25Task(TrecRagTask):
    """TREC RAG 2025: the narratives (2-3 sentence topics), scored as 2024's."""

    name = "trec_rag25"
