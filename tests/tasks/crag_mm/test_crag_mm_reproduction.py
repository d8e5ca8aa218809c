"""The CRAG-MM paper's baseline rows (arXiv 2510.26160v1, Tables 8 and 9, Table 4's rows among them) as reproduction
manifests, as the catalogue holds them, and the single-turn and multi-turn MM-LLM rows run end to end through `ragbench
reproduce` on small samples in the hub's layout: a scripted model that answers by the picture it is sent, a scripted
judge, the paper's numbers beside ours."""

from __future__ import annotations

import json

from conftest import TEST_DATA, needs
from ragbench.tasks.crag_mm.records import cached_image_path
from ragbench.tasks.crag_mm.synthetic import write_dataset
from ragbench.testing import installed_registry
from support.crag_mm_helpers import fill_image_cache, png, search_contexts, tokenizer_dir
from support.helpers import cli_here, samples

ROW = "crag-mm.single.mm-llm.llama-3.2-11b"


def crag_mm_rows() -> dict[str, dict]:
    return {name: row for name, row in installed_registry().reproductions.items() if name.startswith("crag-mm.")}


def cells(row: dict) -> list[tuple[str, str, float]]:
    return [(cell["task"], cell["metric"], cell["paper"]) for cell in row["cells"]]


def conversation(session, turns, image=None, url=None):
    """A row of the hub's layout: its (interaction id, question, gold answer) turns about one picture."""
    labels = {"domain": 0, "query_category": 0, "dynamism": 0, "image_quality": 0}
    return {
        "session_id": session,
        "image": None if image is None else {"bytes": image, "path": None},
        "image_url": url,
        "turns": [{"interaction_id": iid, "query": query, **labels} for iid, query, _ in turns],
        "answers": [{"interaction_id": iid, "ans_full": answer} for iid, _, answer in turns],
    }


def reproduce(row: str, task: str, data, out, *extra: str):
    """`ragbench reproduce ROW` on the sample with the model that answers by the picture (the judge in `extra`)."""
    return cli_here(
        "reproduce", row, "--data", f"{task}={data}", "--task-arg", f"tokenizer={tokenizer_dir()}",
        "--model", "scripted:support.crag_mm_helpers:answer_by_picture", *extra, "--output", str(out), "--no-progress",
    )  # fmt: skip


def table_of(stdout: str, task: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith("| ") and task in line]


def test_every_baseline_row_of_tables_8_and_9_is_a_manifest_with_its_numbers_as_printed():
    rows = crag_mm_rows()
    assert len(rows) == 45  # nine models: single-turn MM-LLM, Task 1, Task 2; multi-turn MM-LLM, Task 3
    assert cells(rows[ROW]) == [
        ("crag_mm_single", "accuracy", 24.4),
        ("crag_mm_single", "missing", 34.4),
        ("crag_mm_single", "hallucination", 41.3),
        ("crag_mm_single", "truthfulness_score", -16.9),
    ]
    assert rows[ROW]["run"] == {
        "tasks": ["crag_mm_single"],
        "system": "closed_book",
        "model": "vllm:meta-llama/Llama-3.2-11B-Vision-Instruct",
        "judges": ["openai:gpt-4o"],
        "task_args": {"split": "public_test"},
    }
    assert cells(rows["crag-mm.multi.task-3.gpt-5-mini"]) == [
        ("crag_mm_multi", "accuracy", 61.0),
        ("crag_mm_multi", "missing", 22.5),
        ("crag_mm_multi", "hallucination", 16.5),
        ("crag_mm_multi", "multi_turn_score", 42.5),  # the multi-turn truthfulness: per conversation, early-stopped
    ]
    assert rows["crag-mm.single.task-2.llama-3.2-11b"]["table"] == "Table 8 (= Table 5, Llama 3.2 11B RAG)"
    assert rows["crag-mm.single.mm-llm.gemini-2.5-flash"]["run"]["task_args"] == {
        "split": "public_test",
        "agent": "closed",
    }
    assert all(row["status"] == "runnable" for row in rows.values())
    assert rows["crag-mm.single.task-1.llama-3.2-11b"]["run"] == {  # run_task_generation.sh's task-1: image search
        "tasks": ["crag_mm_single"],
        "system": "vanilla",
        "model": "vllm:meta-llama/Llama-3.2-11B-Vision-Instruct",
        "system_args": {"top_n": 30},
        "judges": ["openai:gpt-4o"],
        "task_args": {"split": "public_test"},
        "retriever": "cragmm_search",
        "retriever_args": {
            "search": "image",
            "image_index": "image-index",
            "image_model": "clip-vit-large-patch14-336",
        },
    }
    for name, row in rows.items():  # task-2 and task-3: QueryRewrite, then image and web search; the row's agent
        if ".task-2." in name or ".task-3." in name:
            agent = rows[name.replace(".task-2.", ".mm-llm.").replace(".task-3.", ".mm-llm.")]["run"]
            assert row["run"]["system"] == "crag_mm_rewrite" and row["run"]["retriever_args"]["search"] == "both"
            assert row["run"]["task_args"] == agent["task_args"] and row["run"]["model"] == agent["model"], name
        if ".task-" in name:
            assert row["retriever_paths"] == ["image_index", "image_model", "web_index", "text_model"], name
    multi = [row for name, row in rows.items() if name.startswith("crag-mm.multi.mm-llm.")]
    assert len(multi) == 9 and all(row["run"]["task_args"]["history"] == "own" for row in multi)


