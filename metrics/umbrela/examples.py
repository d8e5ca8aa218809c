"""UMBRELA's few-shot examples (umbrela 0.0.7's `qrel_utils.generate_examples_prompt`): for each grade 0, 1, 2, 3
in turn, `count` (query, passage) pairs drawn by `random.sample` from the qrels' pairs of that grade (in the qrels'
order), each shown as umbrela writes it: its query (the topic's text), its passage and `##final score: G`.

umbrela reads the qrels as pyserini does (`topic iteration docid grade`, a pair judged again keeping its first
place and its last grade) and draws from Python's `random` unseeded; here a `random.Random(seed)` draws, which is
umbrela's draw after `random.seed(seed)`. Its topics and passages come from pyserini (the MS MARCO topics' titles,
the passage index's `contents`); here from a topics file (`topic_id<TAB>text` a line) and a corpus ragbench reads
(pyserini's JSONL `{"id", "contents"}` among them)."""

from __future__ import annotations

import random
from pathlib import Path

from ragbench.api import ConfigError, Document
from ragbench.api.data import given_text_lines
from ragbench.api.retrieval import read_corpus

GRADES = (0, 1, 2, 3)
# umbrela's f-string: each line indented by its source's 16 spaces
EXAMPLE = "\n{pad}###\n\n{pad}Query: {query}\n{pad}Passage: {passage}\n{pad}##final score: {grade}\n{pad}"
PAD = " " * 16


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """topic -> {docid: grade}, in first-appearance order, the last grade of a pair judged twice."""
    qrels: dict[str, dict[str, int]] = {}
    for number, line in given_text_lines(path, "a UTF-8 text file", "metric umbrela: few_shot_qrels"):
        fields = line.split()
        try:
            topic, _, docid, grade = fields
            qrels.setdefault(topic, {})[docid] = int(grade)
        except ValueError:
            raise ConfigError(
                f"{path}:{number}: expected `topic iteration docid grade` with a whole-number grade; fix the line"
            ) from None
    return qrels


def read_topics(path: Path) -> dict[str, str]:
    topics = {}
    for number, line in given_text_lines(path, "a UTF-8 text file", "metric umbrela: few_shot_topics"):
        topic, tab, text = line.rstrip("\r\n").partition("\t")
        if not tab:
            raise ConfigError(f"{path}:{number}: expected topic_id<TAB>text; fix the line")
        topics[topic] = text
    return topics


def drawn(qrels: dict[str, dict[str, int]], count: int, seed: int) -> list[tuple[str, str, int]]:
    """umbrela's `get_catwise_data`: `count` pairs of each grade 0-3, drawn in that order by one generator."""
    draw = random.Random(seed)
    chosen = []
    for grade in GRADES:
        pairs = [(topic, docid) for topic, judged in qrels.items() for docid, g in judged.items() if g == grade]
        if len(pairs) < count:
            raise ConfigError(
                f"metric umbrela: few_shot_count={count} but the qrels judge {len(pairs)} pair(s) {grade} "
                "(umbrela asserts as many of each grade 0-3); lower few_shot_count"
            )
        chosen += [(topic, docid, grade) for topic, docid in draw.sample(pairs, count)]
    return chosen


def passages(corpus: Path, docids: set[str]) -> dict[str, str]:
    """The text of each wanted docid, from one pass over the corpus."""
    found = {}
    for doc in read_corpus(corpus):
        if isinstance(doc, Document) and doc.id in docids:
            found[str(doc.id)] = doc.text
    return found


def examples_text(qrels: Path, topics: Path, corpus: Path, count: int, seed: int) -> str:
    """umbrela's `prompt_examples` for the few-shot `basic` prompt."""
    chosen = drawn(read_qrels(qrels), count, seed)
    texts = read_topics(topics)
    found = passages(corpus, {docid for _, docid, _ in chosen})
    for topic, docid, _ in chosen:
        if topic not in texts:
            raise ConfigError(f"metric umbrela: few-shot topic {topic} is not in {topics}; name its topics file")
        if docid not in found:
            raise ConfigError(f"metric umbrela: few-shot passage {docid} is not in {corpus}; name its corpus")
    return "".join(
        EXAMPLE.format(pad=PAD, query=texts[topic], passage=found[docid], grade=grade) for topic, docid, grade in chosen
    )
