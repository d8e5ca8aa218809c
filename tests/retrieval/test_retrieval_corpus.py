"""Corpus readers: DPR psgs_w100.tsv and JSONL passages, streamed, bad rows reported and skipped."""

from __future__ import annotations

import dataclasses
import json

import pytest

from conftest import write_jsonl
from ragbench.api import ConfigError, Document, RecordError
from ragbench.api.retrieval import passage_text, read_corpus
from ragbench.testing import installed_registry, load_retriever

# psgs_w100.tsv as DPR ships it: a header, quoted text with doubled inner quotes, plain titles.
DPR_TSV = (
    "id\ttext\ttitle\n"
    '1\t"Aaron Aaron ( or ; ""Ahärôn"") is a prophet, high priest, and the brother of Moses."\tAaron\n'
    '2\t"A text with a\ttab inside its quotes"\tTabbed\n'
    '3\tunquoted text\t"Title, quoted"\n'
)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_dpr_tsv_rows_become_documents_with_csv_unquoting(tmp_path):
    docs = list(read_corpus(write(tmp_path, "psgs_w100.tsv", DPR_TSV)))
    assert docs[0] == Document(
        id="1", title="Aaron", text='Aaron Aaron ( or ; "Ahärôn") is a prophet, high priest, and the brother of Moses.'
    )
    assert docs[1].text == "A text with a\ttab inside its quotes"
    assert (docs[2].text, docs[2].title) == ("unquoted text", "Title, quoted")


def test_dpr_tsv_without_header_reads_id_text_title(tmp_path):
    docs = list(read_corpus(write(tmp_path, "c.tsv", '7\t"text"\ttitle\n')))
    assert docs == [Document(id="7", title="title", text="text")]


def test_dpr_tsv_header_in_another_column_order_is_followed(tmp_path):
    docs = list(read_corpus(write(tmp_path, "c.tsv", "title\tid\ttext\nT\t9\tbody\n")))
    assert docs == [Document(id="9", title="T", text="body")]


def test_dpr_tsv_saved_with_a_bom_and_crlf_reads_its_header_as_the_header(tmp_path):
    path = tmp_path / "psgs.tsv"
    path.write_bytes('\ufeffid\ttext\ttitle\r\n1\t"Paris is the capital."\tFrance\r\n'.encode("utf-8"))
    assert [(d.id, d.title, d.text) for d in read_corpus(path)] == [("1", "France", "Paris is the capital.")]


def test_dpr_tsv_bad_row_is_a_record_error_and_reading_goes_on(tmp_path):
    path = write(tmp_path, "c.tsv", DPR_TSV + '4\tonly two fields\n\tno id\tT\n5\t"fine"\tOK\n')
    items = list(read_corpus(path))
    errors = [item for item in items if isinstance(item, RecordError)]
    assert [e.line for e in errors] == [5, 6]
    assert "expected 3 tab-separated fields (id, text, title), got 2" in str(errors[0])
    assert errors[1].field == "id"
    assert [d.id for d in items if isinstance(d, Document)] == ["1", "2", "3", "5"]


def test_jsonl_pyserini_contents_and_text_schemas(tmp_path):
    path = write_jsonl(
        tmp_path / "c.jsonl",
        [
            {"id": "doc1", "title": "T1", "contents": "pyserini body"},
            {"id": 2, "title": "T2", "text": "text body", "url": "https://example.org/2"},
            {"_id": "beir3", "text": "no title"},
        ],
    )
    assert list(read_corpus(path)) == [
        Document(id="doc1", title="T1", text="pyserini body"),
        Document(id="2", title="T2", text="text body", url="https://example.org/2"),
        Document(id="beir3", title="", text="no title"),
    ]


def test_jsonl_bad_lines_are_record_errors_with_line_and_field(tmp_path):
    path = write_jsonl(
        tmp_path / "c.jsonl",
        [
            {"id": "a", "text": "ok"},
            "{not json",
            {"id": "b"},
            {"text": "no id"},
            {"id": "c", "contents": 5},
            {"id": "d", "text": "ok too"},
            {"id": 7, "text": "a number"},
            {"id": 7.0, "text": "a float"},
            {"id": True, "text": "a boolean"},
        ],
    )
    items = list(read_corpus(path))
    errors = [item for item in items if isinstance(item, RecordError)]
    assert [(e.line, e.field) for e in errors] == [
        (2, None),
        (3, "text"),
        (4, "id"),
        (5, "contents"),
        (8, "id"),
        (9, "id"),
    ]
    assert "passage id 7.0: expected a string or a whole number" in str(errors[4])
    assert [d.id for d in items if isinstance(d, Document)] == ["a", "d", "7"]


def test_missing_corpus_and_unknown_format_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="corpus .*nope.tsv not found"):
        read_corpus(tmp_path / "nope.tsv")
    with pytest.raises(ConfigError, match=r"unknown format '\.csv'.*\.tsv.*\.jsonl"):
        read_corpus(write(tmp_path, "c.csv", "x"))


