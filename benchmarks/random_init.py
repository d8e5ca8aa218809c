"""Model folders of a real architecture with random weights, for speed figures on a machine that can
fetch no checkpoint: the time of a forward pass depends on the shapes, not on the values.

  python benchmarks/random_init.py LIKE OUT [--preset llama-1b]

copies every file of the folder LIKE except its weights (tokenizer, sentence-transformers modules,
generation config), takes LIKE's config.json with the preset's shapes laid over it, and writes
random weights for that config into OUT in the config's dtype (on the GPU when there is one, so a
1B model takes seconds). LIKE needs no weights of its own: a folder holding the tokenizer and
config files is enough, which is what travels to a GPU node.

Presets: `llama-1b`, Llama-3.2-1B's shapes (16 layers, hidden 2048, MLP 8192, 32 heads, 8 KV heads,
tied embeddings, bf16) with LIKE's vocabulary: 1.0B parameters with SmolLM2's 49,152 tokens. `e5-base`,
e5-base-v2's (BERT-base: 12 layers, hidden 768, MLP 3072, 12 heads) over a BERT folder: 109M parameters with
all-MiniLM-L6-v2's 30,522 tokens.
Without a preset LIKE's own shapes are kept (all-MiniLM-L6-v2 for the CRAG embedder, say).

  --quick   a 2-layer model of LIKE's shapes (default: the embedded SmolLM2's folder) into a
            temporary folder, loaded back and run once (tests/project/test_benchmarks_quick.py)
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

WEIGHTS = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".h5", ".msgpack", ".onnx")
PRESETS = {
    "llama-1b": {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": 2048,
        "intermediate_size": 8192,
        "num_hidden_layers": 16,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 64,
        "max_position_embeddings": 8192,
        "rope_theta": 500000.0,
        "rms_norm_eps": 1e-5,
        "tie_word_embeddings": True,
        "hidden_act": "silu",
        "dtype": "bfloat16",
    },
    # e5-base-v2's shapes (BERT-base: FlashRAG's default dense encoder), over a BERT folder such as all-MiniLM-L6-v2's
    "e5-base": {
        "hidden_size": 768,
        "intermediate_size": 3072,
        "num_hidden_layers": 12,
        "num_attention_heads": 12,
        "max_position_embeddings": 512,
    },
    "tiny": {"num_hidden_layers": 2},
}


def write_random_model(like: Path, out: Path, preset: dict | None = None) -> int:
    """OUT: LIKE's files but its weights, and random weights for LIKE's config with `preset` laid
    over it; returns the parameter count."""
    if not (like / "config.json").is_file():
        raise SystemExit(f"{like}: no config.json; LIKE is a model folder (its config and tokenizer files)")
    try:
        settings = json.loads((like / "config.json").read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SystemExit(f"{like / 'config.json'}: not JSON ({exc})") from exc
    if preset and "dtype" in preset:
        settings.pop("torch_dtype", None)  # the older name of the same setting
    settings.update(preset or {})
    if "model_type" not in settings:
        raise SystemExit(f"{like / 'config.json'}: no model_type")
    import torch
    from transformers import AutoConfig, AutoModel, AutoModelForCausalLM

    out.mkdir(parents=True, exist_ok=True)
    for path in like.rglob("*"):
        if path.is_file() and not path.name.endswith(WEIGHTS):
            target = out / path.relative_to(like)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
    config = AutoConfig.for_model(**settings)
    dtype = getattr(torch, str(settings.get("dtype") or settings.get("torch_dtype") or "float32"))
    causal = any(name.endswith("ForCausalLM") for name in settings.get("architectures") or [])
    device = "cuda" if torch.cuda.is_available() else "cpu"
    with torch.device(device):
        model = (AutoModelForCausalLM if causal else AutoModel).from_config(config, dtype=dtype)
    model.save_pretrained(out)
    return sum(parameter.numel() for parameter in model.parameters())


def quick(like: Path) -> None:
    """A 2-layer model of LIKE's shapes, loaded back and run once."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    with tempfile.TemporaryDirectory() as scratch:
        count = write_random_model(like, Path(scratch), PRESETS["tiny"])
        model = AutoModelForCausalLM.from_pretrained(scratch)
        tokenizer = AutoTokenizer.from_pretrained(scratch)
        ids = tokenizer("A question?", return_tensors="pt")
        with torch.inference_mode():
            out = model.generate(**ids, max_new_tokens=4, do_sample=False)
        print(
            f"random 2-layer model of {like.name}'s shapes: {count / 1e6:.1f}M parameters, "
            f"generated {out.shape[1] - ids['input_ids'].shape[1]} tokens"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("like", nargs="?", type=Path)
    parser.add_argument("out", nargs="?", type=Path)
    parser.add_argument("--preset", choices=sorted(PRESETS))
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        from ragbench._engines.local.embedded import embedded_safetensors_dir

        quick(args.like or embedded_safetensors_dir())
        return
    if args.like is None or args.out is None:
        parser.error("LIKE and OUT are needed")
    count = write_random_model(args.like, args.out, PRESETS.get(args.preset))
    print(
        f"{args.out}: {count / 1e9:.2f}B parameters, random weights of {args.like.name}'s "
        f"{'shapes' if args.preset is None else args.preset + ' shapes'}"
    )


if __name__ == "__main__":
    main()
