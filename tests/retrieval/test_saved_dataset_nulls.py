"""Nulls in a corpus: a saved `datasets` folder holds a null wherever a row has no value for a column (Arrow has
every column, and every field of a struct, in every row), so a null is read as an absent key, at any depth of an
object, in a JSONL line too: a saved folder and the JSONL file of the same records give the same passages (id, title,
text, url, metadata) and the same BM25 results. A null title is no title: with `text`, a passage titled ""; with
`contents`, FlashRAG's rule for a record without a title (its first line is the title)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_saved_dataset_corpus import save, write_jsonl

from conftest import needs
from ragbench.api import Document
from ragbench.api.retrieval import (
    CorpusLookup,
    read_corpus,
)
from ragbench.testing import build_index, installed_registry

pytestmark = needs("datasets")  # not imported while the tests are collected

ABSENT = object()  # a key the record leaves out
TEXTS = st.text(st.characters(exclude_categories=("Cs",)), max_size=20)  # any unicode json writes as UTF-8
WORDS = st.sampled_from(["Paris", "capital", "Tokyo", "Moon", "é文😀", "line\nbreak", '"quoted"\nrest', ""])
STRINGS = st.one_of(WORDS, TEXTS)


def maybe(values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A value, a null, or no key at all."""
    return st.one_of(values, st.none(), st.just(ABSENT))


# a metadata object: any of these keys, each a value of its one type, a null, or left out; nested objects and lists
# with nulls inside (one type a key, as a table column has)
METADATA = st.one_of(
    st.none(),
    st.just(ABSENT),
    st.fixed_dictionaries(
        {},
        optional={
            "source": st.one_of(STRINGS, st.none()),
            "year": st.one_of(st.integers(-(2**40), 2**40), st.none()),
            "tags": st.one_of(st.lists(st.one_of(STRINGS, st.none()), max_size=3), st.none()),
            "nested": st.one_of(
                st.fixed_dictionaries(
                    {}, optional={"a": st.one_of(st.integers(0, 9), st.none()), "b": st.one_of(STRINGS, st.none())}
                ),
                st.none(),
            ),
            "spans": st.lists(st.fixed_dictionaries({}, optional={"start": st.integers(0, 9), "label": STRINGS})),
        },
    ),
)
RECORD = st.fixed_dictionaries(
    {
        "title": maybe(STRINGS),
        "body": STRINGS,
        "url": maybe(STRINGS),
        "wikipedia_id": maybe(STRINGS),
        "metadata": METADATA,
    }
)


@st.composite
def corpora(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Records of one corpus: ids of one type, the text under one key (`contents` or `text`), the rest as drawn."""
    field = draw(st.sampled_from(["contents", "text"]))
    numbers = draw(st.booleans())
    drawn = draw(st.lists(RECORD, min_size=1, max_size=8))
    records = []
    for number, record in enumerate(drawn):
        values = {"id": number if numbers else f"d{number}", field: record.pop("body"), **record}
        records.append({key: value for key, value in values.items() if value is not ABSENT})
    return records


def passages(path: Path) -> list[Document]:
    read = list(read_corpus(path))
    assert all(isinstance(item, Document) for item in read), read
    return read  # type: ignore[return-value]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpora())
def test_a_saved_folder_reads_as_the_jsonl_of_the_same_records(records: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder, jsonl = save(Path(tmp) / "saved", records), write_jsonl(Path(tmp) / "corpus.jsonl", records)
        read = passages(jsonl)
        assert passages(folder) == read
        lookup = CorpusLookup(folder)
        assert [lookup.get(doc.id) for doc in read] == read


NULLS = [
    {"id": "1", "title": None, "text": "Paris is the capital of France.", "metadata": {"source": "a", "year": None}},
    {"id": "2", "text": "Tokyo is the capital of Japan.", "metadata": {"year": 2001}},
    {"id": "3", "title": "Moon", "text": "The Moon is Earth's satellite.", "metadata": None, "url": None},
    {"id": "4", "title": None, "contents": "Mars\nMars is the red planet.", "metadata": {"tags": ["x", None]}},
    {"id": "5", "contents": "Venus\nVenus is the hottest planet, near the Moon."},
]


def test_a_null_title_is_no_title_in_a_saved_folder_and_in_jsonl(tmp_path: Path) -> None:
    """Without a title, a `text` passage is titled "" and a `contents` passage gets its first line as title."""
    expected = [
        Document(id="1", title="", text="Paris is the capital of France.", metadata={"source": "a"}),
        Document(id="2", title="", text="Tokyo is the capital of Japan.", metadata={"year": 2001}),
        Document(id="3", title="Moon", text="The Moon is Earth's satellite."),
        Document(id="4", title="Mars", text="Mars is the red planet.", metadata={"tags": ["x", None]}),
        Document(id="5", title="Venus", text="Venus is the hottest planet, near the Moon."),
    ]
    assert passages(write_jsonl(tmp_path / "corpus.jsonl", NULLS)) == expected
    assert passages(save(tmp_path / "saved", NULLS)) == expected
    missing = [{key: value for key, value in r.items() if value is not None} for r in NULLS]  # keys left out
    assert passages(write_jsonl(tmp_path / "missing.jsonl", missing)) == expected


def test_bm25_over_a_saved_folder_with_nulls_answers_as_over_the_jsonl(tmp_path: Path) -> None:
    registry = installed_registry()
    searched = []
    for corpus in (write_jsonl(tmp_path / "corpus.jsonl", NULLS), save(tmp_path / "saved", NULLS)):
        out = tmp_path / f"{corpus.name}.index"
        build_index(corpus, out, "bm25", progress=False, registry=registry)
        retriever = registry.load("retrievers", "bm25")(index=str(out))
        hits = retriever.search(["capital of France", "Moon planet", "Mars red"], k=3)
        searched.append([[(d.id, d.title, d.text, d.metadata, d.score) for d in row] for row in hits])
        retriever.close()
    assert searched[0] == searched[1]
    assert [row[0][0] for row in searched[0]] == ["1", "5", "4"]
