"""The small Self-RAG-shaped model of the log-prob window parity test (tests/test_selfrag_window_*.py):
the embedded SmolLM2 with Self-RAG's reflection tokens added, each new embedding row (tied to the
output layer) built by a fixed seeded recipe so that at the positions Self-RAG reads some reflection
tokens fall inside vLLM's top 5,000 / 32,016 and some outside:

  anchored rows  scale * row(anchor) + spread * std * noise: the token follows a real token's logit,
                 scale > 1 makes it win where the anchor would be generated ([Fully supported] in place of a
                 verb, so the grounding and utility positions get read);
  loose rows     mean + spread * std * noise: a rank somewhere in the vocabulary, inside or outside.

Rebuilt bit for bit from the embedded model (float32), so the recorded upstream outputs stay valid."""

from __future__ import annotations

from pathlib import Path

SEED = 23
# token: (anchor text or None for a loose row, scale, spread)
RECIPE = {
    "[No Retrieval]": (None, 1.0, 1.4),
    "[Retrieval]": ("The", 0.6, 0.6),
    "[Continue to Use Evidence]": (None, 1.0, 1.0),
    "[Irrelevant]": (None, 1.0, 1.2),
    "[Relevant]": ("The", 0.8, 0.8),
    "<paragraph>": (None, 1.0, 1.0),
    "</paragraph>": (None, 1.0, 1.0),
    "[Utility:1]": (None, 1.0, 1.0),
    "[Utility:2]": (" is", 0.7, 0.6),
    "[Utility:3]": (None, 1.0, 1.3),
    "[Utility:4]": (" the", 0.8, 0.6),
    "[Utility:5]": (".", 1.02, 0.02),
    "[Fully supported]": (" is", 1.02, 0.02),
    "[Partially supported]": (" a", 0.8, 0.6),
    "[No support / Contradictory]": (None, 1.0, 1.1),
}


def build_window_model(folder: Path) -> Path:
    """Write the model to `folder` (once: written aside and renamed when complete) and return it."""
    from ragbench._engines.local.embedded import _saved_once, embedded_safetensors_dir
    from ragbench.plugins.selfrag.prompts import ADDED_TOKENS

    base = embedded_safetensors_dir()

    def build():
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(base)
        model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32)
        known = len(tokenizer)
        tokenizer.add_tokens(list(ADDED_TOKENS), special_tokens=True)
        model.resize_token_embeddings(len(tokenizer), mean_resizing=False)
        weight = model.get_input_embeddings().weight
        generator = torch.Generator().manual_seed(SEED)
        with torch.no_grad():
            mean, std = weight[:known].mean(0), weight[:known].std(0)
            for token in ADDED_TOKENS:
                anchor, scale, spread = RECIPE[token]
                noise = torch.randn(weight.shape[1], generator=generator)
                centre = (
                    mean
                    if anchor is None
                    else scale * weight[tokenizer.convert_tokens_to_ids(tokenizer.tokenize(anchor)[0])]
                )
                weight[tokenizer.convert_tokens_to_ids(token)] = centre + spread * std * noise
        return model, tokenizer

    return _saved_once(
        folder, f"{base} + selfrag window recipe (tests/support/selfrag_window_model.py, seed {SEED})", build
    )


def added_rows_digest(folder: Path) -> str:
    """sha256 of the added embedding rows (float32 bytes): the recorded model's fingerprint."""
    import hashlib

    from safetensors.numpy import load_file

    from ragbench.plugins.selfrag.prompts import ADDED_TOKENS

    weight = load_file(str(folder / "model.safetensors"))["model.embed_tokens.weight"]
    return hashlib.sha256(weight[-len(ADDED_TOKENS) :].astype("float32").tobytes()).hexdigest()
