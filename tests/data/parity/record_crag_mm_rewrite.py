"""Records tests/data/parity/crag_mm_rewrite.json: CRAG-MM's query-rewrite pipeline (facebookresearch/CRAG-MM at
36b6b4bcd5405b440d9f0f6d74cef6f2fcace2be), run unchanged on the rows of crag_mm_rewrite_cases.json.

Step 1, in ragbench's venv (writes the rows as v0.1.2 datasets, and the Llama-3.2 stand-in tokenizer):
    python record_crag_mm_rewrite.py prepare DATA
Step 2, in a venv with datasets, pillow, pydantic, tokenizers, loguru, rich, tqdm, requests, openai and numpy (the
repository's evaluation imports them; torch, vllm, transformers, mistral_common, qwen_vl_utils and cragmm_search are
stood in for here, never called):
    python record_crag_mm_rewrite.py record CRAG_MM_CHECKOUT DATA
"""

import glob
import hashlib
import importlib.metadata as md
import json
import os
import sys
import tempfile
import types
from pathlib import Path
from types import SimpleNamespace

HERE = Path(__file__).resolve().parent
CASES = json.loads((HERE / "crag_mm_rewrite_cases.json").read_text(encoding="utf-8"))
MODEL = "meta-llama/Llama-3.2-11B-Vision-Instruct"
STUBBED = (
    "torch",
    "vllm",
    "vllm.multimodal",
    "vllm.multimodal.utils",
    "vllm.sampling_params",
    "mistral_common",
    "mistral_common.protocol",
    "mistral_common.protocol.instruct",
    "mistral_common.protocol.instruct.request",
    "mistral_common.tokens",
    "mistral_common.tokens.tokenizers",
    "mistral_common.tokens.tokenizers.mistral",
    "qwen_vl_utils",
    "transformers",
    "cragmm_search",
    "cragmm_search.search",
)
CALLS: list[dict] = []
SEARCHES: list[dict] = []


def prepare(data: Path) -> None:
    sys.path.insert(0, str(HERE.parents[1]))
    from ragbench.tasks.crag_mm.synthetic import standin_llama32_tokenizer, write_dataset
    from support.crag_mm_helpers import case_rows

    for kind in ("single", "multi"):
        write_dataset(data / kind, case_rows(CASES[kind]), layout="saved")
    standin_llama32_tokenizer(data / "tok")


class Params:
    """vllm.SamplingParams / GuidedDecodingParams: what they were given."""

    def __init__(self, **kwargs):
        self.kwargs = kwargs

    def as_json(self):
        return {k: (v.as_json() if isinstance(v, Params) else v) for k, v in self.kwargs.items()}


class FakeTokenizer:
    """The chat template's input as JSON text: the prompt the fake model reads back is the messages themselves."""

    def apply_chat_template(self, messages, add_generation_prompt=False, tokenize=True):
        return json.dumps(
            {"messages": messages, "add_generation_prompt": add_generation_prompt, "tokenize": tokenize},
            ensure_ascii=False,
        )


def reply(messages):
    """The cases' reply to the call: by the quoted question for the rewrite calls, by the last message for answers."""
    from example_agents.prompt_constants import QUERY_REWRITE_STEP_1, QUERY_REWRITE_SYSTEM

    if messages[0]["content"] == QUERY_REWRITE_SYSTEM:
        [query] = [q for q in CASES["replies"] if QUERY_REWRITE_STEP_1.format(question=q) == messages[2]["content"]]
        return CASES["replies"][query]["analysis" if len(messages) == 3 else "rewrite"]
    return CASES["replies"][messages[-1]["content"]]["answer"]


class FakeLLM:
    def __init__(self, *args, **kwargs):
        pass

    def get_tokenizer(self):
        return FakeTokenizer()

    def generate(self, inputs, sampling_params=None):
        outputs = []
        for item in inputs:
            prompt, data = (item["prompt"], item["multi_modal_data"]) if isinstance(item, dict) else (item, None)
            rendered = json.loads(prompt)
            image = (data or {}).get("image")
            text = reply(rendered["messages"])
            CALLS.append(
                {
                    "messages": rendered["messages"],
                    "add_generation_prompt": rendered["add_generation_prompt"],
                    "multi_modal_data": None if data is None else sorted(data),
                    "image_rgb_sha256": None
                    if image is None
                    else hashlib.sha256(image.convert("RGB").tobytes()).hexdigest(),
                    "sampling": sampling_params.as_json(),
                    "reply": text,
                }
            )
            outputs.append(SimpleNamespace(outputs=[SimpleNamespace(text=text)]))
        return outputs


def pipeline(query, k):
    """UnifiedSearchPipeline's stand-in: the cases' image results for a picture, their web results for a text."""
    if isinstance(query, str):
        SEARCHES.append({"query": query, "k": k})
        return [dict(result) for result in CASES["search_results"]]
    SEARCHES.append({"image_rgb_sha256": hashlib.sha256(query.convert("RGB").tobytes()).hexdigest(), "k": k})
    return json.loads(json.dumps(CASES["image_results"]))


