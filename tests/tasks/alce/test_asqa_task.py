"""Task asqa: ASQA as Self-RAG and SMART evaluate it (ALCE's file, top-5 GTR docs, Self-RAG's prompts,
ALCE eval.py's scoring), next to alce_asqa."""

from __future__ import annotations

from conftest import TEST_DATA
from ragbench.tasks.alce.selfrag_asqa import INSTRUCTION, Asqa
from support.helpers import run, samples

ASQA = TEST_DATA / "alce" / "asqa_eval_gtr_top100.json"


def test_asqa_reads_alces_file_with_self_rags_instruction():
    task = Asqa(ASQA)
    example = next(iter(task.examples()))
    assert task.prompting.query_text(example) == INSTRUCTION + "## Input:\n\n" + example.question
    prompt = task.prompting.build_prompt(example, example.docs[:5])
    assert prompt.startswith("Below is an instruction that describes a task.")
    assert f"[1] {example.docs[0].title}\n{example.docs[0].text}" in prompt
    assert prompt.endswith("## Input:\n\n" + example.question + "\n\n### Response:")
    assert task.scoring.metrics == ("length", "str_em", "rouge_lsum", "citation")
    assert task.prompting.cites and task.prompting.answer_format == "long"


def test_asqa_scores_as_eval_py_first_line_only(tmp_path):
    results = run(
        tmp_path,
        tasks=["asqa"],
        system="vanilla",
        model="scripted:echo",
        nli="scripted:echo",
        data={"asqa": str(ASQA)},
        limit=2,
    )
    assert results["complete"]
    sample = samples(tmp_path / "run", "asqa")[0]
    assert len(sample["prediction"]["docs"]) == 5  # the top-5 GTR documents, as Self-RAG
    assert Asqa(ASQA).prompting.postprocess("First line [1].\nSecond line") == "First line [1]."


def test_the_headline_command_runs_crag_t3_and_asqa_in_one_run(tmp_path):
    import json

    from support.matrix_fixtures import RULES, TASK_DATA

    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps(RULES))
    crag_data, crag_args = TASK_DATA["crag_t3"](tmp_path)
    model = f"scripted:{rules}"
    results = run(
        tmp_path,
        tasks=["crag_t3", "asqa"],
        system="llatrieval",
        model=model,
        judges=[model],
        nli=model,
        data={"crag_t3": crag_data, "asqa": str(ASQA)},
        limit=2,
        task_args={f"crag_t3.{k}": v for k, v in crag_args.items()},
    )
    assert results["complete"] and list(results["results"]) == ["crag_t3", "asqa"]
    assert set(results["system_stats"]) == {"crag_t3", "asqa"}
