"""Tiny random Hugging Face models written to a folder, for tests that need a real model class
(seq2seq NLI, MAUVE featurization) without any download."""

from __future__ import annotations

from pathlib import Path

WORDS = (
    "premise hypothesis title text the a of is in 1 0 yes no rain place earth city food loans "
    "answer question record month india colombia"
).split()


def word_tokenizer(folder: Path, eos_suffix: bool, extra: tuple[str, ...] = ()):
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {"<pad>": 0, "</s>": 1, "<unk>": 2, **{w: i + 3 for i, w in enumerate(WORDS + list(extra))}}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    if eos_suffix:  # as T5's tokenizer: every input ends with </s>
        tokenizer.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, pad_token="<pad>", eos_token="</s>", unk_token="<unk>")
    fast.save_pretrained(folder)
    return fast, len(vocab)


def tiny_t5(folder: Path, extra: tuple[str, ...] = ()) -> Path:
    """`extra`: words the vocabulary has besides WORDS (e.g. a classifier's labels)."""
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    _, size = word_tokenizer(folder, eos_suffix=True, extra=extra)
    config = T5Config(
        vocab_size=size,
        d_model=32,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_heads=4,
        decoder_start_token_id=0,
        pad_token_id=0,
        eos_token_id=1,
    )
    torch.manual_seed(0)
    T5ForConditionalGeneration(config).save_pretrained(folder)
    return folder


def tiny_gpt2(folder: Path) -> Path:
    import torch
    from transformers import GPT2Config, GPT2Model

    _, size = word_tokenizer(folder, eos_suffix=False)
    torch.manual_seed(0)
    GPT2Model(
        GPT2Config(vocab_size=size, n_embd=16, n_layer=1, n_head=2, n_positions=128, eos_token_id=1, bos_token_id=1)
    ).save_pretrained(folder)
    return folder


def tiny_causal_lm(folder: Path, tokenizer=None) -> Path:
    """A 2-layer random GPT-2 with its language-model head, for the hf engine's decoding: over `tokenizer` (saved
    beside it), else over WORDS."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    if tokenizer is None:
        tokenizer, _ = word_tokenizer(folder, eos_suffix=False)
    else:
        tokenizer.save_pretrained(folder)
    torch.manual_seed(0)
    GPT2LMHeadModel(
        GPT2Config(
            vocab_size=len(tokenizer),
            n_embd=32,
            n_layer=2,
            n_head=2,
            n_positions=512,
            eos_token_id=tokenizer.eos_token_id,
            bos_token_id=tokenizer.eos_token_id,
        )
    ).save_pretrained(folder)
    return folder


def tiny_bert(folder: Path) -> Path:
    """A BERT encoder with a pooler (SimCSE's shape), for judgers that read its pooled output."""
    import torch
    from transformers import BertConfig, BertModel

    _, size = word_tokenizer(folder, eos_suffix=False)
    torch.manual_seed(0)
    BertModel(
        BertConfig(
            vocab_size=size,
            hidden_size=16,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=32,
            max_position_embeddings=64,
        )
    ).save_pretrained(folder)
    return folder


def tiny_llama_like(like: Path, folder: Path) -> Path:
    """A random model of the architecture of the model folder `like` (the embedded SmolLM2: Llama, rotary positions,
    grouped-query attention, tied embeddings) over its tokenizer, at a tiny size (2 layers, hidden 64, 4 query and
    2 key/value heads): for tests of the hf engine's mechanics (batches, the prefix cache, seeded rows) whose promise
    is not the trained model's text. Its weights are drawn 10x wider than the config's default, so that the next
    token's logits are far apart and a float-rounding difference of the order of batch mates (~1e-6 here) cannot
    change a greedy pick."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    AutoTokenizer.from_pretrained(like).save_pretrained(folder)
    config = AutoConfig.from_pretrained(like)
    for name, value in {
        "num_hidden_layers": 2,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
        "initializer_range": 0.2,
    }.items():
        setattr(config, name, value)
    torch.manual_seed(0)
    AutoModelForCausalLM.from_config(config).save_pretrained(folder)
    return folder


def tiny_llama_gguf(path: Path) -> Path:
    """A GGUF file of a 2-layer random Llama (the embedded SmolLM2's architecture) with its weights quantized as
    Q8_0 and a byte-level BPE vocabulary of 261 entries (the 256 bytes, three merges, two special tokens): what
    transformers reads from the embedded GGUF, small enough to convert in a fraction of a second."""
    import gguf
    import numpy as np
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    merges = ["Ġ t", "h e", "Ġt he"]
    tokens = [*bytes_to_unicode().values(), *(merge.replace(" ", "") for merge in merges), "<|im_start|>", "<|im_end|>"]
    hidden, feed_forward, kv_width = 32, 64, 16
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("tiny")
    writer.add_context_length(64)
    writer.add_embedding_length(hidden)
    writer.add_block_count(2)
    writer.add_feed_forward_length(feed_forward)
    writer.add_head_count(2)
    writer.add_head_count_kv(1)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_freq_base(10000.0)
    writer.add_vocab_size(len(tokens))
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list(tokens)
    writer.add_token_types([gguf.TokenType.NORMAL] * (len(tokens) - 2) + [gguf.TokenType.CONTROL] * 2)
    writer.add_token_merges(merges)
    writer.add_bos_token_id(len(tokens) - 2)
    writer.add_eos_token_id(len(tokens) - 1)
    rng = np.random.default_rng(0)

    def tensor(name: str, *shape: int) -> None:
        values = rng.standard_normal(shape, dtype=np.float32)
        if len(shape) == 1:  # norms stay float32, as in the embedded file
            writer.add_tensor(name, values)
        else:
            quantized = gguf.quants.quantize(values, gguf.GGMLQuantizationType.Q8_0)
            writer.add_tensor(name, quantized, raw_shape=quantized.shape, raw_dtype=gguf.GGMLQuantizationType.Q8_0)

    tensor("token_embd.weight", len(tokens), hidden)
    tensor("output_norm.weight", hidden)
    for block in range(2):
        for name, shape in (
            ("attn_norm", (hidden,)),
            ("ffn_norm", (hidden,)),
            ("attn_q", (hidden, hidden)),
            ("attn_k", (kv_width, hidden)),
            ("attn_v", (kv_width, hidden)),
            ("attn_output", (hidden, hidden)),
            ("ffn_gate", (feed_forward, hidden)),
            ("ffn_up", (feed_forward, hidden)),
            ("ffn_down", (hidden, feed_forward)),
        ):
            tensor(f"blk.{block}.{name}.weight", *shape)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
