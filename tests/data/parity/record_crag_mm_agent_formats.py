"""Records tests/data/parity/crag_mm_agent_formats.json: what CRAG-MM's PixtralAgent, QwenAgent and InternVLAgent
(facebookresearch/CRAG-MM at 36b6b4bcd5405b440d9f0f6d74cef6f2fcace2be, example_agents/open_source_model_agents.py)
hand vLLM, run unchanged on the queries, histories and search blocks of crag_mm_agent.json's cases, each with a
picture of tests/support/crag_mm_pictures.py.

In a venv with pillow, pandas, rich, pydantic, mistral_common and qwen_vl_utils (torch, torchvision, vllm and
transformers are stood in for here: torchvision only for qwen_vl_utils' import, its video reading never called):
    python record_crag_mm_agent_formats.py CRAG_MM_CHECKOUT
"""

import base64
import hashlib
import importlib.metadata as md
import io
import json
import sys
import types
from pathlib import Path
from types import SimpleNamespace

HERE = Path(__file__).resolve().parent
CASES = json.loads((HERE / "crag_mm_agent.json").read_text(encoding="utf-8"))["cases"]
STUBBED = (
    "torch",
    "torchvision",
    "torchvision.io",
    "torchvision.transforms",
    "vllm",
    "vllm.multimodal",
    "vllm.multimodal.utils",
    "vllm.sampling_params",
    "transformers",
)
CALLS: list[dict] = []


class Params:
    """vllm.SamplingParams: what it was given."""

    def __init__(self, **kwargs):
        self.kwargs = kwargs


class FakeTemplate:
    """AutoTokenizer / AutoProcessor: the chat template's input as JSON text (the messages before templating)."""

    def apply_chat_template(self, messages, add_generation_prompt=False, tokenize=True):
        return json.dumps({"messages": messages, "add_generation_prompt": add_generation_prompt}, ensure_ascii=False)


def picture_record(image):
    """A picture by its size, mode and pixels' sha256."""
    return {"size": list(image.size), "mode": image.mode, "sha256": hashlib.sha256(image.tobytes()).hexdigest()}


def by_digest(value):
    """The messages with each data URL as the sha256 of the bytes it holds (the fixture stays small)."""
    if isinstance(value, list):
        return [by_digest(v) for v in value]
    if isinstance(value, dict):
        return {k: by_digest(v) for k, v in value.items()}
    if isinstance(value, str) and value.startswith("data:image/jpeg;base64,"):
        return "sha256:" + hashlib.sha256(base64.b64decode(value.split(",", 1)[1])).hexdigest()
    return value


class FakeLLM:
    def generate(self, inputs, sampling_params=None):
        for item in inputs:
            prompt = item["prompt"]
            images = item["multi_modal_data"].get("image")
            images = images if isinstance(images, list) or images is None else [images]
            try:
                rendered = {"messages": by_digest(json.loads(prompt)["messages"])}
            except json.JSONDecodeError:  # Pixtral's: mistral_common's text
                rendered = {"prompt": prompt}
            CALLS.append(
                {
                    **rendered,
                    "multi_modal_data": sorted(item["multi_modal_data"]),
                    "images": None if images is None else [picture_record(image) for image in images],
                    "sampling": sampling_params.kwargs,
                }
            )
        return [SimpleNamespace(outputs=[SimpleNamespace(text="")]) for _ in inputs]


def encode_image_base64(image, *, image_mode="RGB", format="JPEG"):
    """vllm 0.10.1.1's (multimodal/utils.py, ImageMediaIO.encode_base64; multimodal/image.py convert_image_mode): the
    picture in RGB (an RGBA one over white), saved as JPEG."""
    from PIL import Image

    if image.mode == "RGBA" and image_mode == "RGB":
        converted = Image.new("RGB", image.size, (255, 255, 255))
        converted.paste(image, mask=image.split()[3])
        image = converted
    elif image.mode != image_mode:
        image = image.convert(image_mode)
    buffer = io.BytesIO()
    image.save(buffer, format)
    return base64.b64encode(buffer.getvalue()).decode("utf-8")


def stand_in() -> None:
    for name in STUBBED:
        sys.modules[name] = types.ModuleType(name)
    m = sys.modules
    m["torch"].cuda = SimpleNamespace(device_count=lambda: 1)
    m["torch"].Tensor = object
    m["torchvision"].io, m["torchvision"].transforms = m["torchvision.io"], m["torchvision.transforms"]
    m["torchvision.transforms"].InterpolationMode = None
    m["transformers"].AutoProcessor = m["transformers"].AutoTokenizer = SimpleNamespace(
        from_pretrained=lambda *a, **k: FakeTemplate()
    )
    m["vllm.multimodal.utils"].encode_image_base64 = encode_image_base64
    m["vllm"].SamplingParams = Params
    m["vllm.sampling_params"].GuidedDecodingParams = Params
    m["vllm"].LLM = lambda *a, **k: FakeLLM()


def record(checkout: Path) -> None:
    sys.path[:0] = [str(checkout), str(HERE.parents[1])]
    stand_in()
    from example_agents.open_source_model_agents import InternVLAgent, PixtralAgent, QwenAgent
    from PIL import Image

    from support.crag_mm_pictures import PICTURES, gradient_png

    pictures = [Image.open(io.BytesIO(gradient_png(size, mode))) for size, mode in PICTURES]
    versions = ", ".join(f"{p} {md.version(p)}" for p in ("pillow", "mistral_common", "qwen-vl-utils"))
    out = {
        "how": (
            "facebookresearch/CRAG-MM at 36b6b4bcd5405b440d9f0f6d74cef6f2fcace2be, unchanged: "
            "PixtralAgent / QwenAgent / InternVLAgent(model_name=...).batch_generate_response over all the cases in "
            "one batch (crag_mm_agent.json's query, history and rag_context; case i with the PNG "
            "crag_mm_pictures.gradient_png(*PICTURES[i]) as PIL opens it). vllm.LLM is a fake recording each input: "
            "Pixtral's prompt as mistral_common renders it (MistralTokenizer.v3(is_tekken=True), real), Qwen's and "
            "InternVL's messages before templating (AutoProcessor/AutoTokenizer are a fake whose "
            "apply_chat_template returns its input as JSON; a data URL recorded as sha256: of its bytes), the "
            "multi_modal_data pictures (size, mode, pixels' sha256; Qwen's from qwen_vl_utils.process_vision_info, real) and "
            "the SamplingParams as given. vllm.multimodal.utils.encode_image_base64 stood in by vLLM 0.10.1.1's "
            f"(RGB, RGBA over white; JPEG); torch, torchvision, vllm, transformers stubbed. {versions}, python "
            f"{sys.version.split()[0]}"
        ),
        "pictures": [[list(size), mode] for size, mode in PICTURES],
    }
    for name, agent_class in (("pixtral", PixtralAgent), ("qwen", QwenAgent), ("internvl", InternVLAgent)):
        CALLS.clear()
        agent = agent_class(model_name=f"stand-in/{name}")
        agent.batch_generate_response(
            [case["query"] for case in CASES],
            pictures,
            [case["history"] for case in CASES],
            [case["rag_context"] for case in CASES],
        )
        out[name] = list(CALLS)
    (HERE / "crag_mm_agent_formats.json").write_text(json.dumps(out, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    record(Path(sys.argv[1]))
