"""A tiny random-weight LLaVA (a CLIP vision tower and a Llama text model, 2 layers each, hidden size 32) and its
processor, built from configs and a word-level tokenizer: an image-text-to-text model for the hf engine, no hub."""

from __future__ import annotations

from pathlib import Path

WORDS = ["<pad>", "<unk>", "<s>", "</s>", "<image>", "USER", "ASSISTANT", ":", "what", "is", "this", "?"]
WORDS += [chr(c) for c in range(97, 123)]
TEMPLATE = (
    "{% for m in messages %}{{ m['role'] | upper }} : {% for p in m['content'] %}{% if p['type'] == 'image' %}"
    "<image> {% else %}{{ p['text'] }} {% endif %}{% endfor %}{% endfor %}{% if add_generation_prompt %}ASSISTANT :"
    "{% endif %}"
)


def build_tiny_vlm(folder: Path, text_hidden_size: int = 32) -> Path:
    """The tiny LLaVA and its processor saved into `folder` (seeded: the same weights each time); its text model's
    hidden size `text_hidden_size` (2 heads)."""
    import torch
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers

    words = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<unk>"))
    words.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=words,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
        extra_special_tokens={"image_token": "<image>"},
    )
    tiny = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2}
    vision = transformers.CLIPVisionConfig(**tiny, image_size=16, patch_size=8)
    ids = {"bos_token_id": 2, "eos_token_id": 3, "pad_token_id": 0}
    text = transformers.LlamaConfig(
        **{**tiny, "hidden_size": text_hidden_size}, **ids, vocab_size=len(WORDS), max_position_embeddings=256
    )
    config = transformers.LlavaConfig(vision_config=vision, text_config=text, image_token_index=4)
    torch.manual_seed(0)
    transformers.LlavaForConditionalGeneration(config).save_pretrained(folder)
    images = transformers.CLIPImageProcessor(size={"shortest_edge": 16}, crop_size={"height": 16, "width": 16})
    transformers.LlavaProcessor(
        image_processor=images,
        tokenizer=tokenizer,
        patch_size=8,
        vision_feature_select_strategy="default",
        chat_template=TEMPLATE,
        num_additional_image_tokens=1,
    ).save_pretrained(folder)
    return folder


def build_tiny_vlm_for_vllm(folder: Path) -> Path:
    """The tiny LLaVA as vLLM (0.32, CPU) loads it: a head size its CPU attention takes (64, not 16), and the
    checkpoint's vision tower under the hub's LLaVA layout (`vision_tower.vision_model.*`, which vLLM's loader maps;
    transformers 5 saves `vision_tower.*`)."""
    from safetensors.torch import load_file, save_file

    build_tiny_vlm(folder, text_hidden_size=128)
    weights = folder / "model.safetensors"
    tensors = load_file(weights)
    tower, hub = "vision_tower.", "vision_tower.vision_model."
    renamed = {hub + key.removeprefix(tower) if key.startswith(tower) else key: value for key, value in tensors.items()}
    save_file(renamed, weights, metadata={"format": "pt"})
    return folder
