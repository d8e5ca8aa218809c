"""Refiners (`--refiner NAME --refiner-arg k=v`): each gives what its library gives called directly on the
same inputs in FlashRAG's format (llmlingua's PromptCompressor, a sentence-transformers encoder, a seq2seq
model's generate), and a reader shows it as FlashRAG's prompt shows a refined reference, traced as a step."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from conftest import needs
from ragbench._components.recomp import AbstractiveRefiner, ExtractiveRefiner
from ragbench._components.selective_context import SelectiveContextRefiner
from ragbench.api import Document
from ragbench.api.retrieval import passage_text
from ragbench.testing import build_index, installed_registry
from support.component_helpers import TASK, bm25_args, bm25_vanilla_run
from support.component_models import tiny_causal_lm, tiny_encoder
from support.helpers import cli_here, samples
from support.retrieval_samples import WORDS, passages, write_dpr_tsv
from support.tiny_models import WORDS as T5_WORDS
from support.tiny_models import tiny_t5

pytestmark = needs("sentence_transformers", "bm25s")

QUESTION = "king queen castle?"


def documents() -> list[Document]:
    """Passages of several sentences each (FlashRAG splits at . ! ?), one with a FlashRAG title line."""
    docs = passages(40)[:8]
    out = [Document(id=d.id, title=d.title, text=f"{d.text}. {d.text[::-1]}! Why {d.text}?", score=1.0) for d in docs]
    out[0].metadata["title_line"] = '"Quoted title"'
    return out


def format_reference(docs: list[Document]) -> str:
    """FlashRAG's LLMLinguaRefiner/SelectiveContextRefiner.format_reference over each passage's `contents`
    (its title line, then its text; a passage without a title is its text)."""
    out = ""
    for idx, doc in enumerate(docs):
        content = passage_text(doc)
        title, text = content.split("\n")[0], "\n".join(content.split("\n")[1:])
        out += f"Doc {idx + 1}(Title: {title}) {text}\n"
    return out


@pytest.fixture(scope="module")
def encoder(tmp_path_factory) -> Path:
    return tiny_encoder(tmp_path_factory.mktemp("encoder"), list(WORDS) + [w[::-1] for w in WORDS] + ["why"])


@pytest.fixture(scope="module")
def causal_lm(tmp_path_factory) -> Path:
    texts = [f"Doc 1(Title: {d.title}) {d.text}" for d in documents()] + [QUESTION, '"Quoted title"']
    return tiny_causal_lm(tmp_path_factory.mktemp("lm"), texts)


def flashrag_extractive(encoder: Path, question: str, docs: list[Document], topk: int) -> str:
    """FlashRAG ExtractiveRefiner.batch_run on one item, its encoder replaced by sentence-transformers'
    with normalised embeddings (FlashRAG normalises the pooled output of every non-DPR model)."""
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(encoder))
    texts = [doc.text for doc in docs]
    sents = [i.strip() for i in re.split(r"(?<![A-Za-z]\.)(?<=[.!?])\s+", " ".join(texts)) if len(i.strip()) > 5]
    q = model.encode([question], normalize_embeddings=True)
    s = model.encode(sents, normalize_embeddings=True)
    scores = (q @ s.T)[0].tolist()
    if len(scores) < topk:
        return " ".join(sents)
    idxs = torch.topk(torch.Tensor(scores), min(topk, len(scores))).indices.tolist()
    return " ".join(sents[i] for i in sorted(idxs))


def test_recomp_extractive_keeps_the_sentences_flashrag_keeps(encoder):
    docs = documents()
    refiner = ExtractiveRefiner(model=str(encoder), topk=5)
    ours = refiner.refine_batch([(QUESTION, docs), ("running river", docs[:1]), ("song", docs[2:6])])
    assert ours == [
        flashrag_extractive(encoder, q, d, 5)
        for q, d in ((QUESTION, docs), ("running river", docs[:1]), ("song", docs[2:6]))
    ]
    assert ours[1] == " ".join(s for s in re.split(r"(?<![A-Za-z]\.)(?<=[.!?])\s+", docs[0].text) if len(s) > 5)


def test_recomp_abstractive_gives_the_models_own_generation_on_flashrags_input_format(tmp_path):
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    folder = tiny_t5(tmp_path / "t5")
    docs = [Document(id=str(i), title="t", text=" ".join(T5_WORDS[i : i + 6])) for i in range(4)]
    items = [("is the answer india", docs), ("what city", docs[:2])]
    ours = AbstractiveRefiner(model=str(folder), max_output_length=12).refine_batch(items)
    tokenizer, model = AutoTokenizer.from_pretrained(folder), AutoModelForSeq2SeqLM.from_pretrained(folder)
    inputs = [
        "Question: {question}\n Document: {document}\n Summary: ".format(
            question=q, document="\n".join(d.text for d in ds)
        )
        for q, ds in items
    ]
    encoded = tokenizer(inputs, return_tensors="pt", padding=True, truncation=True, max_length=1024)
    expected = tokenizer.batch_decode(
        model.generate(**encoded, max_length=12), skip_special_tokens=True, clean_up_tokenization_spaces=False
    )
    assert ours == expected


@pytest.mark.parametrize("count", [2, 8])
def test_longllmlingua_gives_what_llmlinguas_prompt_compressor_gives_with_flashrags_settings(
    causal_lm, monkeypatch, count
):
    """Two documents fit in one of llmlingua's 200-token windows: its own class runs unchanged on transformers
    5. Eight need its key-value cache carried between windows, which it keeps as [[key, value]] lists:
    both sides then use the adapter to transformers 5's DynamicCache (LegacyCacheModel)."""
    pytest.importorskip("llmlingua")
    import llmlingua.prompt_compressor as upstream

    from ragbench._components.llmlingua import LegacyCacheModel, LongLLMLinguaRefiner
    from ragbench.api.text import tiktoken_encoding

    docs = documents()[:count]
    ours = LongLLMLinguaRefiner(model=str(causal_lm)).refine_batch([(QUESTION, docs)])
    # llmlingua's own class, as FlashRAG's LLMLinguaRefiner builds and calls it (its token counter offline)
    monkeypatch.setattr(upstream.tiktoken, "encoding_for_model", lambda name: tiktoken_encoding("cl100k_base"))
    compressor = upstream.PromptCompressor(model_name=str(causal_lm), device_map="cpu")
    if count > 2:
        compressor.model = LegacyCacheModel(compressor.model)
    reference = format_reference(docs)
    expected = compressor.compress_prompt(
        [line for line in reference.split("\n") if line != ""],
        instruction="",
        question=QUESTION,
        rate=0.55,
        condition_in_question="after_condition",
        reorder_context="sort",
        dynamic_context_compression_ratio=0.3,
        condition_compare=True,
        context_budget="+100",
        rank_method="longllmlingua",
    )["compressed_prompt"]
    assert ours == [expected] and expected.endswith(QUESTION)


