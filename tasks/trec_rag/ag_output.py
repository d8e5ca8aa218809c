"""The TREC RAG generation tasks' answer format (the AG/RAG submission JSONL, trec-rag.github.io's 2024 and 2025
track guidelines; ragnarok's rag24_validation.py checks it): per topic, the `references` (segment docids, ranked)
and the `answer`, a list of sentences `{"text", "citations"}` whose citations are 0-based indices into the
references (2025's format 2: the cited docids themselves, also read).

- 2024: `{"run_id", "topic_id", "topic", "references", "response_length", "answer"}`; `response_length` is
  rag24_validation's count: the words (str.split) of each sentence's NFKC-normalised, stripped text.
- 2025 (format 1): `{"metadata": {"team_id", "run_id", "type", "narrative_id", "narrative"}, "references",
  "answer"}`, and the optional `metadata.prompt` (what rag25_validation warns of where it is missing): the prompt
  the system sent, as ragnarok's writer records it (its chat messages, or the text of a completion prompt).

A ragbench answer cites the documents it was shown as "[n]" (1-based, ALCE's markers): `sentences` splits it
with `sent_tokenize` and maps each sentence's numbers to reference indices; `recorded_output` writes a
submission's sentences back as such an answer, the markers before each sentence's full stop.
"""

from __future__ import annotations

import copy
import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

from ragbench.api import RecordError
from ragbench.api.data import JsonObject, JsonValue, given_values
from ragbench.api.text import cited_numbers, cited_sentences, sent_tokenize

from .rag25_checks import rag25_findings
from .submitted_topics import REFUSED_2025, TWICE, WORDS

END = re.compile(r"[.!?]+$")


class Sentence(TypedDict):
    """One sentence of a submission's answer: its text and the references it cites (0-based indices)."""

    text: str
    citations: list[int]


class Submission2024(TypedDict):
    run_id: str
    topic_id: str
    topic: str
    references: list[str]
    response_length: int
    answer: list[Sentence]


class Metadata2025(TypedDict):
    team_id: str
    run_id: str
    type: str
    narrative_id: str
    narrative: str


class PromptedMetadata2025(Metadata2025, total=False):
    prompt: JsonValue  # the system's prompt, where its run recorded it


class Submission2025(TypedDict):
    metadata: PromptedMetadata2025
    references: list[str]
    answer: list[Sentence]


def response_length(answer: list[Sentence]) -> int:
    """rag24_validation.compute_rag24_response_length."""
    return sum(len(unicodedata.normalize("NFKC", str(sentence["text"]).strip()).split()) for sentence in answer)


def sentences(answer: str, shown: int) -> tuple[list[Sentence], int]:
    """The answer's sentences as `{"text", "citations"}` (each cited number once, in order, 0-based) and how many
    citations named no document shown (left out)."""
    cited, dropped = cited_sentences(answer, shown)
    return [{"text": text, "citations": citations} for text, citations in cited], dropped


def citing_twice(answer: str) -> int:
    """How many of the answer's sentences cite one document twice ("[1][1]"), which rag24_validation warns of."""
    return sum(len(set(numbers)) != len(numbers) for numbers in map(cited_numbers, sent_tokenize(answer)))


def submission(
    year: int,
    topic_id: str,
    topic: str,
    references: list[str],
    answer: list[Sentence],
    run_id: str,
    team_id: str,
    prompt: JsonValue = None,
) -> Submission2024 | Submission2025:
    """One topic's line of a `year` (2024 or 2025) submission; 2025's `metadata.prompt` where `prompt` is given."""
    if year == 2024:
        return {
            "run_id": run_id,
            "topic_id": topic_id,
            "topic": topic,
            "references": references,
            "response_length": response_length(answer),
            "answer": answer,
        }
    metadata: PromptedMetadata2025 = {
        "team_id": team_id,
        "run_id": run_id,
        "type": "automatic",
        "narrative_id": topic_id,
        "narrative": topic,
    }
    if prompt is not None:
        metadata["prompt"] = prompt
    return {"metadata": metadata, "references": references, "answer": answer}


