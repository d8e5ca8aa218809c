"""crag_mm_single / crag_mm_multi read the hub's v0.1.2 layout (as huggingface-cli download gives it, a save_to_disk
folder, a Parquet file) with generated images: turns, images, history, slices and upstream's session rules."""

from __future__ import annotations

import hashlib
import io

import pytest

from ragbench.api import ConfigError, RecordError
from ragbench.tasks.crag_mm.records import EGO_SIZE, SESSIONS_TO_UPDATE
from ragbench.tasks.crag_mm.synthetic import write_dataset
from ragbench.tasks.crag_mm.task import CragMMMulti, CragMMSingle
from support.crag_mm_helpers import png, tokenizer_dir

SKIPPED = "04d98259-27af-41b1-a7be-5798fd1b8e95"
UPDATED = "0df99a9a-6a5d-4ff4-b8e4-e3ee90209dfe"


def turn(iid, query, domain=0, category=3, dynamism=1, quality=5):
    return {
        "interaction_id": iid,
        "domain": domain,
        "query_category": category,
        "dynamism": dynamism,
        "query": query,
        "image_quality": quality,
    }


def row(session, turns, answers, image=None, url=None):
    return {
        "session_id": session,
        "image": None if image is None else {"bytes": image, "path": None},
        "image_url": url,
        "turns": turns,
        "answers": [{"interaction_id": t["interaction_id"], "ans_full": a} for t, a in zip(turns, answers)],
    }


def single_rows():
    return [
        row(
            "ego-1",
            [turn("i1", "what is this?", domain=9, category=3, quality=3)],
            ["A mango."],
            image=png((200, 0, 0)),
        ),
        row(SKIPPED, [turn("i2", "skipped?")], ["yes"], image=png((0, 0, 0))),
        row(
            "web-1",
            [turn("i3", "which city?", domain=5, category=1, dynamism=2)],
            ["Paris."],
            url="https://x.org/a.jpg",
        ),
        row(UPDATED, [turn("i4", "what car?", domain=6)], ["A BMW."], url="https://old.example/car.jpg"),
    ]


def cache_image(cache, url, color):
    from ragbench.tasks.crag_mm.records import cached_image_path

    path = cached_image_path(url, cache)
    path.write_bytes(png(color, (20, 10)))
    return path


