"""CRAG-MM's 75-token cut on a bounded prefix (tasks/crag_mm/cut.py) gives what upstream's cut of the whole text gives
(`enable_truncation(max_length=75)`, `encode`, `decode`), under the Llama-3.2 stand-in and under a BPE trained here
with Llama-3's pre-tokenizer (its Split pattern, then bytes), whose merges make words of several tokens; and a long
answer is cut without encoding it whole."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench.tasks.crag_mm import cut
from support.crag_mm_helpers import tokenizer_dir

# tokenizer.json of meta-llama/Llama-3.2-1B-Instruct: the Split pattern of its pre-tokenizer
LLAMA3_SPLIT = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
PIECES = [
    "a",
    "b",
    "ab",
    "aaaa",
    "the",
    " quick",
    "brown",
    " ",
    "  ",
    "\n",
    " \n",
    "\r\n",
    "é",
    "日本",
    "1",
    "234",
    ".",
    "'s",
    "'LL",
    "<|begin_of_text|>",
    "<|eot_id|>",
    "<|",
    "x" * 40,
]


@pytest.fixture(scope="module")
def bpe_dir(tmp_path_factory) -> str:
    """A byte-level BPE with Llama-3's pre-tokenizer, trained on a few sentences (merges up to whole words)."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.BPE(ignore_merges=True))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(LLAMA3_SPLIT), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<|begin_of_text|>", "<|eot_id|>"],
        show_progress=False,
    )
    corpus = [
        "the quick brown fox jumps over the lazy dog 1234 ünïcödé 日本語 it's\n\n  here",
        "aaaa abab baba aaaaaaa",
    ]
    tokenizer.train_from_iterator(corpus * 50, trainer)
    bos = tokenizer.token_to_id("<|begin_of_text|>")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<|begin_of_text|> $A", special_tokens=[("<|begin_of_text|>", bos)]
    )
    folder = tmp_path_factory.mktemp("bpe")
    tokenizer.save(str(folder / "tokenizer.json"))
    return str(folder)


def whole_cut(text: str, folder: str) -> str:
    """Upstream's cut: the truncating tokenizer over the whole text."""
    tokenizer = cut.llama32_tokenizer(folder)
    return str(tokenizer.decode(tokenizer.encode(text).ids))


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(st.sampled_from(PIECES), max_size=250), window=st.integers(1, 80), text=st.text(max_size=300))
def test_the_cut_of_a_bounded_prefix_is_the_cut_of_the_whole_text(bpe_dir, pieces, window, text):
    for drawn in ("".join(pieces), text, "".join(pieces) + text):
        for folder in (tokenizer_dir(), bpe_dir):
            prefix = cut.bounded_prefix(drawn, folder, window)
            assert drawn.startswith(prefix)
            tokenizer = cut.llama32_tokenizer(folder)
            assert tokenizer.encode(prefix).ids == tokenizer.encode(drawn).ids
            assert cut.truncate_response(drawn, folder) == whole_cut(drawn, folder)


class Recording:
    """A tokenizer that records the length of each text it encodes."""

    def __init__(self, tokenizer, lengths: list[int]) -> None:
        self.tokenizer, self.lengths = tokenizer, lengths

    def encode(self, text: str):
        self.lengths.append(len(text))
        return self.tokenizer.encode(text)

    def __getattr__(self, name: str):
        return getattr(self.tokenizer, name)


@pytest.mark.parametrize("answer", ["Paris is the capital of France. " * 330_000, "word\n" * 2_000_000])
def test_a_10_mb_answer_is_cut_encoding_a_few_thousand_characters(monkeypatch, answer):
    folder = tokenizer_dir()
    expected = answer.encode()[:74].decode()  # the stand-in: one token a byte
    lengths: list[int] = []
    for name in ("llama32_tokenizer", "whole_tokenizer"):
        made = getattr(cut, name)(folder)
        monkeypatch.setattr(cut, name, lambda path, made=made: Recording(made, lengths))
    assert len(answer) >= 10_000_000
    assert cut.truncate_response(answer, folder) == expected
    assert lengths and max(lengths) <= 2 * cut.FIRST_WINDOW


def test_a_long_first_word_is_encoded_to_its_end(monkeypatch):
    """One word of 100,000 letters, then more: the cut encodes up to past that word, not the whole text."""
    folder = tokenizer_dir()
    answer = "x" * 100_000 + " and more" * 100_000
    assert cut.truncate_response(answer, folder) == whole_cut(answer, folder) == "x" * 74
    assert 100_000 < len(cut.bounded_prefix(answer, folder)) <= 2 * 131_072
