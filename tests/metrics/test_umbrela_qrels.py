"""The `umbrela` metric's qrel evaluation (passages=qrels) against castorini's umbrela 0.0.7's own
(`evalute_results_with_qrel`) run unmodified (tests/data/umbrela/umbrela_qrels.json, recorded by
record_umbrela_qrels.py there): every qrels pair of the grades asked judged with umbrela's requests (200 tokens),
each topic's in umbrela's order, the confusion matrix and correct counts per grade it printed, and its four Cohen's
kappas (valid and overall, on the grades and binarised) as the run's corpus keys."""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import TEST_DATA
from ragbench.api import ConfigError, Example, Prediction, SampleRecord
from ragbench.api.engines import RequestError
from ragbench.metrics.umbrela.metric import Umbrela
from ragbench.metrics.umbrela.qrels_eval import GRADES, cell, invalid, kappas
from ragbench.testing import ScriptedLLM, make_context
from support.helpers import run

FIXTURE = json.loads((TEST_DATA / "umbrela" / "umbrela_qrels.json").read_text(encoding="utf-8"))
RUNS = {"".join(map(str, run["judge_cat"])): run for run in FIXTURE["runs"]}


def passage_of(prompt: str) -> str:
    return re.findall(r"Passage: (.*)\n", prompt)[-1]


REPLIES = {passage_of(c["body"]["messages"][-1]["content"]): c["reply"] for r in RUNS.values() for c in r["calls"]}


def answer(request):
    reply = REPLIES[passage_of(request.message_dicts()[-1]["content"])]
    if reply == FIXTURE["bad_request"]:
        raise RequestError("HTTP 400: bad request")
    return reply


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "passages.jsonl"  # pyserini's JSONL, as its MS MARCO passage index holds them
    lines = (json.dumps({"id": docid, "contents": text}) + "\n" for docid, text in FIXTURE["passages"].items())
    path.write_text("".join(lines), encoding="utf-8")
    return path


def topics() -> list[Example]:
    qrels: dict[str, dict[str, int]] = {}
    for topic, docid, grade in FIXTURE["qrels"]:
        qrels.setdefault(topic, {})[docid] = grade
    return [Example(id=t, question=text, gold={"qrels": qrels[t]}) for t, text in FIXTURE["topics"].items()]


def evaluated(metric: Umbrela) -> tuple[dict[str, ScriptedLLM], list[SampleRecord]]:
    """Each topic judged (a judge of its own), and its sample as the run records it (its counted events)."""
    judges, samples = {}, []
    for example in topics():
        judges[example.id] = judge = ScriptedLLM(answer)
        judge.engine.model = "gpt-4o-mini"
        counted: Counter = Counter()
        ctx = make_context("demo", judges=[judge])
        ctx.count = lambda event, counted=counted: counted.update([event])
        scores = asyncio.run(metric.score(example, Prediction(example.id, answer="a"), ctx))
        samples.append(SampleRecord(id=example.id, scores=scores, counted={"umbrela": dict(counted)}))
    return judges, samples


def printed(run: dict, label: str) -> list[float]:
    return [float(v) for v in re.findall(rf"{label}: (\S+)", run["printed"])]


@pytest.mark.parametrize("cat", RUNS)
def test_the_qrels_pairs_are_judged_as_umbrela_evaluates_them_and_the_kappas_are_its(cat, corpus):
    run = RUNS[cat]
    metric = Umbrela(passages="qrels", corpus=str(corpus), judge_cat=cat)
    judges, samples = evaluated(metric)
    for topic, judge in judges.items():
        query = FIXTURE["topics"][topic]
        theirs = [c["body"] for c in run["calls"] if f"Query: {query}\n" in c["body"]["messages"][-1]["content"]]
        assert [r.message_dicts() for r in judge.requests] == [body["messages"] for body in theirs]
        assert [r.sampling.max_tokens for r in judge.requests] == [body["max_tokens"] for body in theirs] != []
    values = kappas(samples, "umbrela")
    valid_kappa, overall_kappa = printed(run, "\nKohen kappa overall")
    valid_binary, overall_binary = printed(run, "Binarized Kohen kappa overall")
    assert values["umbrela_qrels_kappa"] == pytest.approx(overall_kappa, abs=1e-12)
    assert values["umbrela_qrels_kappa_binary"] == pytest.approx(overall_binary, abs=1e-12)
    assert values["umbrela_qrels_valid_kappa"] == pytest.approx(valid_kappa, abs=1e-12)
    assert values["umbrela_qrels_valid_kappa_binary"] == pytest.approx(valid_binary, abs=1e-12)
    assert metric.corpus(samples, 0) == values
    counted = sum((Counter(s.counted["umbrela"]) for s in samples), Counter())
    matrix = [[int(n) for n in row.split()] for row in re.findall(r"\[+([\d ]+)\]", run["printed"])]
    assert [[counted[cell(h, j)] for j in GRADES] for h in GRADES] == matrix
    for grade, right, total in re.findall(r"Stats for (\d)\. Correct judgments count: (\d+)/(\d+)", run["printed"]):
        row = [counted[cell(int(grade), j)] for j in GRADES]
        assert (row[int(grade)], sum(row)) == (int(right), int(total))
    assert sum(counted[invalid(h)] for h in GRADES) == counted["umbrela_invalid"]