@pytest.fixture
def image_cache(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    cache_image(cache, "https://x.org/a.jpg", (0, 200, 0))
    cache_image(cache, SESSIONS_TO_UPDATE["single"][UPDATED], (0, 0, 200))
    return cache


def examples(task):
    return list(task.examples())


@pytest.mark.parametrize("layout", ["hub", "saved", "parquet"])
def test_single_turn_examples_with_images_slices_and_upstream_session_rules(tmp_path, image_cache, layout):
    from PIL import Image as PILImage

    path = write_dataset(tmp_path / "data", single_rows(), layout=layout)
    task = CragMMSingle(data_path=path, tokenizer=tokenizer_dir(), image_cache=str(image_cache))
    found = examples(task)
    assert [e.id for e in found] == ["i1", "i3", "i4"]  # SESSIONS_TO_SKIP left out
    ego, web, updated = found
    assert ego.question == "what is this?" and ego.gold == {"answers": ["A mango."]}
    assert ego.meta == {
        "image_source": "ego",
        "domain": "food",
        "query_category": "simple-recognition",
        "dynamism": "static",
        "image_quality": "low light",
        "session_id": "ego-1",
        "turn": 0,
    }
    assert PILImage.open(io.BytesIO(ego.images[0].data)).size == EGO_SIZE  # resized as upstream's iterator does
    assert web.meta["image_source"] == "normal" and web.meta["domain"] == "local"
    assert web.images[0].data == (image_cache / (hashlib.md5(b"https://x.org/a.jpg").hexdigest() + ".jpg")).read_bytes()
    assert updated.extras["image_url"] == SESSIONS_TO_UPDATE["single"][UPDATED]  # SESSIONS_TO_UPDATE's URL
    assert ego.turns is None
    assert task.scoring.metrics == ("crag_mm",)
    assert set(task.scoring.slice_fields) == {"image_source", "domain", "query_category", "image_quality", "dynamism"}


def test_multi_turn_examples_carry_the_earlier_turns(tmp_path):
    turns = [turn("t0", "what is this?"), turn("t1", "how old is it?"), turn("t2", "who made it?")]
    path = write_dataset(
        tmp_path / "data", [row("conv", turns, ["A vase.", "100 years.", "Ming."], image=png((9, 9, 9)))]
    )
    found = examples(CragMMMulti(data_path=path, tokenizer=tokenizer_dir()))
    assert [(e.meta["turn"], e.index) for e in found] == [(0, 0), (1, 1), (2, 2)]
    assert found[0].turns == []
    assert found[2].turns == [
        {"role": "user", "content": "what is this?"},
        {"role": "assistant", "content": "A vase."},
        {"role": "user", "content": "how old is it?"},
        {"role": "assistant", "content": "100 years."},
    ]
    assert len({e.images[0].digest for e in found}) == 1


def test_the_history_is_a_named_variant_gold_by_default_and_another_is_refused_in_one_line():
    """Earlier turns show the gold answers unless `history=own` (upstream's): the run's config says which."""
    assert CragMMMulti(tokenizer=tokenizer_dir()).config()["history"] == "gold"
    assert CragMMMulti(tokenizer=tokenizer_dir(), history="own").config()["history"] == "own"
    with pytest.raises(ConfigError) as caught:
        CragMMMulti(history="agent")
    assert str(caught.value) == "task crag_mm_multi: history 'agent' is not one of gold, own"


def test_a_web_image_missing_from_the_cache_is_one_record_error(tmp_path):
    path = write_dataset(tmp_path / "data", single_rows()[2:3])
    found = examples(CragMMSingle(data_path=path, tokenizer=tokenizer_dir(), image_cache=str(tmp_path / "empty")))
    assert len(found) == 1 and isinstance(found[0], RecordError)
    assert "https://x.org/a.jpg" in str(found[0]) and "image_cache" in str(found[0])


def test_no_local_copy_is_one_line_saying_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGBENCH_DATA_DIR", str(tmp_path))
    with pytest.raises(ConfigError) as caught:
        CragMMMulti(tokenizer=tokenizer_dir()).prepare()
    message = str(caught.value)
    assert "\n" not in message
    assert (
        "huggingface-cli download --repo-type dataset crag-mm-2025/crag-mm-multi-turn-public --revision v0.1.2"
        in message
    )


def test_a_missing_split_names_the_splits_there(tmp_path):
    path = write_dataset(tmp_path / "data", single_rows()[:1], layout="saved")
    with pytest.raises(ConfigError, match="public_test.*validation"):
        examples(CragMMSingle(data_path=path, split="public_test", tokenizer=tokenizer_dir()))


def test_without_the_tokenizer_the_task_says_how_to_give_it(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGBENCH_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("CRAG_MM_LLAMA32_TOKENIZER", raising=False)
    path = write_dataset(tmp_path / "data", single_rows()[:1])
    with pytest.raises(ConfigError, match="tokenizer=DIR.*CRAG_MM_LLAMA32_TOKENIZER"):
        CragMMSingle(data_path=path).prepare()


def test_the_preflight_refuses_another_tokenizer():
    from ragbench.tasks.crag_mm.preflight import llama32_tokenizer_problem

    assert llama32_tokenizer_problem(tokenizer_dir()) is None
    from conftest import SHARED

    llama2 = SHARED / "reference" / "crag" / "llama2_tokenizer"
    if llama2.is_dir():
        assert "is not the Llama-3.2 tokenizer" in (llama32_tokenizer_problem(llama2) or "")


def test_evaluation_option_picks_the_corrected_metric(tmp_path):
    task = CragMMSingle(data_path=tmp_path, evaluation="corrected")
    assert task.scoring.metrics == ("crag_mm_corrected",)
    with pytest.raises(ConfigError, match="evaluation 'x' is not one of upstream, corrected"):
        CragMMSingle(evaluation="x")
    assert CragMMSingle(agent="closed").prompting.agent == "closed"
    with pytest.raises(ConfigError, match="agent 'gpt' is not one of open, closed"):
        CragMMSingle(agent="gpt")


def test_a_whole_multi_turn_run_reports_the_upstream_figures(tmp_path):
    """The command line's run: the system answers, the judge reads, truthfulness and the multi-turn score come
    out per run and the slices per image source."""
    from ragbench.testing import ScriptedLLM, run_eval

    turns = [turn("t0", "what is this?"), turn("t1", "how old is it?"), turn("t2", "who made it?")]
    rows = [
        row("c1", turns, ["A vase.", "100 years.", "Ming."], image=png((9, 9, 9))),
        row(
            "c2",
            [turn("u0", "what car?"), turn("u1", "how fast?")],
            ["A Mini.", "200 km/h."],
            url="https://x.org/a.jpg",
        ),
    ]
    cache = tmp_path / "cache"
    cache.mkdir()
    cache_image(cache, "https://x.org/a.jpg", (1, 2, 3))
    path = write_dataset(tmp_path / "data", rows)
    answers = {
        "what is this?": "a teapot",
        "how old is it?": "I don't know",
        "who made it?": "Ming.",
        "what car?": "A Mini.",
        "how fast?": "150 km/h",
    }
    system = ScriptedLLM(lambda request: answers[request.messages[-1][1]])  # the question is the last message
    judge = ScriptedLLM("Result: WRONG")
    run = run_eval(
        "crag_mm_multi",
        "closed_book",
        system,
        data=path,
        judges=[judge],
        task_args={"tokenizer": tokenizer_dir(), "image_cache": str(cache)},
    )
    scores = run.scores["crag_mm_multi"]
    # c1: wrong, missing (two not correct: ends), then "Ming." exact but counted missing in the conversation score
    # c2: exact, wrong. Turns: correct 2, missing 1, hallucinated 2 of 5
    assert scores["accuracy"] == pytest.approx(2 / 5)
    assert scores["truthfulness_score"] == pytest.approx((2 * 2 + 1) / 5 - 1)
    assert scores["multi_turn_score"] == pytest.approx(((0 - 1 / 3) + (1 / 2 - 1 / 2)) / 2)
    assert scores["ego_multi_turn_score"] == pytest.approx(-1 / 3)
    assert len(judge.requests) == 2


def test_ragbench_score_reads_local_evaluations_response_file(tmp_path):
    """What `--mode evaluate` reads (generate mode's response.jsonl, in its timestamped folder) scored by ragbench."""
    import json

    from ragbench.testing import ScriptedLLM, run_eval

    path = write_dataset(tmp_path / "data", single_rows()[:1] + single_rows()[2:3])
    cache = tmp_path / "cache"
    cache.mkdir()
    cache_image(cache, "https://x.org/a.jpg", (0, 200, 0))
    run_folder = tmp_path / "results" / "2025-06-01_10-00-00"
    run_folder.mkdir(parents=True)
    lines = [
        {
            "session_id": "ego-1",
            "interaction_id": "i1",
            "turn_idx": 0,
            "is_ego": True,
            "query": "what is this?",
            "ground_truth": "A mango.",
            "agent_response": "a mango.",
        },
        {
            "session_id": "web-1",
            "interaction_id": "i3",
            "turn_idx": 0,
            "is_ego": False,
            "query": "which city?",
            "ground_truth": "Paris.",
            "agent_response": "Lyon.",
        },
    ]
    (run_folder / "response.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    judge = ScriptedLLM("Result: WRONG")
    run = run_eval(
        "crag_mm_single",
        "recorded",
        data=path,
        judges=[judge],
        system_args={"path": str(tmp_path / "results")},
        task_args={"tokenizer": tokenizer_dir(), "image_cache": str(cache)},
    )
    scores = run.scores["crag_mm_single"]
    assert (scores["accuracy"], scores["exact_match"], scores["truthfulness_score"]) == (0.5, 0.5, 0.0)
    assert [r.messages[1][1].split("\nPrediction: ")[1] for r in judge.requests] == ["Lyon.\nGive your output below:\n"]


def test_a_results_folder_without_one_response_file_is_one_line(tmp_path):
    with pytest.raises(ConfigError, match="found none"):
        list(CragMMSingle(tokenizer=tokenizer_dir()).prediction_records(tmp_path))


def test_the_runs_preflight_names_a_missing_copy_and_a_wrong_tokenizer_in_one_line_each(tmp_path, monkeypatch):
    from ragbench.testing import PreflightError, preflight

    monkeypatch.setenv("RAGBENCH_DATA_DIR", str(tmp_path))
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    (wrong / "tokenizer.json").write_text("{}", encoding="utf-8")
    with pytest.raises(PreflightError) as caught:
        preflight("crag_mm_multi", "closed_book", judges=["scripted:echo"], task_args={"tokenizer": str(wrong)})
    problems = caught.value.problems
    assert any("crag-mm-multi-turn-public (revision v0.1.2), not found" in p for p in problems), problems
    assert any("is not a readable tokenizer" in p and "tokenizer=DIR" in p for p in problems), problems
    assert all("\n" not in p for p in problems)


def test_damaged_images_are_bad_records_of_their_rows_only(tmp_path, image_cache):
    rows = single_rows()
    rows[0]["image"] = {"bytes": png((1, 1, 1))[:60], "path": None}  # a PNG cut short
    (image_cache / (hashlib.md5(b"https://x.org/a.jpg").hexdigest() + ".jpg")).write_bytes(b"<html>404</html>")
    path = write_dataset(tmp_path / "data", rows)
    found = examples(CragMMSingle(data_path=path, tokenizer=tokenizer_dir(), image_cache=str(image_cache)))
    assert [type(e).__name__ for e in found] == ["RecordError", "RecordError", "Example"]
    assert "image cannot be read" in str(found[0]) and "cached image" in str(found[1])


def test_a_truncated_parquet_file_is_one_line(tmp_path):
    path = write_dataset(tmp_path / "data", single_rows()[:1])
    shard = next((path / "data").glob("*.parquet"))
    shard.write_bytes(shard.read_bytes()[:200])
    with pytest.raises(ConfigError) as caught:
        examples(CragMMSingle(data_path=path, tokenizer=tokenizer_dir()))
    assert "\n" not in str(caught.value) and str(path) in str(caught.value)


def test_the_model_gets_each_examples_image_and_a_text_model_is_refused_before_the_run(tmp_path, image_cache):
    """The prompting sends the example's picture (a scripted engine, which takes images, receives its part with the
    picture's digest); a model that takes none is refused at pre-flight in one line."""
    from ragbench.testing import PreflightError, ScriptedLLM, preflight, run_eval

    path = write_dataset(tmp_path / "data", single_rows()[:1] + single_rows()[2:3])
    task_args = {"tokenizer": tokenizer_dir(), "image_cache": str(image_cache)}
    system = ScriptedLLM("I don't know")
    run_eval("crag_mm_single", "closed_book", system, data=path, judges=[ScriptedLLM("")], task_args=task_args)
    found = examples(CragMMSingle(data_path=path, **task_args))
    sent = {r.messages[-1][1]: [image.digest for image in r.sent_images] for r in system.requests}
    assert sent == {e.question: [e.images[0].digest] for e in found}
    image_turns = [(r.messages[1].role, r.messages[1].parts) for r in system.requests]  # right after the system's
    assert sorted(image_turns, key=str) == sorted((("user", e.images) for e in found), key=str)
    preflight("crag_mm_single", "closed_book", data=path, judges=["scripted:echo"], task_args=task_args)
    with pytest.raises(PreflightError) as caught:
        preflight(
            "crag_mm_single", "closed_book", "hf:embedded", data=path, judges=["scripted:echo"], task_args=task_args
        )
    (problem,) = caught.value.problems
    assert problem.startswith(
        "--model hf:embedded: closed_book on crag_mm_single sends the model images: embedded takes no images"
    )
    assert "\n" not in problem


@pytest.mark.parametrize("layout", ["hub", "saved", "parquet"])
def test_the_progress_total_is_the_items_the_task_yields_counted_without_its_images(tmp_path, image_cache, layout):
    """The progress bar showed no total and no ETA: the task told no size. Its size counts a turn each, none for a
    skipped session, one for a row whose turns cannot be read (its bad record); no image is read for it."""
    from ragbench._run.evaluator import Evaluator, RunConfig
    from ragbench.testing import installed_registry

    turns = [turn("t0", "what is this?"), turn("t1", "how old is it?"), turn("t2", "who made it?")]
    rows = [*single_rows(), row("conv", turns, ["A vase.", "100 years.", "Ming."], image=png((9, 9, 9)))]
    path = write_dataset(tmp_path / "data", rows, layout=layout)
    for task in (
        CragMMSingle(data_path=path, tokenizer=tokenizer_dir(), image_cache=str(image_cache)),
        CragMMMulti(data_path=path, tokenizer=tokenizer_dir(), image_cache=str(image_cache)),
    ):
        assert task.size_hint() is None  # the data not yet found: the pre-flight says why
        task.prepare()
        assert task.size_hint() == len(examples(task)) == 6  # 3 single rows (one skipped), 3 turns
    config = RunConfig.of(
        tasks=["crag_mm_multi"],
        system="closed_book",
        model="scripted:echo",
        judges=["scripted:echo"],
        data={"crag_mm_multi": str(path)},
        task_args={"tokenizer": str(tokenizer_dir()), "image_cache": str(image_cache)},
    )
    assert Evaluator(config, registry=installed_registry()).plan.known_total() == 6


def test_the_missing_tokenizer_line_names_the_offline_stand_in_which_the_preflight_accepts(tmp_path, monkeypatch):
    import subprocess
    import sys

    from ragbench.tasks.crag_mm.preflight import llama32_tokenizer_problem

    monkeypatch.setenv("RAGBENCH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("CRAG_MM_LLAMA32_TOKENIZER", raising=False)
    with pytest.raises(ConfigError) as caught:
        CragMMSingle().resolve_tokenizer()
    line = str(caught.value)
    assert "\n" not in line and "`python -m ragbench.tasks.crag_mm.synthetic DIR` writes ragbench's stand-in" in line
    done = subprocess.run(
        [sys.executable, "-m", "ragbench.tasks.crag_mm.synthetic", str(tmp_path / "tok")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert llama32_tokenizer_problem(tmp_path / "tok") is None