def test_the_listing_says_what_each_row_needs():
    lines = {line.split()[0]: line for line in cli_here("reproduce", "--list").stdout.splitlines()}
    assert "| Task 1 | Llama 3.2 11B | needs: " in lines["crag-mm.single.task-1.llama-3.2-11b"]
    assert (
        "retriever image_index image-index, retriever image_model clip-vit-large-patch14-336"
        in lines["crag-mm.single.task-1.llama-3.2-11b"]
    )  # the search's folders, not on disk here
    assert "retriever web_index web-index" in lines["crag-mm.multi.task-3.gpt-5-mini"]
    assert "crag_mm_single: reads a local copy of the hub dataset" in lines[ROW]


def test_the_row_runs_end_to_end_on_a_sample_with_the_papers_numbers_beside_ours(tmp_path):
    """Four turns of the public test split: an egocentric picture answered exactly, a web picture (from upstream's
    image cache) answered in other words that the judge accepts, one the judge rejects, one the model does not
    know. The model answers by the colour of the picture it is sent."""

    url = "https://x.org/paris.jpg"
    rows = [
        conversation("s1", [("i1", "what fruit is this?", "A mango.")], image=png((200, 0, 0))),
        conversation("s2", [("i2", "which city is this?", "Paris.")], url=url),
        conversation("s3", [("i3", "what car is this?", "A BMW.")], image=png((0, 0, 200))),
        conversation("s4", [("i4", "how old is this house?", "100 years.")], image=png((90, 90, 90))),
    ]
    data = write_dataset(tmp_path / "crag-mm-single", rows, split="public_test")
    cache = fill_image_cache(tmp_path / "images", {url: [[0, 200, 0], [30, 20]]})
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps([
        {"pattern": "Prediction: It is Paris, France\\.", "response": "Paris is the city. Result: CORRECT"},
        {"pattern": "Prediction: ", "response": "A different car. Result: WRONG"},
    ]))  # fmt: skip
    out = tmp_path / "run"
    result = reproduce(
        ROW, "crag_mm_single", data, out, "--task-arg", f"image_cache={cache}", "--judge", f"scripted:{judge}"
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (
        "**NOT a reproduction: model, judges differ from the paper's setting, so these numbers measure something "
        "else**" in result.stdout
    )  # the user's tokenizer and image cache are no substitution
    assert table_of(result.stdout, "crag_mm_single") == [
        "| Acc. (%) | crag_mm_single | accuracy | 24.4 | 50.00 | +25.60 | no |",
        "| Miss. (%) | crag_mm_single | missing | 34.4 | 25.00 | -9.40 | no |",
        "| Hallu. (%) | crag_mm_single | hallucination | 41.3 | 25.00 | -16.30 | no |",
        "| Truth. (%) | crag_mm_single | truthfulness_score | -16.9 | 25.00 | +41.90 | no |",
    ]
    reproduction = json.loads((out / "results.json").read_text())["reproduction"]
    assert reproduction["substituted"] == ["model", "judges"]
    assert [cell["ours"] for cell in reproduction["cells"]] == [50.0, 25.0, 25.0, 25.0]
    assert "## Reproduction: crag-mm.single.mm-llm.llama-3.2-11b" in (out / "report.md").read_text()


def test_a_multi_turn_row_runs_with_the_systems_own_history_and_reads_the_conversation_score(tmp_path):
    """Two conversations: the first right then wrong, the second wrong twice (the two-wrong rule ends it); each
    second turn is asked with the model's own first answer (`history=own`, as the paper's)."""
    rows = [
        conversation("c1", [("a0", "what fruit is this?", "A mango."), ("a1", "where does it grow?", "India.")],
                     image=png((200, 0, 0))),
        conversation("c2", [("b0", "what car is this?", "A BMW."), ("b1", "how fast is it?", "250 km/h.")],
                     image=png((0, 0, 200))),
    ]  # fmt: skip
    data = write_dataset(tmp_path / "crag-mm-multi", rows, split="public_test")
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps([{"pattern": "Prediction: ", "response": "Result: WRONG"}]))
    row = "crag-mm.multi.mm-llm.llama-3.2-11b"
    result = reproduce(row, "crag_mm_multi", data, tmp_path / "run", "--judge", f"scripted:{judge}")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "**NOT a reproduction: model, judges differ" in result.stdout
    assert table_of(result.stdout, "crag_mm_multi") == [
        "| Acc. (%) | crag_mm_multi | accuracy | 36.5 | 25.00 | -11.50 | no |",
        "| Miss. (%) | crag_mm_multi | missing | 19.5 | 0.00 | -19.50 | no |",
        "| Hallu. (%) | crag_mm_multi | hallucination | 44 | 75.00 | +31.00 | no |",
        "| Truth. (%) | crag_mm_multi | multi_turn_score | 1.6 | -50.00 | -51.60 | no |",
    ]  # c1: (1 - 1) / 2, c2: (-1 - 1) / 2
    saved = {s["id"]: s for s in samples(tmp_path / "run", "crag_mm_multi")}
    assert saved["b1"]["turns"] == [
        {"role": "user", "content": "what car is this?"},
        {"role": "assistant", "content": saved["b0"]["prediction"]["answer"]},
    ]


