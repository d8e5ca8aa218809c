"""The `crag_mm_rewrite` system against CRAG-MM's query-rewrite pipeline run unchanged (QueryRewrite's generate
pass, then --full-query-path with image and web search), recorded in tests/data/parity/crag_mm_rewrite.json (its
"how") on ragbench's rows (crag_mm_rewrite_cases.json): per turn the same model calls in order (messages, picture,
sampling), the same searches (the picture's, then the rewritten question's, each with its k), and the same answer
after the 75-token cut. The retriever is `cragmm_search` with its defaults, its index lookups answered by the
cases' results as the recording's fake search pipeline answered them."""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import io
import json
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import TEST_DATA
from ragbench.api import Document, EngineError
from ragbench.tasks.crag_mm.metrics import truncate_response
from ragbench.tasks.crag_mm.rewrite_agent import CragMMQueryRewrite, rewrite_schema, search_query
from ragbench.tasks.crag_mm.search.retriever import KINDS, CragMMSearchRetriever, entity_table
from ragbench.tasks.crag_mm.synthetic import write_dataset
from ragbench.tasks.crag_mm.task import CragMMMulti, CragMMSingle
from ragbench.testing import ScriptedLLM, make_context
from support.crag_mm_helpers import case_rows, tokenizer_dir

RECORDED = json.loads((TEST_DATA / "parity" / "crag_mm_rewrite.json").read_text(encoding="utf-8"))
CASES = json.loads((TEST_DATA / "parity" / "crag_mm_rewrite_cases.json").read_text(encoding="utf-8"))
TASKS = {"single": CragMMSingle, "multi": CragMMMulti}
ANSWER_SAMPLING = {"max_tokens": 1000, "temperature": 0.0, "top_p": 1.0, "chat": True}  # the tasks' system_args


def rgb_sha256(image) -> str:
    from PIL import Image as PILImage

    return hashlib.sha256(PILImage.open(io.BytesIO(image.data)).convert("RGB").tobytes()).hexdigest()


def as_upstream(request) -> list[dict]:
    """The request's messages as upstream's agents write them: an image part is VlmAgent's {"type": "image"}."""
    return [
        {**m, "content": [{"type": "image"}]} if isinstance(m["content"], list) else m for m in request.message_dicts()
    ]


def sampling_of(request) -> dict:
    """The request's sampling in vllm.SamplingParams' terms, the JSON schema as GuidedDecodingParams(json=...)."""
    sampling = request.sampling
    out = {key: getattr(sampling, key) for key in ("temperature", "top_p", "max_tokens", "skip_special_tokens")}
    if sampling.json_schema is not None:
        out["guided_decoding"] = {"json": json.loads(sampling.json_schema)["schema"]}
    return out


def recorded_reply(calls: list[dict]):
    """The fake vLLM's reply to the recorded call with the same messages; any other call fails."""

    def reply(request) -> str:
        for call in calls:
            if call["messages"] == as_upstream(request):
                return call["reply"]
        raise EngineError(f"no recorded call has these messages: {as_upstream(request)[-1]['content'][:80]!r}")

    return reply


class CasesSearch(CragMMSearchRetriever):
    """`cragmm_search` (search=both, image_k and web_k as the retriever's defaults) whose index lookups answer as the
    recording's fake pipeline did: every picture the cases' image results (each hit made by the retriever's own
    `image_document`, from index rows holding them), every text their web results. Each lookup is kept as the
    pipeline recorded it: the picture's RGB sha256 or the query, and k."""

    def __init__(self) -> None:
        defaults = inspect.signature(CragMMSearchRetriever).parameters
        self.kinds, self.limits = KINDS, {kind: defaults[f"{kind}_k"].default for kind in KINDS}
        hits = {hit["index"]: hit for hit in CASES["image_results"]}
        rows = [
            {
                "image_url": hits[row]["url"],
                "entities": json.dumps([entity["entity_name"] for entity in hits[row]["entities"]]),
                "info": json.dumps(
                    {entity["entity_name"]: entity["entity_attributes"] for entity in hits[row]["entities"]}
                ),
            }
            if row in hits
            else {"image_url": "", "entities": "[]"}
            for row in range(max(hits) + 1)
        ]
        self.image = SimpleNamespace(metadatas=rows)  # type: ignore[assignment]
        self.entities = entity_table(rows)
        self.lookups: list[dict] = []

    def image_hits(self, pictures, k):
        for picture in pictures:
            self.lookups.append(
                {"image_rgb_sha256": hashlib.sha256(picture.convert("RGB").tobytes()).hexdigest(), "k": k}
            )
        return [[self.image_document(hit["index"], hit["score"]) for hit in CASES["image_results"]] for _ in pictures]

    def web_hits(self, queries, k):
        self.lookups += [{"query": query, "k": k} for query in queries]
        web = [
            Document(id=str(i), title=r["page_name"], text=r["page_snippet"], url=r["page_url"])
            for i, r in enumerate(CASES["search_results"])
        ]
        return [list(web) for _ in queries]


def run_turns(kind: str, tmp_path) -> list[tuple]:
    """Each turn run by the system, in upstream's order: (example, requests, index lookups, prediction)."""
    task = TASKS[kind](data_path=write_dataset(tmp_path / kind, case_rows(CASES[kind])), tokenizer=tokenizer_dir())
    recorded = RECORDED[kind]
    llm = ScriptedLLM(recorded_reply(recorded["rewrite_calls"] + recorded["answer_calls"]))
    system = CragMMQueryRewrite(**ANSWER_SAMPLING)
    by_id = {example.id: example for example in task.examples()}

    async def turns():
        out = []
        for turn in recorded["turns"]:
            retriever, example = CasesSearch(), by_id[turn["interaction_id"]]
            ctx = make_context(task, llm, retriever=retriever.for_example(example))  # as a run binds it
            seen = len(llm.requests)
            prediction = await system.run(example, ctx)
            out.append((turn, llm.requests[seen:], retriever.lookups, prediction))
        return out

    return asyncio.run(turns())


