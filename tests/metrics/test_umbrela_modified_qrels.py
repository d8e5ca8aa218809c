"""`ragbench export umbrela-qrels` against castorini's umbrela 0.0.7's own `evalute_results_with_qrel(RUN_FILE)` run
unmodified (tests/data/umbrela/umbrela_modified_qrels.json, recorded by record_umbrela_modified_qrels.py there, with
trec_eval 10.0-rc3 computing its nDCG@10): a trec_rag24 run of the `umbrela` metric (passages=qrels) over the same
qrels and judge replies writes umbrela's modified qrels file byte for byte, and reports the run file's nDCG@10 on the
original and the modified qrels as umbrela printed them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import TEST_DATA, needs
from support.helpers import cli_here, run

pytestmark = needs("pytrec_eval")  # not imported while the tests are collected


FIXTURE = json.loads((TEST_DATA / "umbrela" / "umbrela_modified_qrels.json").read_text(encoding="utf-8"))


def judged_run(tmp_path: Path, judge_cat: str) -> tuple[Path, Path]:
    """A finished trec_rag24 run judging the fixture's qrels (the judge answering as umbrela's fake judge did);
    its folder and the qrels file."""
    topics, qrels, rules = tmp_path / "topics.tsv", tmp_path / "qrels.txt", tmp_path / "judge.json"
    corpus, answers = tmp_path / "passages.jsonl", tmp_path / "answers.json"
    topics.write_text("".join(f"{q}\t{t}\n" for q, t in FIXTURE["topics"].items()), encoding="utf-8")
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in FIXTURE["qrels"]), encoding="utf-8")
    lines = (json.dumps({"id": docid, "contents": text}) + "\n" for docid, text in FIXTURE["passages"].items())
    corpus.write_text("".join(lines), encoding="utf-8")
    replies = [
        {"pattern": re.escape(f"Passage: {text}\n"), "response": "" if reply == FIXTURE["bad_request"] else reply}
        for text, reply in FIXTURE["replies"].items()
    ]
    rules.write_text(json.dumps(replies), encoding="utf-8")
    answers.write_text('[{"response": "x"}]', encoding="utf-8")
    results = run(
        tmp_path,
        name=f"run{judge_cat}",
        tasks=["trec_rag24"],
        system="closed_book",
        model=f"scripted:{answers}",
        data={"trec_rag24": str(topics)},
        task_args={"trec_rag24.qrels": str(qrels)},
        metrics=("+umbrela",),
        metric_args={"umbrela.passages": "qrels", "umbrela.corpus": str(corpus), "umbrela.judge_cat": judge_cat},
        judges=[f"scripted:{rules}"],
    )
    judged = sum(1 for _, _, grade in FIXTURE["qrels"] if str(grade) in judge_cat)
    assert {name: cost["calls"] for name, cost in results["judge_cost"]["trec_rag24"].items()} == {"umbrela": judged}
    return tmp_path / f"run{judge_cat}", qrels


@pytest.mark.parametrize("recorded", FIXTURE["runs"], ids=lambda r: "".join(map(str, r["judge_cat"])))
def test_the_modified_qrels_and_the_ndcg_of_a_run_are_umbrelas(recorded, tmp_path):
    run_dir, qrels = judged_run(tmp_path, "".join(map(str, recorded["judge_cat"])))
    run_file, out = tmp_path / "run.txt", tmp_path / "modified.txt"
    run_file.write_text(FIXTURE["run_file"], encoding="utf-8")
    done = cli_here("export", "umbrela-qrels", str(run_dir), "--qrels", str(qrels), "--output", str(out),
                    "--trec-run", str(run_file))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert out.read_text(encoding="utf-8") == recorded["modified_qrels"]
    ndcg = recorded["ndcg_cut_10"]
    assert f"original {ndcg['original']}, modified {ndcg['modified']} (trec_eval -c -l 2 -m ndcg_cut.10)" in done.stdout

    shown = cli_here("export", "umbrela-qrels", str(run_dir), "--qrels", str(qrels), "--output", str(out))
    assert shown.returncode != 0 and f"{out} exists: give --overwrite" in shown.stderr
    shown = cli_here(
        "export", "umbrela-qrels", str(run_dir), "--qrels", str(qrels), "--output", str(out), "--overwrite"
    )
    assert "of the segments the run showed: original 0.0000, modified 0.0000" in shown.stdout  # closed book: none
    mine = tmp_path / "mine.txt"  # --output a link to a file of the user's: the link is replaced, the file kept
    mine.write_text("the user's own\n", encoding="utf-8")
    out.unlink()
    out.symlink_to(mine)
    shown = cli_here(
        "export", "umbrela-qrels", str(run_dir), "--qrels", str(qrels), "--output", str(out), "--overwrite"
    )
    assert shown.returncode == 0 and mine.read_text(encoding="utf-8") == "the user's own\n"
    assert not out.is_symlink() and out.read_text(encoding="utf-8") == recorded["modified_qrels"]


def test_qrels_other_than_the_runs_or_a_run_without_judgments_fail_in_one_line(tmp_path):
    run_dir, qrels = judged_run(tmp_path, "23")
    other = tmp_path / "other.txt"
    lines = qrels.read_text(encoding="utf-8").splitlines()
    grade_two = next(n for n, line in enumerate(lines) if line.endswith(" 2"))
    for changed, message in [
        ([*lines[:grade_two], lines[grade_two][:-1] + "3", *lines[grade_two + 1 :]], "judged qrels other than"),
        ([*lines, f"{FIXTURE['qrels'][0][0]} 0 new-doc 3"], "1 pair(s) of"),
        ([*lines[:2], "1 0 d1", *lines[2:]], ":3: not a qrels line"),
    ]:
        other.write_text("\n".join(changed) + "\n", encoding="utf-8")
        done = cli_here("export", "umbrela-qrels", str(run_dir), "--qrels", str(other), "--output", str(tmp_path / "m"))
        assert done.returncode != 0 and message in done.stderr and len(done.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "m").exists()
    done = cli_here(
        "export", "umbrela-qrels", str(run_dir), "--qrels", str(qrels), "--output", str(qrels), "--overwrite"
    )
    assert (
        done.returncode != 0
        and "is the --qrels file: give another --output" in done.stderr
        and qrels.read_text(encoding="utf-8") == "\n".join(lines) + "\n"
    )


ids = st.one_of(
    st.from_regex(r"0{0,2}[0-9]{1,3}", fullmatch=True), st.from_regex(r"[a-z][a-z0-9_-]{0,5}", fullmatch=True)
)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(ids, ids, st.integers(-1, 4)), min_size=1, max_size=25),
    st.lists(st.integers(0, 3), max_size=25),
)
def test_any_qrels_keep_every_pair_in_umbrelas_order_and_take_the_judged_grades(lines, grades):
    """Whatever the ids (leading zeros, repeats) and labels: a line per pair as umbrela keys them (an id of digits by
    its integer), topic by topic in the order first seen, each with its last label, the judged pairs with the judge's
    grade."""
    import tempfile

    from ragbench.metrics.umbrela.modified_qrels import modified, read_pairs

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "qrels.txt"
        path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in lines), encoding="utf-8")
        pairs = read_pairs(path)
    key = {(q, d): (str(int(q)) if q.isdigit() else q, str(int(d)) if d.isdigit() else d) for q, d, _ in lines}
    seen = list(dict.fromkeys(key[q, d] for q, d, _ in lines))
    order = [pair for qid in dict.fromkeys(q for q, _ in seen) for pair in seen if pair[0] == qid]  # topic by topic
    last = {key[q, d]: str(g) for q, d, g in lines}
    judged = dict(zip(order, grades))
    written = [line.split() for line in modified(pairs, judged).splitlines()]
    assert written == [[q, "Q0", d, str(judged.get((q, d), last[q, d]))] for q, d in order]