def test_indexed_text_is_title_newline_text_as_alce_and_llatrieval_encode_it():
    doc = Document(id="1", title="Aaron", text="Aaron is a prophet.")
    assert passage_text(doc) == "Aaron\nAaron is a prophet."
    assert passage_text(doc, with_title=False) == "Aaron is a prophet."
    assert passage_text(Document(id="2", title="", text="untitled")) == "untitled"


# FlashRAG's corpus format: {"id", "contents"}, the title the first line of contents (here quoted, as FlashRAG's
# retriever expects: it strips the quotes off the title, flashrag/retriever/retriever.py)
FLASHRAG = [
    {"id": "0", "contents": '"Olm"\nOlm is a fishing town.\nIt lies on Varn.'},
    {"id": "1", "contents": "Trask\nTrask is a village."},
    {"id": "2", "contents": "\nA passage without a title."},
    {"id": "3", "contents": "One line, no title."},
]


def test_flashrag_contents_give_title_and_text_as_flashrag_splits_them(tmp_path):
    docs = list(read_corpus(write_jsonl(tmp_path / "wiki.jsonl", FLASHRAG)))
    assert [(d.title, d.text) for d in docs] == [
        ("Olm", "Olm is a fishing town.\nIt lies on Varn."),
        ("Trask", "Trask is a village."),
        ("", "A passage without a title."),
        ("", "One line, no title."),
    ]
    assert [d.metadata for d in docs] == [{"title_line": '"Olm"'}, {}, {"title_line": ""}, {}]


def test_a_flashrag_passage_is_indexed_as_its_contents(tmp_path):
    docs = list(read_corpus(write_jsonl(tmp_path / "wiki.jsonl", FLASHRAG)))
    assert [passage_text(d) for d in docs[:2]] == [FLASHRAG[0]["contents"], FLASHRAG[1]["contents"]]
    assert passage_text(docs[0], with_title=False) == "Olm is a fishing town.\nIt lies on Varn."


def test_a_corpus_with_a_title_field_keeps_contents_as_the_text(tmp_path):
    (doc,) = read_corpus(write_jsonl(tmp_path / "c.jsonl", [{"id": "n1", "title": "T", "contents": "first\nsecond"}]))
    assert (doc.title, doc.text, doc.metadata) == ("T", "first\nsecond", {})


def test_an_index_of_a_flashrag_corpus_returns_titles_and_the_written_title_line(tmp_path):
    from ragbench.testing import build_index

    build_index(
        write_jsonl(tmp_path / "wiki.jsonl", FLASHRAG),
        tmp_path / "index",
        "bm25",
        progress=False,
        registry=installed_registry(),
    )
    assert found(tmp_path / "index", "Olm") == Document(
        id="0", title="Olm", text="Olm is a fishing town.\nIt lies on Varn.", metadata={"title_line": '"Olm"'}
    )
    assert found(tmp_path / "index", "Trask") == Document(id="1", title="Trask", text="Trask is a village.")


def found(index, query: str) -> Document:
    """The passage of the index a BM25 search for `query` finds first, as stored (its score left out)."""
    [[first, *_]] = load_retriever("bm25", {"index": str(index)}, registry=installed_registry()).search([query], 1)
    return dataclasses.replace(first, score=None)


def test_a_lines_metadata_object_is_kept_through_the_index(tmp_path):
    from ragbench.testing import build_index

    metadata = {"published_at": "2023-10-02T08:15:00+00:00", "source": "The Varn Courier"}
    path = write_jsonl(
        tmp_path / "c.jsonl",
        [
            {"id": "0#0", "title": "T", "text": "body", "metadata": metadata},
            {"id": "1", "title": "U", "text": "plain"},
            {"id": "2", "text": "bad", "metadata": ["not", "an", "object"]},
        ],
    )
    items = list(read_corpus(path))
    assert items[0] == Document(id="0#0", title="T", text="body", metadata=metadata)
    assert isinstance(items[2], RecordError) and (items[2].line, items[2].field) == (3, "metadata")
    build_index(path, tmp_path / "index", "bm25", progress=False, registry=installed_registry())
    assert found(tmp_path / "index", "body") == items[0] and found(tmp_path / "index", "plain") == items[1]


def test_browsecomp_plus_corpus_lines_are_passages_by_their_docid(tmp_path):
    """Tevatron/browsecomp-plus-corpus as JSONL: {"docid", "text", "url"}; get_document reads it by docid."""
    from ragbench.api.retrieval import CorpusLookup

    line = {"docid": "8712", "text": "Title line\nThe page's text.", "url": "https://example.org/a"}
    path = write(tmp_path, "corpus.jsonl", json.dumps(line) + "\n")
    expected = Document(id="8712", title="", text="Title line\nThe page's text.", url="https://example.org/a")
    assert list(read_corpus(path)) == [expected]
    assert CorpusLookup(path).get("8712") == expected
