"""FlashRAG's multimodal pipeline (`MMSequentialPipeline`) against `flashrag_mm`, call for call: each form of
tests/data/flashrag_mm/recording.json (FlashRAG's own pipeline, router, prompt templates and HF multimodal
generator, run by record_mm.py with fake retrievers and a fake inference engine) is run by `flashrag_mm` with a
retriever that answers the recorded searches and a scripted model that answers as the recording's fake engine did.
Per example: the same searches in order (text or picture, and k), the same model input (each picture, by file, and
the text, in order), the same sampling, the same prediction."""

from __future__ import annotations

import asyncio
import functools
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragbench.api import Document, Example, Image, Task, TaskScoring
from ragbench.api.retrieval import Retriever
from ragbench.plugins.flashrag_mm.system import FlashRagMM
from ragbench.testing import ScriptedLLM, run_examples
from support import paths
from support.flashrag_parity import script_module

FIXTURES = paths.DATA / "flashrag_mm"
RECORDING = json.loads((FIXTURES / "recording.json").read_text())
RECORDER = script_module("flashrag_mm_record", FIXTURES / "record_mm.py")


@functools.cache
def pictures() -> dict[str, Image]:
    return {name: Image.of(FIXTURES / "images" / f"{name}.png") for name in RECORDER.PICTURES}


def document(row: dict[str, Any]) -> Document:
    """A corpus row as ragbench holds it: a picture's document with its text, a passage split as FlashRAG's
    `contents` ("title\\ntext")."""
    if "image" in row:
        metadata = {"golden_answers": row["golden_answers"]}
        return Document(row["id"], "", row["text"], metadata=metadata, image=pictures()[row["image"]])
    title, _, text = row["contents"].partition("\n")
    return Document(row["id"], title, text)


class Recorded(Retriever):
    """The form's recorded searches, by text and by picture."""

    name = "recorded"
    image_queries = True

    def __init__(self, form: str) -> None:
        self.docs = {row["id"]: document(row) for row in RECORDING["corpus"]}
        self.names = {image.digest: name for name, image in pictures().items()}
        self.by_query = {json.dumps(s["query"]): s["ids"] for s in RECORDING["forms"][form]["searches"]}

    def answer(self, query: Any, k: int) -> list[Document]:
        return [self.docs[doc_id] for doc_id in self.by_query[json.dumps(query)][:k]]

    def search(self, queries, k):
        return [self.answer(query, k) for query in queries]

    def search_images(self, images, k):
        return [self.answer({"image": self.names[image.digest]}, k) for image in images]


def fake_model(request: Any) -> str:
    """The recording's fake engine: its answer from the images and the text of the one user turn."""
    parts = request.messages[-1].parts
    return RECORDER.respond(sum(not isinstance(p, str) for p in parts), "".join(p for p in parts if isinstance(p, str)))


def examples_of(form: str) -> list[Example]:
    """The form's questions, each with its picture."""
    images = pictures()
    return [
        Example(
            q["id"],
            q["question"],
            gold={"answers": ["1 images"]},
            meta={key: q[key] for key in ("question_type", "subject") if key in q},
            images=(images[q["image"]],),
            index=i,
        )
        for i, q in enumerate(RECORDING["forms"][form]["questions"])
    ]


class Pictured(Task):
    """The recording's questions, each with its picture."""

    name = "pictured"
    scoring = TaskScoring(metrics=("match",))
    holds_images = question_images = True

    def examples(self):
        return iter(examples_of("mmqa"))


def system_for(form: dict[str, Any]) -> FlashRagMM:
    searches = {"run": "text+image", "naive_run": "none"}[form["method"]]
    if form["modality"] == {"text": ["text"]}:
        searches = "text"
    return FlashRagMM(
        searches=searches,
        text_topk=form["bm25"],
        image_topk=form["clip"],
        template=form["template"],
        max_tokens=form["max_new_tokens"],
    )