def test_the_qrel_evaluation_is_declared_only_where_asked_and_checked_before_the_run(corpus, tmp_path):
    assert Umbrela().declares.corpus_keys == ()
    metric = Umbrela(passages="qrels", corpus=str(corpus))
    assert metric.declares.gold_needs == ("qrels",) and len(metric.declares.corpus_keys) == 4
    assert metric.config()["max_tokens"] == 200 and metric.config()["judge_cat"] == "0123"
    with pytest.raises(ConfigError, match="give corpus with passages=qrels only"):
        Umbrela(corpus=str(corpus))
    with pytest.raises(ConfigError, match="give corpus with passages=qrels only"):
        Umbrela(passages="qrels", corpus=str(corpus), k=3)
    with pytest.raises(ConfigError, match="judge_cat=0124"):
        Umbrela(passages="qrels", corpus=str(corpus), judge_cat="0124")
    with pytest.raises(ConfigError, match="corpus .* not found"):
        Umbrela(passages="qrels", corpus=str(tmp_path / "nowhere.jsonl"))
    with pytest.raises(ConfigError, match="passages=all is not one of shown, qrels"):
        Umbrela(passages="all")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(GRADES), st.sampled_from(GRADES), st.booleans()), max_size=40))
def test_the_kappas_are_those_of_the_pairs_counted_in_any_samples(pairs):
    """Whatever pairs are counted, in however many samples: the kappas are those of the pairs themselves (the valid
    ones without the pairs whose reply held no grade, graded 0)."""
    from ragbench.api import cohen_kappa

    pairs = [(h, 0 if not valid else j, valid) for h, j, valid in pairs]
    samples = []
    for start in range(0, len(pairs), 7):
        counted: Counter = Counter()
        for h, j, valid in pairs[start : start + 7]:
            counted[cell(h, j)] += 1
            counted[invalid(h)] += not valid
        samples.append(SampleRecord(id=str(start), counted={"umbrela": dict(counted)}))
    values = kappas(samples, "umbrela")

    def kappa(chosen, binary):
        f = (lambda g: float(g > 1)) if binary else float
        return cohen_kappa([f(h) for h, _, _ in chosen], [f(j) for _, j, _ in chosen])

    valid = [p for p in pairs if p[2]]
    expected = [kappa(pairs, False), kappa(pairs, True), kappa(valid, False), kappa(valid, True)]
    got = [values[k] for k in ("umbrela_qrels_kappa", "umbrela_qrels_kappa_binary")]
    got += [values[k] for k in ("umbrela_qrels_valid_kappa", "umbrela_qrels_valid_kappa_binary")]
    for value, wanted in zip(got, expected, strict=True):
        assert value == wanted if wanted is None else value == pytest.approx(wanted, abs=1e-12)


def test_a_trec_rag_run_reports_the_kappas_and_the_confusion_counts(corpus, tmp_path):
    """Through a run of trec_rag24 over the fixture's topics and qrels: the kappas are results.json corpus keys, the
    cells counted, and the judge answering as umbrela's fake judge did gives umbrela's overall kappa."""
    topics_file, qrels_file, rules = tmp_path / "topics.tsv", tmp_path / "qrels.txt", tmp_path / "judge.json"
    topics_file.write_text("".join(f"{q}\t{t}\n" for q, t in FIXTURE["topics"].items()), encoding="utf-8")
    qrels_file.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in FIXTURE["qrels"]), encoding="utf-8")
    refused = [{"pattern": re.escape(p), "response": ""} for p, r in REPLIES.items() if r == FIXTURE["bad_request"]]
    replies = [{"pattern": re.escape(p), "response": r} for p, r in REPLIES.items() if r != FIXTURE["bad_request"]]
    rules.write_text(json.dumps(refused + replies), encoding="utf-8")
    (tmp_path / "answers.json").write_text('[{"response": "x"}]', encoding="utf-8")
    results = run(
        tmp_path,
        tasks=["trec_rag24"],
        system="closed_book",
        model=f"scripted:{tmp_path / 'answers.json'}",
        data={"trec_rag24": str(topics_file)},
        task_args={"trec_rag24.qrels": str(qrels_file)},
        metrics=("+umbrela",),
        metric_args={"umbrela.passages": "qrels", "umbrela.corpus": str(corpus)},
        judges=[f"scripted:{rules}"],
    )
    entry = results["details"]["trec_rag24"]["umbrela_qrels_kappa"]
    assert entry["corpus"] is True
    assert entry["value"] == pytest.approx(printed(RUNS["0123"], "\nKohen kappa overall")[1], abs=1e-12)
    counted = results["counted"]["trec_rag24"]["umbrela"]
    assert sum(counted[cell(h, j)]["count"] for h in GRADES for j in GRADES if cell(h, j) in counted) == 24


def test_after_the_preflight_the_corpus_is_read_once_for_every_topic(corpus, monkeypatch):
    from ragbench.metrics import segment_texts

    class Topics:
        def examples(self):
            return iter(topics())

    passes = []
    real = segment_texts.scan
    monkeypatch.setattr(
        segment_texts, "scan", lambda path, wanted, *how: passes.append(wanted) or real(path, wanted, *how)
    )
    metric = Umbrela(passages="qrels", corpus=str(corpus), judge_cat="23")
    metric.preflight(None, Topics())
    evaluated(metric)
    assert passes == [{docid for _, docid, grade in FIXTURE["qrels"] if grade >= 2}]