@needs("torch", "transformers", "safetensors")
def test_a_task_2_row_runs_end_to_end_with_the_rewrite_and_both_searches(tmp_path):
    """`crag-mm.single.task-2.llama-3.2-11b` on three web pictures over the tiny search indexes and models
    (tests/data/crag_mm_search): the user's folders given as the retriever's paths are no substitution; the rewriter
    answers no JSON, so each question is searched as asked, and the model says whether its answer call holds
    get_rag_context's image and web blocks as the released code made them for that picture and question."""
    search = TEST_DATA / "crag_mm_search"
    cache, rows = tmp_path / "cache", []
    cache.mkdir()
    pictures = {
        "what tower is this": "query_1.png",
        "how tall is it": "index_5.png",
        "who built this bridge": "query_0.png",
    }
    assert set(search_contexts()) == set(pictures)
    for number, (query, picture) in enumerate(pictures.items()):
        url = f"https://example.org/photo/{number}.png"
        cached_image_path(url, cache).write_bytes((search / "images" / picture).read_bytes())
        rows.append(conversation(f"s{number}", [(f"i{number}", query, "Something else.")], url=url))
    data = write_dataset(tmp_path / "crag-mm-single", rows, split="public_test")
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps([{"pattern": "Prediction: Searched as upstream", "response": "Result: CORRECT"}]))
    indexes = search / "indexes" / "mixed"
    out = tmp_path / "run"
    result = cli_here(
        "reproduce", "crag-mm.single.task-2.llama-3.2-11b", "--data", f"crag_mm_single={data}",
        "--task-arg", f"tokenizer={tokenizer_dir()}", "--task-arg", f"image_cache={cache}",
        "--retriever-arg", f"image_index={indexes / 'image'}", "--retriever-arg", f"web_index={indexes / 'web'}",
        "--retriever-arg", f"image_model={search / 'models' / 'clip'}",
        "--retriever-arg", f"text_model={search / 'models' / 'bge'}",
        "--model", "scripted:support.crag_mm_helpers:answer_by_search", "--role-model", "rewriter=scripted:echo",
        "--judge", f"scripted:{judge}", "--output", str(out), "--no-progress",
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "**NOT a reproduction: model, role_models, judges differ" in result.stdout  # not the retriever's paths
    assert table_of(result.stdout, "crag_mm_single") == [
        "| Acc. (%) | crag_mm_single | accuracy | 35.3 | 100.00 | +64.70 | no |",
        "| Miss. (%) | crag_mm_single | missing | 20.8 | 0.00 | -20.80 | no |",
        "| Hallu. (%) | crag_mm_single | hallucination | 43.9 | 0.00 | -43.90 | no |",
        "| Truth. (%) | crag_mm_single | truthfulness_score | -8.6 | 100.00 | +108.60 | no |",
    ]
    assert json.loads((out / "results.json").read_text())["reproduction"]["substituted"] == [
        "model", "role_models", "judges"
    ]  # fmt: skip
