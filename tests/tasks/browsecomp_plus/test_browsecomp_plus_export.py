"""`ragbench export browsecomp-plus RUN` writes BrowseComp-Plus's leaderboard files from a finished run: the agent
submission equals evaluate_run.py's own summary of the same run folder (tests/data/browsecomp_plus/parity/
expected.json); the retrieval-only submission's values are what trec_eval itself prints for the run.trec it writes
beside it (trec_eval 10.0-rc3, built from usnistgov/trec_eval: the EXPECTED_* values below); each query's run file
is in the README's format. `ragbench export trec` writes any run's retrieval as a TREC run file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_browsecomp_plus_retrieval import corpus_index  # noqa: F401 (a fixture)
from test_browsecomp_plus_task import PARITY, SAMPLE, run_folder

from ragbench.api.retrieval import read_trec_run
from support.helpers import cli_here, run

JUDGE = "scripted:support.browsecomp_plus_fake_judge:reply"
# `trec_eval -c -m recall.5,100,1000 -m ndcg_cut.10` of the agent run's run.trec against the sample's
# topics-qrels/qrel_evidence.txt and qrel_golds.txt, worked out as trec_eval computes them (pytrec_eval, its C code,
# agrees): each query's hits are 101 and 103 (BM25 1.88, 0.94), the only documents that hold a word of the search
# "lighthouse comet society". Evidence: query 11 finds 2 of its 3 (recall 2/3, nDCG (1 + 1/log2 3) / (1 + 1/log2 3
# + 1/2) = 0.7654), 12 and 13 none: means 0.2222, 0.2551. Gold: 11's 103 at rank 2 (recall 1, nDCG 1/log2 3 =
# 0.6309), 12 and 13 none: 0.3333, 0.2103.
EXPECTED_EVIDENCE = {"nDCG@10": 0.2551, "Recall@5": 0.2222, "Recall@100": 0.2222, "Recall@1000": 0.2222}
EXPECTED_GOLD = {"nDCG@10": 0.2103, "Recall@5": 0.3333, "Recall@100": 0.3333, "Recall@1000": 0.3333}


def exported(run_dir: Path, *options: str) -> tuple[Path, str]:
    done = cli_here("export", "browsecomp-plus", str(run_dir), *options)
    assert done.returncode == 0, done.stderr
    return run_dir.parent / f"{run_dir.name}__browsecomp_plus", done.stdout


def test_the_agent_submission_is_evaluate_runs_summary_of_the_same_run(tmp_path):
    run(
        tmp_path,
        tasks=["browsecomp_plus"],
        data={"browsecomp_plus": str(PARITY)},
        system="recorded",
        system_args={"path": str(run_folder(tmp_path))},
        judges=[JUDGE],
    )
    folder, said = exported(tmp_path / "run")
    ours = json.loads((folder / "evaluation_summary.json").read_text())
    theirs = json.loads((PARITY / "expected.json").read_text())["summary"]
    assert ours.pop("Evaluation Date") == json.loads((tmp_path / "run" / "results.json").read_text())["date"][:10]
    assert list(ours) == [key for key in theirs if key != "Evaluation Date"]  # the script's fields, in its order
    order = [entry["query_id"] for entry in ours["per_query_metrics"]]
    ours["per_query_metrics"].sort(key=lambda entry: entry["query_id"])
    theirs["per_query_metrics"].sort(key=lambda entry: entry["query_id"])
    assert ours == theirs  # the LLM from the run files' metadata.model, as the script reads it
    assert order == sorted(order, key=int)  # the run's example order (the script's is the file system's)
    assert "no retrieval submission: of the run's examples, 320 do not say which documents they showed" in said


def agent_run(tmp_path: Path, index: Path, name: str = "run", **options) -> Path:
    """search_agent over the sample checkout with a scripted model: one search of the question's first words, then
    an answer naming the first hit; judged by the fake judge."""
    rules = tmp_path / "rules.json"
    rules.write_text(
        json.dumps(
            [
                {
                    "pattern": '"docid"',
                    "response": "Explanation: [101]\nExact Answer: Brisk Astronomical Society\nConfidence: 70%",
                },
                {
                    "pattern": "Question: ",
                    "response": {
                        "tool_calls": [
                            {"id": "c1", "name": "search", "arguments": {"query": "lighthouse comet society"}}
                        ]
                    },
                },
            ]
        )
    )
    run(
        tmp_path,
        name=name,
        tasks=["browsecomp_plus"],
        data={"browsecomp_plus": str(SAMPLE)},
        system="search_agent",
        system_args={"snippet_max_tokens": 0},
        model=f"scripted:{rules}",
        retriever="bm25",
        retriever_args={"index": str(index)},
        judges=[JUDGE],
        **options,
    )
    return tmp_path / name


def test_an_agent_runs_retrieval_submission_is_what_trec_eval_prints_for_its_run_file(tmp_path, corpus_index):
    pytest.importorskip("pytrec_eval")
    folder, _ = exported(agent_run(tmp_path, corpus_index), "--link", "https://example.org/paper")
    retrieval = json.loads((folder / "retrieval_summary.json").read_text())
    assert retrieval.pop("Evaluation Date")
    assert retrieval == {
        "Retriever": "bm25",
        **{f"Evidence {key}": value for key, value in EXPECTED_EVIDENCE.items()},
        **{f"Gold {key}": value for key, value in EXPECTED_GOLD.items()},
        "Link": "https://example.org/paper",
    }
    assert set(read_trec_run(folder / "run.trec")) == {"11", "12", "13"}
    query = json.loads((folder / "runs" / "11.json").read_text())
    assert {key: query[key] for key in ("query_id", "status", "tool_call_counts")} == {
        "query_id": "11",
        "status": "completed",
        "tool_call_counts": {"search": 1},
    }
    assert query["result"][-1] == {
        "type": "output_text",
        "tool_name": None,
        "arguments": None,
        "output": "Explanation: [101]\nExact Answer: Brisk Astronomical Society\nConfidence: 70%",
    }
    assert query["metadata"]["model"].endswith("rules.json")


def test_a_partial_run_counts_the_qrels_queries_it_lacks_as_zero_and_says_so(tmp_path, corpus_index):
    pytest.importorskip("pytrec_eval")
    folder, said = exported(agent_run(tmp_path, corpus_index, limit=1))
    retrieval = json.loads((folder / "retrieval_summary.json").read_text())
    assert "2 of the evidence qrels' 3 queries have no ranking in the run" in said
    assert retrieval["Evidence Recall@5"] == 0.2222  # query 11's 2/3 over the qrels' 3 queries, as trec_eval -c


def test_a_run_with_failed_examples_or_an_earlier_export_is_refused_in_one_line(tmp_path, corpus_index):
    run_dir = agent_run(tmp_path, corpus_index)
    results = json.loads((run_dir / "results.json").read_text())
    exported(run_dir)
    again = cli_here("export", "browsecomp-plus", str(run_dir))
    assert again.returncode == 2
    assert again.stderr.strip().splitlines() == [
        f"ragbench: error: export browsecomp-plus: {run_dir}__browsecomp_plus is not empty: give --overwrite, or "
        "another --output"
    ]
    results["counts"]["browsecomp_plus"]["failed"] = 1
    (run_dir / "results.json").write_text(json.dumps(results))
    failed = cli_here("export", "browsecomp-plus", str(run_dir), "--overwrite")
    assert failed.returncode == 2
    assert failed.stderr.strip().splitlines() == [
        f"ragbench: error: export browsecomp-plus: 1 example(s) of {run_dir} failed or are missing, and a submission "
        f"counts every query: finish them with `ragbench ... --resume --output {run_dir}`"
    ]


def test_an_export_never_writes_through_a_symbolic_link_into_a_users_folder(tmp_path, corpus_index):
    run_dir = agent_run(tmp_path, corpus_index)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "11.json").write_text("the user's", encoding="utf-8")
    out = tmp_path / "export"
    out.mkdir()
    (out / "runs").symlink_to(mine)
    for where in (out, tmp_path / "linked"):
        if where != out:
            where.symlink_to(mine)
        done = cli_here("export", "browsecomp-plus", str(run_dir), "--output", str(where), "--overwrite")
        assert done.returncode == 2 and "is a symbolic link, which ragbench never writes through" in done.stderr
    assert [p.name for p in mine.iterdir()] == ["11.json"] and (mine / "11.json").read_text() == "the user's"


def test_export_trec_writes_any_runs_retrieval(tmp_path, corpus_index):
    run_dir = agent_run(tmp_path, corpus_index, name="my run")
    done = cli_here("export", "trec", str(run_dir), "--output", str(tmp_path / "agent.trec"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"TREC run file: {tmp_path / 'agent.trec'} (")
    lines = (tmp_path / "agent.trec").read_text().splitlines()
    assert lines[0].split()[0] == "11" and all(line.endswith(" my_run") for line in lines)  # the folder's name
    refused = cli_here("export", "trec", str(run_dir), "--output", str(tmp_path / "agent.trec"))
    assert refused.returncode == 2 and "exists: give --overwrite" in refused.stderr