def stand_in(data: Path) -> None:
    """The modules the agents import but this run never calls, vLLM as the fake, the hub tokenizer as the stand-in."""
    for name in STUBBED:
        sys.modules[name] = types.ModuleType(name)
    m = sys.modules
    m["torch"].cuda = SimpleNamespace(device_count=lambda: 1)
    m["mistral_common.protocol.instruct.request"].ChatCompletionRequest = None
    m["mistral_common.tokens.tokenizers.mistral"].MistralTokenizer = None
    m["qwen_vl_utils"].process_vision_info = None
    m["transformers"].AutoProcessor = m["transformers"].AutoTokenizer = None
    m["vllm.multimodal.utils"].encode_image_base64 = None
    m["cragmm_search.search"].UnifiedSearchPipeline = object
    m["vllm"].SamplingParams = m["vllm.sampling_params"].GuidedDecodingParams = Params
    m["vllm"].LLM = FakeLLM
    import requests
    import tokenizers

    requests.get = None  # no network
    tokenizer_file = str(data / "tok" / "tokenizer.json")
    tokenizers.Tokenizer.from_pretrained = staticmethod(lambda *a, **k: tokenizers.Tokenizer.from_file(tokenizer_file))


def record(checkout: Path, data: Path) -> None:
    from datasets import load_from_disk  # before torch is stood in for: datasets looks for it

    sys.path.insert(0, str(checkout))
    os.environ["CRAG_CACHE_DIR"] = tempfile.mkdtemp()
    stand_in(data)
    from evaluation import CRAGEvaluator
    from example_agents.open_source_model_agents import LlamaAgent, QueryRewrite
    from example_agents.prompt_constants import QueryAnalysis
    from utils.utils import parse_jsonl_to_dict

    versions = ", ".join(f"{p} {md.version(p)}" for p in ("datasets", "pillow", "pydantic", "tokenizers"))
    out = {
        "how": (
            "facebookresearch/CRAG-MM at 36b6b4bcd5405b440d9f0f6d74cef6f2fcace2be, unchanged: per dataset (ragbench's "
            "rows, crag_mm_rewrite_cases.json, written with ragbench.tasks.crag_mm.synthetic.write_dataset, layout "
            "saved), 1. CRAGEvaluator(agent=QueryRewrite, no search).generate_agent_responses + save_turn_data (its "
            "response.jsonl), 2. CRAGEvaluator(agent=LlamaAgent, web_search=True, image_search=True, "
            "full_query_path=that file).generate_agent_responses, as local_evaluation.py --mode generate "
            "--full-query-path does. vllm.LLM is a fake whose tokenizer's "
            "apply_chat_template returns its messages as JSON and whose generate records each input (messages, the "
            "picture's RGB sha256, SamplingParams/GuidedDecodingParams as given) and replies from the cases' replies "
            "by query; the search pipeline is a fake returning the cases' image_results for every picture and their "
            "search_results for every text, recording (the picture's RGB sha256 or the query, k). "
            "Tokenizer.from_pretrained reads ragbench's Llama-3.2 stand-in (one token per byte). torch, "
            f"vllm, transformers, mistral_common, qwen_vl_utils, cragmm_search stubbed. {versions}, python "
            f"{sys.version.split()[0]}"
        ),
        "schema": QueryAnalysis.model_json_schema(),
    }
    for kind, dataset_type in (("single", "single-turn"), ("multi", "multi-turn")):
        CALLS.clear()
        SEARCHES.clear()
        common = dict(dataset=load_from_disk(str(data / kind))["validation"], show_progress=False)
        common["dataset_type"] = dataset_type
        rewrite = CRAGEvaluator(agent=QueryRewrite(model_name=MODEL), **common)
        rewrite.initialize_for_generation()
        rewrite.generate_agent_responses()
        folder = tempfile.mkdtemp()
        rewrite.save_turn_data(os.path.join(folder, "response.jsonl"))  # into folder/<timestamp>/
        [path] = glob.glob(os.path.join(folder, "*", "response.jsonl"))
        rewrite_calls = list(CALLS)
        CALLS.clear()
        answer = CRAGEvaluator(
            agent=LlamaAgent(model_name=MODEL),
            web_search=True,
            image_search=True,
            search_pipeline=pipeline,
            full_query_path=path,
            **common,
        )
        answer.initialize_for_generation()
        answer.generate_agent_responses()
        full = parse_jsonl_to_dict(path)
        out[kind] = {
            "rewrite_calls": rewrite_calls,
            "answer_calls": list(CALLS),
            "searches": list(SEARCHES),
            "turns": [
                {
                    "interaction_id": t["interaction_id"],
                    "query": t["query"],
                    "rewrite_response": rewrite.agent_response_map[t["interaction_id"]],
                    "full_query": full.get(t["interaction_id"], ""),
                    "agent_response": t["agent_response"],
                }
                for t in answer.all_turn_data
            ],
        }
    (HERE / "crag_mm_rewrite.json").write_text(json.dumps(out, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1] == "prepare":
        prepare(Path(sys.argv[2]))
    else:
        record(Path(sys.argv[2]), Path(sys.argv[3]))
