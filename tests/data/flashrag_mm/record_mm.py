"""Record FlashRAG's multimodal pipeline (`MMSequentialPipeline`, flashrag/pipeline/mm_pipeline.py) call for call, as
the parity fixture `recording.json` next to this script.

FlashRAG is NOT a dependency of ragbench: this script is run by hand in a Python that imports FlashRAG's source (the
commit NOTES.md names) with torch, transformers, datasets and pillow, and termcolor, base58 and langid, which
`flashrag.pipeline` imports. It ran as::

    PYTHONPATH=FLASHRAG_SOURCE:EXTRA python tests/data/flashrag_mm/record_mm.py

It first draws the fixture's pictures (`images/*.png`, the same bytes every time), then runs each form of
`FORMS` with real FlashRAG code: `MMSequentialPipeline.run` / `naive_run`, `MMPromptTemplate` or
`MathVistaPromptTemplate`, `MultiRetrieverRouter` (merge "concat", as examples/run_mm/rum_mm_exp.py configures it)
over a BM25 and a CLIP retriever, and `HFMultiModalGenerator.generate` (its parameter handling). Fake: the two
retrievers' searches (`FakeBM25`: word overlap; `FakeClip`: the nearest mean colour; each a subclass of FlashRAG's
own class, as the router tells them apart by class) and the inference engine under the generator (`FakeEngine`:
records the messages it is given, each image by its file name, and answers with `respond`).
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
IMAGES = HERE / "images"
# name: (width, height, background, square colour): the questions' pictures q*, the corpus's d*
PICTURES = {
    "q1": (12, 10, (200, 30, 30), (250, 250, 250)),
    "q2": (10, 12, (30, 160, 40), (0, 0, 0)),
    "q3": (14, 8, (40, 40, 210), (255, 220, 0)),
    "d1": (10, 10, (210, 40, 20), (240, 240, 240)),
    "d2": (8, 8, (20, 170, 60), (10, 10, 10)),
    "d3": (9, 11, (50, 50, 190), (250, 200, 20)),
    "d4": (11, 9, (120, 120, 120), (200, 0, 200)),
}
CORPUS = [
    {"id": "d1", "text": "A red flag with a white square.", "image": "d1", "golden_answers": ["B"]},
    {"id": "d2", "text": "A green field at night.", "image": "d2", "golden_answers": ["AC"]},
    {"id": "d3", "text": "A blue sea under a yellow sun.", "image": "d3", "golden_answers": ["D"]},
    {"id": "d4", "text": "A grey stone with a purple mark.", "image": "d4", "golden_answers": ["A"]},
    {"id": "t1", "contents": "Flags\nThe flag of a country is often red and white."},
    {"id": "t2", "contents": "Sea\nThe sea is blue because water absorbs red light."},
    {"id": "t3", "contents": "Night\nAt night a field looks dark green or black."},
]
QUESTIONS = [
    {"id": "a", "question": "What colour is the flag?", "image": "q1", "question_type": "free_form"},
    {"id": "b", "question": "Is the field green at night?", "image": "q2", "question_type": "multi_choice"},
    {"id": "c", "question": "Why is the sea blue?", "image": "q3", "question_type": "free_form"},
]
# GAOKAO-MM's kind of question, asked of the same pictures
GAOKAO_QUESTIONS = [
    {**QUESTIONS[0], "question_type": "single_choice", "subject": "地理"},
    {**QUESTIONS[1], "question_type": "multiple_choice", "subject": "生物"},
    {**QUESTIONS[2], "question_type": "multiple_choice", "subject": "物理"},
]
# rum_mm_exp.py's zero-shot GAOKAO-MM prompt (its `no-ret` mode)
GAOKAO_ZERO_SHOT = (
    "请你做一道{subject}选择题\n请你结合文字和图片一步一步思考,并将思考过程写在【解析】和<eoe>之间。{instruction}\n"
    "例如：{example}\n请你严格按照上述格式作答。\n题目如下：{question}"
)
# form: pipeline method, template, modalities searched (perform_modality_dict), BM25 and CLIP top-k, max_new_tokens
FORMS: dict[str, dict[str, Any]] = {
    "mmqa": {"method": "run", "template": "mm", "modality": None, "bm25": 1, "clip": 1, "max_new_tokens": 128},
    "mmqa_k2": {"method": "run", "template": "mm", "modality": None, "bm25": 2, "clip": 2, "max_new_tokens": 128},
    "text_only": {
        "method": "run",
        "template": "mm",
        "modality": {"text": ["text"]},
        "bm25": 2,
        "clip": 1,
        "max_new_tokens": 128,
    },
    "no_retrieval": {
        "method": "naive_run",
        "template": "mm",
        "modality": None,
        "bm25": 1,
        "clip": 1,
        "max_new_tokens": 128,
    },
    "mathvista": {
        "method": "run",
        "template": "mathvista",
        "modality": None,
        "bm25": 1,
        "clip": 2,
        "max_new_tokens": 256,
    },
    # rum_mm_exp.py's gaokao_mm: text search only, answers parsed by gaokaomm_pred_parse
    "gaokao": {
        "method": "run",
        "template": "gaokao",
        "modality": {"text": ["text"]},
        "bm25": 2,
        "clip": 1,
        "max_new_tokens": 128,
    },
    "gaokao_no_retrieval": {
        "method": "naive_run",
        "template": "gaokao",
        "modality": None,
        "bm25": 1,
        "clip": 1,
        "max_new_tokens": 128,
    },
}


def respond(images: int, text: str) -> str:
    """The fake model's answer: how many images and references it was shown, and a digest of the text; to a
    GAOKAO-MM prompt, choices by the digest, after 【答案】 or at the end."""
    digest = hashlib.sha1(text.encode()).hexdigest()
    answer = f"{images} images, {text.count('Example ')} examples, {digest[:8]}"
    if "选择题" not in text:
        return answer
    choices = "".join(letter for letter, bit in zip("ABCD", f"{int(digest[:2], 16):08b}") if bit == "1") or "B"
    return (
        f"{answer}\n【解析】 ... <eoe>\n【答案】 {choices} <eoa>" if int(digest[2], 16) % 2 else f"{answer} {choices}"
    )


def colour_distance(one: Any, other: Any) -> float:
    """The L1 distance of two PIL pictures' mean colours."""
    means = [[sum(band) / len(band) for band in zip(*picture.getdata())] for picture in (one, other)]
    return sum(abs(a - b) for a, b in zip(*means))


