"""`ragbench --tasks alce_asqa --system llatrieval` end to end, offline: a bm25 index built by
`ragbench index build` over a small JSONL corpus, a scripted model from a rules file (one question's
documents pass verification, the others are rejected until the last iteration), ALCE metrics with a
scripted NLI judge."""

from __future__ import annotations

import json

from conftest import TEST_DATA, write_jsonl
from support.helpers import cli_here, cli_run_args, samples

ASQA = TEST_DATA / "alce" / "asqa_eval_gtr_top100.json"
PASSING = "Which is the most rainy place on earth?"

# First match wins; each rule's pattern sees the request's last (user) message.
RULES = [
    {"pattern": r"^premise: ", "response": "1"},  # NLI judge of the citation metric
    {
        "pattern": r"^Instruction: Write an accurate",
        "response": "Mawsynram is the wettest place [1]. It rains a lot [2].",
    },
    {"pattern": r"\nAnswering Passages:\n", "response": "Which places have the highest annual rainfall record?"},
    {"pattern": r"^Summarize the following document", "response": " A summary\nof the   document. "},
    {"pattern": r"\n\n6\nTitle:\n", "response": "Selected Documents: 2, 4, 6, 8, 10"},  # windows show > 5 docs
    {"pattern": "^Question:\n" + PASSING.replace("?", r"\?") + r"\n\nk: 5", "response": "Judgment: [YES]"},
    {"response": "[NO]"},  # every other verification
]


def corpus(path):
    docs = {}
    for record in json.loads(ASQA.read_text(encoding="utf-8")):
        for doc in record["docs"]:
            docs.setdefault(doc["id"], {"id": doc["id"], "title": doc["title"], "contents": doc["text"]})
    filler = [
        {"id": f"f{i}", "title": f"Filler {i}", "contents": f"Rainfall and records of place number {i}."}
        for i in range(10)
    ]
    return write_jsonl(path, list(docs.values()) + filler)


def run_on_bm25_index(tmp_path, system: str):
    """`ragbench index build` over the corpus, then a run of `system` on that index; the run folder."""
    index = tmp_path / "index"
    built = cli_here(
        "index",
        "build",
        "--corpus",
        str(corpus(tmp_path / "corpus.jsonl")),
        "--retriever",
        "bm25",
        "--out",
        str(index),
        "--no-progress",
    )
    assert built.returncode == 0, built.stderr
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps(RULES), encoding="utf-8")
    out = tmp_path / "run"
    result = cli_here(
        *cli_run_args(f"scripted:{rules}", task="alce_asqa", system=system),
        "--retriever",
        "bm25",
        "--retriever-arg",
        f"index={index}",
        "--data",
        f"alce_asqa={ASQA}",
        "--nli",
        f"scripted:{rules}",
        "--output",
        str(out),
        "--no-progress",
    )
    assert result.returncode == 0, result.stderr
    return out


def test_llatrieval_runs_end_to_end_on_a_bm25_index_with_a_scripted_model(tmp_path):
    out = run_on_bm25_index(tmp_path, "llatrieval")
    results = json.loads((out / "results.json").read_text())
    assert results["complete"] and results["counts"]["alce_asqa"]["scored"] == 6
    assert results["results"]["alce_asqa"]["citation_rec"] == 100.0
    stats = results["system_stats"]["alce_asqa"]
    assert stats["examples_per_iteration"] == {"1": 6, "2": 5, "3": 5, "4": 5}
    assert stats["passed_verification_per_iteration"] == {"1": 1, "2": 0, "3": 0} and stats["never_verified"] == 5
    assert "note" not in stats  # a real retriever: updated queries search the corpus

    records = {r["question"]: r for r in samples(out, "alce_asqa")}
    passing, rejected = records[PASSING], records["Where is Lloró?"]
    assert len(passing["prediction"]["extras"]["llatrieval"]["iterations"]) == 1
    iterations = rejected["prediction"]["extras"]["llatrieval"]["iterations"]
    assert [it["query"] for it in iterations] == ["Where is Lloró?"] + [RULES[2]["response"]] * 3
    assert all(it["verification"] == {"method": "judgment", "output": "[NO]", "passed": False} for it in iterations[:3])
    searches = [step for step in rejected["trace"] if step["kind"] == "retrieval"]
    assert [s["request"]["retriever"] for s in searches] == ["bm25"] * 4
    assert rejected["prediction"]["docs"][0]["metadata"]["llatrieval_summary"] == "A summary of the document."
    assert [d["id"] for d in rejected["prediction"]["docs"]] == iterations[-1]["selected"]
    report = (out / "report.md").read_text()
    assert "## System statistics (llatrieval)" in report and "document_candidates_per_example" in report


def test_vanilla_baseline_reads_the_same_bm25_index_when_given_a_retriever(tmp_path):
    out = run_on_bm25_index(tmp_path, "vanilla")
    record = samples(out, "alce_asqa")[0]
    [search] = [step for step in record["trace"] if step["kind"] == "retrieval"]
    assert search["request"] == {"retriever": "bm25", "query": record["question"], "k": 5}
    assert [d["id"] for d in record["prediction"]["docs"]] == search["response"]["ids"]