@pytest.mark.parametrize("kind", ["single", "multi"])
def test_the_same_calls_search_and_answer_as_the_released_pipeline(kind, tmp_path):
    recorded = RECORDED[kind]
    ran = run_turns(kind, tmp_path)
    for index, (turn, requests, searches, prediction) in enumerate(ran):
        analyse, rewrite, answer = requests
        # upstream batches: every analysis of a batch, then every rewrite; a turn's are those quoting its question
        asked = f'question: "{turn["query"]}"'
        upstream_analyse, upstream_rewrite = [
            c for c in recorded["rewrite_calls"] if asked in c["messages"][2]["content"]
        ]
        upstream_answer = recorded["answer_calls"][index]
        for ours, theirs in ((analyse, upstream_analyse), (rewrite, upstream_rewrite), (answer, upstream_answer)):
            assert as_upstream(ours) == theirs["messages"]
            assert sampling_of(ours) == theirs["sampling"]
        picture = upstream_analyse["image_rgb_sha256"]
        assert [rgb_sha256(image) for image in analyse.sent_images] == [picture]
        assert [rgb_sha256(image) for image in answer.sent_images] == [upstream_answer["image_rgb_sha256"]]
        # upstream's second call renders the image placeholder but passes no picture (a plain prompt to
        # llm.generate); a chat turn cannot hold a placeholder without its picture, so ragbench sends it
        assert upstream_rewrite["multi_modal_data"] is None
        assert [rgb_sha256(image) for image in rewrite.sent_images] == [picture]
        # get_rag_context's two searches: the picture (its k, NUM_IMG_SEARCH_RESULTS), then the rewritten question
        assert searches == recorded["searches"][2 * index : 2 * index + 2]
        assert truncate_response(prediction.answer, tokenizer_dir()) == turn["agent_response"]
        images = ["Volvo XC90, badge", "Volvo XC90, Göteborg", "Ford Focus"]
        assert [doc.title for doc in prediction.docs] == [*images, "Result one", "Result two", "Result three"]


def test_the_cases_cover_each_way_to_the_search_query():
    turns = [turn for kind in ("single", "multi") for turn in RECORDED[kind]["turns"]]
    queries = {turn["query"]: turn for turn in turns}
    assert queries["who makes this car?"]["full_query"] == "who makes Volvo?"  # the rewrite
    assert queries["how old is that vase?"]["full_query"] == "how old is that vase?"  # not JSON: the question
    assert queries["does this plant need much water?"]["full_query"] == ""  # empty: get_rag_context asks the question
    assert not queries["what does this shoe cost?"]["rewrite_response"].endswith("}")  # cut at 75 tokens
    assert queries["what bridge is this?"]["full_query"] == "what is Golden Gate?"  # 74 bytes and the BOS: not cut
    for turn in turns:
        assert search_query(turn["rewrite_response"], turn["query"]) == (turn["full_query"] or turn["query"])


@pytest.mark.parametrize(
    ("reply", "query"),
    [
        ('{"updated_question": "who makes Volvo?"}', "who makes Volvo?"),
        ('["who makes Volvo?"]', "q"),
        ('"who makes Volvo?"', "q"),
        ("{}", "q"),
        ('{"updated_question": null}', "q"),
        ("", "q"),
    ],
)
def test_the_search_query_falls_back_to_the_question_as_upstream_does(reply, query):
    assert search_query(reply, "q") == query


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["updated_question", "x"]), inner),
    max_leaves=6,
)


@given(st.one_of(JSON.map(json.dumps), st.text(max_size=40)))
def test_any_reply_gives_a_non_empty_string_of_its_json_or_the_question(reply):
    query = search_query(reply, "q")
    try:
        value = json.loads(reply)
    except ValueError:
        value = None
    found = value.get("updated_question") if isinstance(value, dict) else None
    assert query == (found if isinstance(found, str) and found else "q")


def test_the_schema_is_upstreams_query_analysis():
    assert json.loads(rewrite_schema()) == {"name": "QueryAnalysis", "schema": RECORDED["schema"]}


def test_the_rewriter_role_makes_the_rewrite_calls_and_the_run_model_the_answer(tmp_path):
    task = CragMMSingle(data_path=write_dataset(tmp_path, case_rows(CASES["single"][:1])), tokenizer=tokenizer_dir())
    [example] = task.examples()
    rewriter = ScriptedLLM(
        ["The badge reads Volvo.", '{"entity_name": "Volvo", "updated_question": "who makes Volvo?"}']
    )
    answerer = ScriptedLLM("Volvo Cars.")
    ctx = make_context(task, answerer, [Document(id="d", title="t", text="x")], models={"rewriter": rewriter})
    prediction = asyncio.run(CragMMQueryRewrite(**ANSWER_SAMPLING).run(example, ctx))
    assert prediction.answer == "Volvo Cars." and len(rewriter.requests) == 2 and len(answerer.requests) == 1
    assert [(s.kind, s.name) for s in ctx.trace][:2] == [("llm", "analyse"), ("llm", "rewrite")]
    assert [s.request["query"] for s in ctx.trace if s.kind == "retrieval"] == ["who makes Volvo?"]


def test_other_tasks_are_refused_before_the_run():
    from ragbench.api import ConfigError
    from ragbench.testing import task_object

    with pytest.raises(ConfigError, match="runs on the CRAG-MM tasks .*not on demo"):
        CragMMQueryRewrite().check(task_object("demo"))
