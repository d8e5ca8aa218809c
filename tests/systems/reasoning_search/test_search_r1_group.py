"""`--tasks search_r1`: the seven sets the Search-R1 family reports (PeterGriffinJin/Search-R1 a14dc3a,
scripts/nq_hotpotqa/data_process.sh and scripts/data_process/qa_search_test_merge.py: FlashRAG's file of each,
its test split where FlashRAG has one, else dev; exact match, verl/utils/reward_score/qa_em.py's em_check, which
is FlashRAG's em), as the FlashRAG-format tasks that read those files. One run of the search_r1 agent on all
seven, open domain over one corpus index as Search-R1 runs them (the matrix's scripted model and Varn corpus)."""

from __future__ import annotations

import json

from ragbench.testing import installed_registry, run_eval
from support.matrix_fixtures import build_corpus_index, cell_config

URL = "https://huggingface.co/datasets/RUC-NLPIR/FlashRAG_datasets/resolve/main/"
SEARCH_R1_FILES = {  # task -> the FlashRAG file Search-R1 evaluates on
    "nq_open_flashrag": "nq/test.jsonl",
    "triviaqa_flashrag": "triviaqa/test.jsonl",
    "popqa_flashrag": "popqa/test.jsonl",
    "hotpotqa_distractor_flashrag": "hotpotqa/dev.jsonl",
    "2wikimultihopqa_flashrag": "2wikimultihopqa/dev.jsonl",
    "musique_flashrag": "musique/dev.jsonl",
    "bamboogle_flashrag": "bamboogle/test.jsonl",
}


def test_the_group_is_the_seven_sets_on_search_r1s_splits_scored_by_exact_match():
    registry = installed_registry()
    assert registry.expand_tasks(["search_r1"]) == list(SEARCH_R1_FILES)
    for task, upstream in SEARCH_R1_FILES.items():
        spec = registry.load("tasks", task).spec
        assert (spec.data.url, spec.data.format) == (URL + upstream, "flashrag")
        assert "em" in registry.load("tasks", task)().scoring.metrics


def test_the_search_r1_agent_runs_on_all_seven_over_a_corpus_index(tmp_path):
    index = build_corpus_index(tmp_path / "index") / "varn"
    cells = {
        task: cell_config(task, "search_r1", tmp_path / task, corpus_index=tmp_path / "index")
        for task in SEARCH_R1_FILES
    }
    rules = [
        rule
        for config in cells.values()
        for rule in json.loads((tmp_path / config["tasks"][0] / "rules.json").read_text())
    ]
    (tmp_path / "rules.json").write_text(json.dumps(rules))
    results = run_eval(
        "search_r1",
        "search_r1",
        f"scripted:{tmp_path / 'rules.json'}",
        data={task: config["data"][task] for task, config in cells.items()},
        retriever="bm25",
        retriever_args={"index": str(index)},
        limit=2,
        bootstrap_iters=50,
        output=tmp_path / "run",
    ).results
    assert results["complete"], results.get("failures")
    # each set's first question answered with its gold, the second with "zzz" (matrix_fixtures.answers)
    assert {task: values["em"] for task, values in results["results"].items()} == dict.fromkeys(SEARCH_R1_FILES, 0.5)
    assert all(results["counts"][task]["scored"] == 2 for task in SEARCH_R1_FILES)