def system_prompt(trace: Sequence[Any]) -> JsonValue:
    """The prompt of the system's last model call in its trace (the call its answer came from): the chat's messages
    (`{"role", "content"}`, as sent) or a completion's prompt text; None where the trace holds no such call (an
    answer scored from a file, a run written without its texts)."""
    for step in reversed(trace):
        request = step.request if step.kind == "llm" else None
        sent: JsonValue = request.get("messages") or request.get("prompt") if isinstance(request, dict) else None
        if isinstance(sent, (list, str)):
            return copy.deepcopy(sent)
    return None


def recorded_output(answer: list[Any], references: list[str]) -> str:
    """A submission's sentences as a ragbench answer: each sentence's text with "[n]" markers (1-based) before its
    closing punctuation. A citation that is neither an index into `references` nor one of its docids is a
    ValueError."""
    parts = []
    for sentence in answer:
        if not isinstance(sentence, dict) or not isinstance(sentence.get("text"), str):
            raise ValueError('an answer sentence is not {"text", "citations"}')
        cited = script_order(sentence.get("citations") or [])
        marks = "".join(f"[{reference_index(cite, references) + 1}]" for cite in cited)
        text = sentence["text"].strip()
        end = END.search(text)
        body, stop = (text[: end.start()], end.group()) if end else (text, "")
        parts.append(f"{body} {marks}{stop}" if marks else text)
    return " ".join(parts)


def script_order(citations: Any) -> Any:
    """A sentence's citations in the order TREC 2025's support script judges them: {docid: score} sorted by score,
    highest first (Python's stable sort: equal scores keep their written order); a list as written. Scores that
    do not compare (the script stops there) are a ValueError."""
    if not isinstance(citations, dict):
        return citations
    try:
        return [docid for docid, _ in sorted(citations.items(), key=lambda item: item[1], reverse=True)]
    except TypeError as exc:
        raise ValueError(f"citation scores {list(citations.values())!r} do not compare: {exc}") from exc


def reference_index(cite: Any, references: list[str]) -> int:
    if isinstance(cite, int) and not isinstance(cite, bool) and 0 <= cite < len(references):
        return cite
    if isinstance(cite, str) and cite in references:
        return references.index(cite)
    raise ValueError(f"citation {cite!r} is neither an index into the {len(references)} references nor one of them")


def submission_record(line: Mapping[str, object]) -> JsonObject:
    """One submission line (2024 or 2025 format) as a `ragbench score` record `{"id", "output", "docs", "extras"}`,
    its extras what ragnarok's rag24_validation counts (its words and its sentences citing a reference twice) and,
    for a 2025 line, the errors rag25_validation finds in it."""
    given = line.get("metadata")
    metadata = given if isinstance(given, dict) else {}
    topic_id = line.get("topic_id", metadata.get("narrative_id"))
    references, answer = line.get("references"), line.get("answer")
    if topic_id is None or not isinstance(references, list) or not isinstance(answer, list):
        raise ValueError('expected "topic_id" (or "metadata": {"narrative_id"}), "references" and "answer"')
    if not all(isinstance(ref, str) for ref in references):
        raise ValueError('"references" holds a value that is not a docid string')
    output = recorded_output(answer, references)  # checks each sentence and citation
    twice = sum(len(cites) != len(set(cites)) for cites in (s.get("citations") or [] for s in answer))
    extras: JsonObject = {WORDS: response_length(answer), TWICE: twice}
    if isinstance(given, dict):  # a 2025 line: what rag25_validation refuses in it (its topic is checked apart)
        refused: list[JsonValue] = [*rag25_findings(line)[0]]
        extras[REFUSED_2025] = refused
    return {"id": str(topic_id), "output": output, "docs": [{"id": ref} for ref in references], "extras": extras}


def submission_records(folder: Path) -> Iterator[tuple[int, JsonObject | RecordError]]:
    """Every line of the folder's *.jsonl submission files, in name order, as `ragbench score` records; a line that
    is not UTF-8, not JSON or not a submission line is a RecordError naming it."""
    index = 0
    for path in sorted(folder.glob("*.jsonl")):
        for line, value in given_values(path, "a TREC RAG submission file (JSONL)"):
            try:
                if not isinstance(value, (dict, RecordError)):  # a RecordError: not UTF-8, not JSON, nested too deeply
                    raise ValueError("expected a JSON object")
                yield index, value if isinstance(value, RecordError) else submission_record(value)
            except ValueError as exc:
                yield index, RecordError(str(path), line + 1, str(exc))
            index += 1
