"""The squad task on a file in SQuAD 1.1's dev-v1.1.json layout (written for these tests)."""

from __future__ import annotations

import json

import pytest

from ragbench.api import ConfigError, Example, RecordError
from ragbench.tasks.selfrag.squad import Squad
from support.helpers import run

DEV = {
    "version": "1.1",
    "data": [
        {
            "title": "Lighthouse_keeping",
            "paragraphs": [
                {
                    "context": "The lighthouse at Cape Verra was lit in 1851 and automated in 1984.",
                    "qas": [
                        {
                            "id": "a1",
                            "question": "When was the Cape Verra lighthouse lit?",
                            "answers": [
                                {"answer_start": 35, "text": "1851"},
                                {"answer_start": 35, "text": "1851"},
                                {"answer_start": 32, "text": "in 1851"},
                            ],
                        },
                        {"id": "a2", "question": "When was it automated?", "answers": []},
                        {"question": "No id here", "answers": [{"answer_start": 0, "text": "x"}]},
                    ],
                }
            ],
        },
        {"title": "Broken", "paragraphs": "not a list"},
        {
            "title": "Tide_mills",
            "paragraphs": [
                {
                    "context": "Tide mills turn with the tide.",
                    "qas": [
                        {
                            "id": "b1",
                            "question": "What turns tide mills?",
                            "answers": [{"answer_start": 17, "text": "the tide"}],
                        }
                    ],
                }
            ],
        },
    ],
}


@pytest.fixture
def dev_file(tmp_path):
    path = tmp_path / "dev-v1.1.json"
    path.write_text(json.dumps(DEV))
    return path


def test_questions_gold_and_bad_records(dev_file):
    items = list(Squad(dev_file).examples())
    good = [i for i in items if isinstance(i, Example)]
    bad = [i for i in items if isinstance(i, RecordError)]
    assert [e.id for e in good] == ["a1", "b1"]
    assert good[0].gold == {"answers": ["1851", "in 1851"]}  # distinct annotator answers, file order
    assert good[0].docs == [] and good[0].meta == {"title": "Lighthouse_keeping"}
    assert len(bad) == 3 and {b.field for b in bad} == {"answers", "qas", "paragraphs"}


def test_passages_context_shows_the_paragraph(dev_file):
    (doc,) = next(iter(Squad(dev_file, passages="context").examples())).docs
    assert doc.title == "Lighthouse keeping" and doc.text.startswith("The lighthouse at Cape Verra")
    with pytest.raises(ConfigError, match="passages"):
        Squad(dev_file, passages="gold")


def test_not_squad_json_is_a_config_error(tmp_path):
    path = tmp_path / "dev.json"
    path.write_text('{"version": "1.1"}')
    with pytest.raises(ConfigError, match="no 'data' list"):
        list(Squad(path).examples())


def test_a_run_counts_bad_records_and_scores_with_match(dev_file, tmp_path):
    results = run(tmp_path, tasks=["squad"], data={"squad": str(dev_file)}, system="closed_book", model="scripted:echo")
    counts = results["counts"]["squad"]
    assert counts["scored"] == 2 and counts["bad_records"] == 3 and not results["complete"]
    # echo answers with the prompt's last line, which holds the question, not the answer
    assert results["results"]["squad"]["match"] == 0.0


def test_an_answer_text_that_is_not_a_string_is_a_bad_record_not_left_out(tmp_path):
    """SQuAD's evaluate-v1.1.py stops on it; leaving it out would score against the other answers alone."""
    dev = {
        "data": [
            {
                "title": "T",
                "paragraphs": [
                    {
                        "context": "c",
                        "qas": [
                            {"id": "n1", "question": "Which year?", "answers": [{"text": 1851}, {"text": "in 1851"}]}
                        ],
                    }
                ],
            }
        ]
    }
    (tmp_path / "dev.json").write_text(json.dumps(dev))
    [bad] = list(Squad(tmp_path / "dev.json").examples())
    assert isinstance(bad, RecordError) and bad.field == "answers" and "not a string" in str(bad)