@pytest.mark.parametrize("name", sorted(RECORDING["forms"]))
def test_flashrag_mm_is_flashrags_multimodal_pipeline(name):
    form = RECORDING["forms"][name]
    images = pictures()
    names = {image.digest: picture for picture, image in images.items()}
    examples = examples_of(name)
    llm = ScriptedLLM(fake_model)
    records = asyncio.run(run_examples(system_for(form), examples, llm, retriever=Recorded(name)))
    for question, record, call in zip(form["questions"], records, form["calls"]):
        assert record.error is None, record.error
        searches = [step.request for step in record.trace if step.kind == "retrieval"]
        ids = [step.response["ids"] for step in record.trace if step.kind == "retrieval"]
        mine = (question["question"], {"image": question["image"]})
        expected = [s for s in form["searches"] if s["query"] in mine]
        assert [(query_name(s["query"], names), s["k"]) for s in searches] == [
            (s["query"], form["bm25"] if isinstance(s["query"], str) else form["clip"]) for s in expected
        ]
        assert ids == [s["ids"] for s in expected]
        [generation] = [step.request for step in record.trace if step.kind == "llm"]
        assert generation_parts(generation, names) == call["parts"]
        sampling = generation["sampling"]
        assert (sampling["max_tokens"], sampling["temperature"], sampling["stop"]) == (
            int(call["params"]["max_new_tokens"]),
            float(call["params"]["temperature"]),
            [],
        )
        assert call["params"]["do_sample"] == "False"
        assert record.answer == form["pred"][question["id"]]
        assert (record.raw_output or record.answer) == call["answer"]  # gaokao: the parsed choices and the output


def query_name(query: str, names: dict[str, str]) -> str | dict[str, str]:
    """A traced search's query as the recording names it: the text, or the picture's file."""
    prefix = "image sha256:"
    return {"image": names[query[len(prefix) :]]} if query.startswith(prefix) else query


def generation_parts(request: dict[str, Any], names: dict[str, str]) -> list[dict[str, str]]:
    """A traced chat request's parts as the recording's fake engine wrote them: each picture by its file."""
    return [
        {"role": turn["role"], "image": names[part["image"]["sha256"]]}
        if part["type"] == "image"
        else {"role": turn["role"], "text": part["text"]}
        for turn in request["messages"]
        for part in turn["content"]
    ]


class TextOnly(Retriever):
    """A retriever that searches by text only (as bm25 and dense do)."""

    name = "text_only"

    def search(self, queries, k):
        return [[Document("t1", "Flags", "The flag of a country is often red and white.")] for _ in queries]


def test_a_retriever_that_does_not_search_by_picture_fails_the_example_in_one_line_and_text_searches_run():
    question = RECORDING["questions"][0]
    example = Example(question["id"], question["question"], images=(pictures()[question["image"]],))
    llm = ScriptedLLM(fake_model)
    [refused] = asyncio.run(run_examples(FlashRagMM(), [example], llm, retriever=TextOnly()))
    assert refused.error == (
        "RetrievalError: retriever text_only does not search by picture; use one that does, or search by text only"
    )
    [answered] = asyncio.run(run_examples(FlashRagMM(searches="text"), [example], llm, retriever=TextOnly()))
    assert answered.error is None and [doc.id for doc in answered.docs] == ["t1"]
    assert answered.answer.startswith("1 images, 1 examples")  # the question's picture, then the text


def test_a_search_by_picture_needs_a_retriever_that_can_before_the_run(tmp_path):
    from ragbench.testing import PreflightError, installed_registry, preflight

    registry = installed_registry()
    registry.add_catalog({"retrievers": {"recorded": {"target": f"{__name__}:Recorded"}}}, "tests")
    with pytest.raises(PreflightError) as caught:
        preflight(Pictured, "flashrag_mm", "scripted:echo", registry=registry, output=tmp_path / "run")
    assert caught.value.problems == [
        "task pictured: system flashrag_mm searches by each question's picture, which retriever provided cannot (it "
        "takes no picture as a query); pass a retriever that searches by picture, or --system-arg searches=text to search by "
        "text only"
    ]
    preflight(Pictured, "flashrag_mm", "scripted:echo", system_args={"searches": "text"}, registry=registry)
    preflight(
        Pictured,
        "flashrag_mm",
        "scripted:echo",
        retriever="recorded",
        retriever_args={"form": "mmqa"},
        registry=registry,
    )


