"""Property: a corpus looked up by id on disk (`CorpusLookup`, what search_agent's get_document reads) answers
every id as a dict built over a full read of the corpus does (`read_corpus`: the last passage with an id wins, a
bad row is no passage), for JSONL and DPR TSV files with any unicode ids and texts, repeated ids, blank, bad and
quoted multi-line rows, a BOM; and it holds no text: the memory it keeps does not grow with the texts."""

from __future__ import annotations

import csv
import io
import json
import tracemalloc
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragbench.api import Document
from ragbench.api.retrieval import CorpusLookup, read_corpus
from ragbench.plugins.search_agent.system import SearchAgent
from ragbench.plugins.search_agent.tools import document_result

IDS = st.one_of(st.sampled_from(["d1", "d2", "é3", "文4", "5", "d1 ", "😀"]), st.text(min_size=1, max_size=6))
TEXTS = st.text(max_size=40)  # any characters: quotes, tabs, \r and \n inside quoted TSV fields, U+2028
PASSAGES = st.lists(st.tuples(IDS, TEXTS, TEXTS), max_size=12)
NOISE = st.lists(st.sampled_from(["", "   ", "not json", "[1, 2]", '{"title": "no id"}', "\t"]), max_size=3)


def jsonl_corpus(passages: list[tuple[str, str, str]], noise: list[str]) -> bytes:
    lines = [json.dumps({"id": i, "title": title, "text": text}, ensure_ascii=False) for i, title, text in passages]
    for position, line in enumerate(noise):
        lines.insert(position * 3 % (len(lines) + 1), line)
    return "\n".join(lines).encode("utf-8")


def tsv_corpus(passages: list[tuple[str, str, str]], noise: list[str], bom: bool) -> bytes:
    out = io.StringIO(newline="")
    writer = csv.writer(out, delimiter="\t")
    writer.writerow(["id", "text", "title"])
    for position, (doc_id, title, text) in enumerate(passages):
        if position < len(noise):
            out.write(noise[position] + "\n")
        writer.writerow([doc_id, text, title])
    return (b"\xef\xbb\xbf" if bom else b"") + out.getvalue().encode("utf-8", "surrogatepass")


def full_read(path: Path) -> dict[str, Document]:
    return {str(doc.id): doc for doc in read_corpus(path) if isinstance(doc, Document)}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(passages=PASSAGES, noise=NOISE, tsv=st.booleans(), bom=st.booleans(), missing=st.lists(IDS, max_size=4))
def test_a_lookup_answers_every_id_as_a_full_read_does(tmp_path_factory, passages, noise, tsv, bom, missing):
    path = tmp_path_factory.mktemp("corpus") / ("psgs.tsv" if tsv else "corpus.jsonl")
    path.write_bytes(tsv_corpus(passages, noise, bom) if tsv else jsonl_corpus(passages, noise))
    everything = full_read(path)
    lookup = CorpusLookup(path)
    assert len(lookup) == sum(1 for doc in read_corpus(path) if isinstance(doc, Document))
    for doc_id in [*everything, *(doc_id for doc_id, _, _ in passages), *missing]:
        assert lookup.get(doc_id) == everything.get(doc_id)


def big_corpus(tmp_path: Path, passages: int, text_bytes: int) -> Path:
    path = tmp_path / "corpus.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        for number in range(passages):
            text = f"document {number} " + "wörds " * (text_bytes // 7)
            handle.write(json.dumps({"id": f"doc-{number}", "title": f"T{number}", "text": text}) + "\n")
    return path


def test_get_document_keeps_no_text_in_memory(tmp_path):
    """search_agent's get_document over a 16 MB corpus: after answering, what stays allocated is a small part
    of the texts (a full read held them all)."""
    path = big_corpus(tmp_path, passages=400, text_bytes=40_000)
    agent = SearchAgent(get_document=True, snippet_max_tokens=0, corpus=str(path))
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        lookup = agent._lookup(None)  # type: ignore[arg-type]  # the corpus option names the file
        assert lookup is not None
        assert json.loads(document_result("doc-399", lookup("doc-399")))["text"].startswith("T399\ndocument 399 ")
        assert "not found" in document_result("doc-400", lookup("doc-400"))
        kept = sum(stat.size_diff for stat in tracemalloc.take_snapshot().compare_to(before, "filename"))
    finally:
        tracemalloc.stop()
    assert path.stat().st_size > 16_000_000
    assert kept < 1_000_000


def test_a_lookup_holds_sixteen_bytes_a_passage(tmp_path):
    lookup = CorpusLookup(big_corpus(tmp_path, passages=50, text_bytes=10_000))
    assert len(lookup) == 50
    assert lookup.nbytes == 16 * 50