def draw() -> None:
    """The pictures as PNG files (PIL's encoder, no metadata): a background with a square in one corner."""
    from PIL import Image, ImageDraw

    IMAGES.mkdir(exist_ok=True)
    for name, (width, height, background, square) in PICTURES.items():
        picture = Image.new("RGB", (width, height), background)
        ImageDraw.Draw(picture).rectangle([1, 1, 4, 4], fill=square)
        picture.save(IMAGES / f"{name}.png", format="PNG")


def record() -> dict[str, Any]:
    from flashrag.generator import multimodal_generator
    from flashrag.retriever.retriever import BM25Retriever, MultiModalRetriever, MultiRetrieverRouter
    from PIL import Image

    pictures = {name: Image.open(IMAGES / f"{name}.png") for name in PICTURES}
    for picture in pictures.values():
        picture.load()
    names = {picture.tobytes(): name for name, picture in pictures.items()}
    searches: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []

    def row(doc: dict[str, Any]) -> dict[str, Any]:
        # a corpus row as FlashRAG's load_corpus gives it: `contents` is `text` where the corpus has none
        out = dict(doc)
        if "image" in doc:
            out["image"], out["contents"] = pictures[doc["image"]], doc["text"]
        return out

    def words(text: str) -> set[str]:
        return set(re.findall(r"[a-z]+", text.lower()))

    class FakeBM25(BM25Retriever):
        def __init__(self, topk: int) -> None:
            self.topk, self.retrieval_method, self.corpus_path = topk, "bm25", "corpus"

        def batch_search(self, query, num=None, return_score=False):
            results = []
            for text in query:
                ranked = sorted(CORPUS, key=lambda d: -len(words(text) & words(d.get("contents") or d["text"])))
                hits = [row(d) for d in ranked[: self.topk]]
                searches.append({"query": text, "retriever": "bm25", "ids": [d["id"] for d in hits]})
                results.append(hits)
            return (results, [[0.0] * len(r) for r in results]) if return_score else results

    class FakeClip(MultiModalRetriever):
        def __init__(self, topk: int) -> None:
            self.topk, self.retrieval_method, self.corpus_path = topk, "openai-clip", "corpus"

        def batch_search(self, query, target_modal="text", num=None, return_score=False):
            assert target_modal == "image" and all(isinstance(q, Image.Image) for q in query)
            results = []
            for picture in query:
                ranked = sorted(
                    (d for d in CORPUS if "image" in d),
                    key=lambda d, picture=picture: colour_distance(picture, pictures[d["image"]]),
                )
                hits = [row(d) for d in ranked[: self.topk]]
                searches.append(
                    {"query": {"image": names[picture.tobytes()]}, "retriever": "clip", "ids": [d["id"] for d in hits]}
                )
                results.append(hits)
            return (results, [[0.0] * len(r) for r in results]) if return_score else results

    class FakeEngine(multimodal_generator.BaseInferenceEngine):
        def _load_model(self):
            pass

        def generate(self, input_list, **params):
            outputs = []
            for messages in input_list:
                shown = []
                for message in messages:
                    parts = message["content"] if isinstance(message["content"], list) else [message["content"]]
                    for part in parts:
                        if isinstance(part, str):
                            shown.append({"role": message["role"], "text": part})
                        elif part["type"] == "image":
                            shown.append({"role": message["role"], "image": names[part["image"].tobytes()]})
                        else:
                            shown.append({"role": message["role"], "text": part["text"]})
                text = "".join(p.get("text", "") for p in shown)
                answer = respond(sum("image" in p for p in shown), text)
                calls.append({"parts": shown, "params": {k: str(v) for k, v in params.items()}, "answer": answer})
                outputs.append(answer)
            return outputs

    multimodal_generator.HFModelInferenceEngineFactory._engine_map = {"fake": FakeEngine}
    model = HERE / "_fake_vlm"
    model.mkdir(exist_ok=True)
    (model / "config.json").write_text(json.dumps({"architectures": ["FakeVisionModel"], "vision_config": {}}))

    from flashrag.dataset import Dataset
    from flashrag.pipeline import MMSequentialPipeline
    from flashrag.prompt import GAOKAOMMPromptTemplate, MathVistaPromptTemplate, MMPromptTemplate
    from flashrag.utils import gaokaomm_pred_parse

    out: dict[str, Any] = {}
    for form, spec in FORMS.items():
        config = {
            "device": "cpu",
            "save_dir": str(model),
            "save_metric_score": False,
            "save_intermediate_data": False,
            "metrics": [],
            "generator_model": "fake",
            "generator_model_path": str(model),
            "generator_max_input_len": 8192,
            "generator_batch_size": 1,
            "generation_params": {"max_new_tokens": spec["max_new_tokens"]},
            "framework": "hf",
        }
        router = MultiRetrieverRouter.__new__(MultiRetrieverRouter)
        router.merge_method, router.final_topk, router.config = "concat", 5, config
        router.retriever_list = [FakeBM25(spec["bm25"]), FakeClip(spec["clip"])]
        if spec["template"] == "gaokao":
            zero_shot = spec["method"] == "naive_run"
            template = GAOKAOMMPromptTemplate(config, user_prompt=GAOKAO_ZERO_SHOT if zero_shot else None)
        else:
            template = (MMPromptTemplate if spec["template"] == "mm" else MathVistaPromptTemplate)(config)
        questions = GAOKAO_QUESTIONS if spec["template"] == "gaokao" else QUESTIONS
        parse = gaokaomm_pred_parse if spec["template"] == "gaokao" else None
        generator = multimodal_generator.HFMultiModalGenerator(config)
        pipeline = MMSequentialPipeline(config, prompt_template=template, retriever=router, generator=generator)
        dataset = Dataset(config, data=[{**q, "image": pictures[q["image"]]} for q in questions])
        searches.clear()
        calls.clear()
        if spec["method"] == "naive_run":
            pipeline.naive_run(dataset, do_eval=False, pred_process_func=parse)
        elif spec["modality"] is None:
            pipeline.run(dataset, do_eval=False, pred_process_func=parse)
        else:
            pipeline.run(dataset, do_eval=False, perform_modality_dict=spec["modality"], pred_process_func=parse)
        out[form] = {
            **spec,
            "searches": list(searches),
            "calls": list(calls),
            "questions": questions,
            "pred": dict(zip(dataset.id, dataset.pred)),
        }
    for path in model.iterdir():
        path.unlink()
    model.rmdir()
    return out


if __name__ == "__main__":
    draw()
    forms = record()
    fixture = {"corpus": CORPUS, "questions": QUESTIONS, "forms": forms}
    (HERE / "recording.json").write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n")
    print({form: len(spec["calls"]) for form, spec in forms.items()}, file=sys.stderr)