def test_selective_context_drops_the_tokens_of_least_self_information(causal_lm):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    docs = documents()[:3]
    keep_all = SelectiveContextRefiner(model=str(causal_lm), reduce_ratio=0.0)
    text = format_reference(docs)
    sentences = [
        s.strip()
        for s in re.split(r"(?<!\w\.\w.)(?<![A-Z][a-z]\.)(?<=\.|\?)\s", re.sub(r"\s+", " ", text))
        if s.strip()
    ]
    assert keep_all.refine_batch([(QUESTION, docs)]) == [" ".join(sentences)]  # nothing below the 0th percentile

    tokenizer, model = AutoTokenizer.from_pretrained(causal_lm), AutoModelForCausalLM.from_pretrained(causal_lm)
    units, infos = [], []
    for n, sentence in enumerate(sentences):  # the self-information of FlashRAG's _get_self_info_via_gpt2
        ids = tokenizer(f"<|endoftext|>{sentence}", add_special_tokens=False, return_tensors="pt")["input_ids"]
        with torch.inference_mode():
            probs = torch.softmax(model(input_ids=ids).logits, dim=-1)
        info = (-torch.log(probs))[:, :-1].gather(-1, ids[:, 1:].unsqueeze(-1)).reshape(-1).tolist()
        tokens = [tokenizer.decode(t) for t in ids[0, 1:].tolist()]
        units += [(" " if n and i == 0 else "") + t for i, t in enumerate(tokens)]
        infos += info
    threshold = np.nanpercentile(infos, 50)
    expected = "".join(u for u, i in zip(units, infos) if not i < threshold)
    [ours] = SelectiveContextRefiner(model=str(causal_lm)).refine_batch([(QUESTION, docs)])
    assert ours == expected and len(ours) < len(" ".join(sentences))


@pytest.fixture
def index(tmp_path) -> Path:
    corpus = write_dpr_tsv(tmp_path / "psgs.tsv", documents() + passages(30)[10:])
    build_index(corpus, tmp_path / "index", "bm25", {}, progress=False, registry=installed_registry())
    return tmp_path / "index"


def test_vanilla_shows_the_refined_text_as_flashrags_formatted_reference_and_keeps_the_documents_read(
    tmp_path, encoder, index
):
    from ragbench.api.flashrag import FLASHRAG_RAG_TEMPLATE

    data = tmp_path / "nq.jsonl"
    data.write_text(json.dumps({"id": "q1", "question": QUESTION, "golden_answers": ["castle"]}) + "\n")
    results = bm25_vanilla_run(
        tmp_path, data, index, refiner="recomp_extractive", refiner_args={"model": str(encoder), "topk": 3}
    )
    assert results["counts"][TASK]["scored"] == 1 and results["config"]["refiner"] == "recomp_extractive"
    [sample] = samples(tmp_path / "run", TASK)
    assert [(s["kind"], s["name"]) for s in sample["trace"]] == [
        ("retrieval", "retrieve"),
        ("custom", "refine"),
        ("llm", "answer"),
    ]
    retrieved = sample["trace"][0]["response"]["ids"]
    refine = sample["trace"][1]
    assert refine["request"]["docs"] == retrieved and refine["group"] == ["retrieval"]
    [shown] = refine["docs"]  # the refiner's text, shown in place of the documents ...
    assert shown["metadata"]["refined_from"] == retrieved
    # ... and the sample keeps the documents it read, which document metrics score (FlashRAG's retrieval_result)
    assert [doc["id"] for doc in sample["prediction"]["docs"]] == retrieved
    prompt = sample["trace"][2]["request"]["prompt"]
    assert prompt == (
        FLASHRAG_RAG_TEMPLATE.system.format(reference=shown["text"])
        + "\n\n"
        + FLASHRAG_RAG_TEMPLATE.user.format(question=QUESTION)
    )


def test_a_missing_refiner_model_is_refused_by_the_preflight(tmp_path, index):
    data = tmp_path / "nq.jsonl"
    data.write_text(json.dumps({"id": "q1", "question": QUESTION, "golden_answers": ["castle"]}) + "\n")
    result = cli_here(
        "check",
        *bm25_args(data, index),
        "--refiner",
        "recomp_abstractive",
        "--refiner-arg",
        "model=/no/such/t5",
        "--no-model",
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "refiner recomp_abstractive: model=/no/such/t5: no such file or folder" in result.stderr