def test_a_run_records_each_search_by_picture_and_the_pictures_shown(tmp_path):
    from ragbench.testing import installed_registry, run_eval

    registry = installed_registry()
    registry.add_catalog({"retrievers": {"recorded": {"target": f"{__name__}:Recorded"}}}, "tests")
    run = run_eval(
        Pictured,
        "flashrag_mm",
        ScriptedLLM(fake_model),
        registry=registry,
        retriever="recorded",
        retriever_args={"form": "mmqa"},
        output=tmp_path / "run",
    )
    assert run.complete
    images = pictures()
    searches = [json.loads(line) for line in (tmp_path / "run" / "calls" / "retrieval.jsonl").read_text().splitlines()]
    by_picture = [s for s in searches if s["query"].startswith("image sha256:")]
    recorded = [s for s in RECORDING["forms"]["mmqa"]["searches"] if isinstance(s["query"], dict)]
    assert sorted((s["query"], s["ids"]) for s in by_picture) == sorted(
        (f"image sha256:{images[s['query']['image']].digest}", s["ids"]) for s in recorded
    )
    [first] = [sample for sample in run.samples["pictured"] if sample.id == "a"]
    shown = [(doc.id, doc.metadata.get("image", {}).get("sha256")) for doc in first.docs]  # a record's picture: digest
    assert shown == [("t1", None), ("d1", images["d1"].digest)]


NO_CHOICE = st.text(alphabet=st.characters(blacklist_characters="ABCD【"), max_size=30)


@given(NO_CHOICE.filter(lambda t: t.strip() != ""), st.text(alphabet="ABCD \n", min_size=1, max_size=8), NO_CHOICE)
def test_gaokao_choices_are_the_letters_after_the_answer_mark_or_else_the_last_one(before, letters, after):
    from ragbench.plugins.flashrag_mm.choices import gaokao_choices

    output = f"{before}【答案】{letters}{after}"
    assert gaokao_choices(output, "multiple_choice") == "".join(c for c in letters if c in "ABCD")
    assert gaokao_choices(output, "single_choice") == next((c for c in reversed(letters) if c in "ABCD"), "")
    assert gaokao_choices(before + after, "single_choice") == ""


def test_a_tiny_vlm_reads_the_hits_pictures_and_the_questions_end_to_end(tmp_path):
    from ragbench.testing import installed_registry, run_eval
    from support.tiny_vlm import build_tiny_vlm

    registry = installed_registry()
    registry.add_catalog({"retrievers": {"recorded": {"target": f"{__name__}:Recorded"}}}, "tests")
    vlm = build_tiny_vlm(tmp_path / "tiny-llava")
    run = run_eval(
        Pictured,
        "flashrag_mm",
        f"hf:{vlm}",
        registry=registry,
        retriever="recorded",
        retriever_args={"form": "mmqa_k2"},
        system_args={"text_topk": 2, "image_topk": 2, "max_tokens": 3},
        model_args={"device": "cpu"},
    )
    form = RECORDING["forms"]["mmqa_k2"]
    names = {image.digest: name for name, image in pictures().items()}
    for sample in run.samples["pictured"]:
        [call] = [c for c, q in zip(form["calls"], form["questions"]) if q["id"] == sample.id]
        [answer] = [step for step in sample.trace if step.kind == "llm"]
        # the hf engine's processor took every picture (an image token count unmatched raises)
        assert sample.error is None and generation_parts(answer.request, names) == call["parts"]
