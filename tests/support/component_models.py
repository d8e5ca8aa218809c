"""Tiny random models for the reranker and refiner tests, written to a folder (no download): a BERT
cross-encoder, a BERT sentence encoder and a GPT-2 causal LM over a word-level vocabulary."""

from __future__ import annotations

from pathlib import Path

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def bert_tokenizer(folder: Path, words: list[str]):
    from transformers import BertTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join([*SPECIAL, *sorted(set(w.lower() for w in words))]) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(vocab_file=str(vocab), do_lower_case=True)
    tokenizer.save_pretrained(folder)
    return tokenizer


def bert_config(size: int):
    from transformers import BertConfig

    return BertConfig(
        vocab_size=size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
    )


def tiny_cross_encoder(folder: Path, words: list[str], seed: int = 0) -> Path:
    """A BertForSequenceClassification with one label, as a CrossEncoder folder."""
    import torch
    from transformers import BertForSequenceClassification

    tokenizer = bert_tokenizer(folder, words)
    config = bert_config(len(tokenizer))
    config.num_labels = 1
    torch.manual_seed(seed)
    BertForSequenceClassification(config).save_pretrained(folder)
    return folder


def tiny_encoder(folder: Path, words: list[str], seed: int = 0) -> Path:
    """A BertModel (sentence-transformers reads it with mean pooling)."""
    import torch
    from transformers import BertModel

    tokenizer = bert_tokenizer(folder, words)
    torch.manual_seed(seed)
    BertModel(bert_config(len(tokenizer))).save_pretrained(folder)
    return folder


def tiny_causal_lm(folder: Path, texts: list[str], seed: int = 0) -> Path:
    """A GPT2LMHeadModel over a byte-level BPE tokenizer trained on `texts` (its decoding gives back any text
    exactly, as GPT-2's does: llmlingua checks that)."""
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        texts, vocab_size=400, min_frequency=1, special_tokens=["<|endoftext|>"], show_progress=False
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=bpe._tokenizer, eos_token="<|endoftext|>", bos_token="<|endoftext|>", unk_token="<|endoftext|>"
    )
    fast.save_pretrained(folder)
    torch.manual_seed(seed)
    model = GPT2LMHeadModel(
        GPT2Config(
            vocab_size=len(fast), n_embd=16, n_layer=1, n_head=2, n_positions=2048, eos_token_id=0, bos_token_id=0
        )
    )
    model.config.architectures = ["GPT2LMHeadModel"]
    model.save_pretrained(folder)
    return folder
