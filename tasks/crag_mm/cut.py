"""CRAG-MM's 75-token cut of an agent's response (`CRAGEvaluator.truncate_agent_responses`: the Llama-3.2
tokenizer with `enable_truncation(max_length=75)`, `encode`, `decode`), made on a bounded prefix of the text.

Upstream encodes the whole response. Only its first 74 text tokens are kept (the <|begin_of_text|> the tokenizer adds
counts toward the 75), so only the text up to them matters, and how a word is split into tokens does not depend on
the words after it: the tokenizer splits the text into words first (its pre-tokenizer), then each word into tokens.
`bounded_prefix` encodes a window of the text, doubled until two whole words follow the word of the last kept token
inside it, ending more than the longest added token's length (the special tokens matched in the text first) before
the window's end; the window's words up to them are then the whole text's, and so are the kept tokens (tests/tasks/crag_mm/test_crag_mm_cut.py checks it against the whole text's encoding, hypothesis-drawn
texts under the stand-in and under a BPE with Llama-3's pre-tokenizer). A 10 MB answer is encoded 1,024 characters
at a time instead of whole (2.1 GB and 23 s on the 2-vCPU VM): an answer whose first words are one word of a million
letters is still encoded up to that word's end.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..shared.cut_tokenizer import CutTokenizer

if TYPE_CHECKING:
    from tokenizers import Tokenizer

MAX_RESPONSE_TOKENS = 75
FIRST_WINDOW = 1024  # characters: a few times what 74 tokens of prose take
TOKENIZER_ENV = "CRAG_MM_LLAMA32_TOKENIZER"
STANDIN = "python -m ragbench.tasks.crag_mm.synthetic DIR"
TOKENIZER = CutTokenizer(
    TOKENIZER_ENV,
    "llama32_tokenizer",
    "CRAG-MM cuts the answers a run generates to 75 Llama-3.2 tokens and needs that tokenizer",
    "a folder with meta-llama/Llama-3.2-1B-Instruct's tokenizer.json, a gated download; offline, for a trial whose "
    f"cut need not fall where the real one does, `{STANDIN}` writes ragbench's stand-in (one token a byte)",
)


@lru_cache(maxsize=4)
def llama32_tokenizer(path: str) -> Tokenizer:
    """folder/tokenizer.json with upstream's truncation (`enable_truncation(max_length=75)`)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(Path(path) / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=MAX_RESPONSE_TOKENS)
    return tokenizer


@lru_cache(maxsize=4)
def whole_tokenizer(path: str) -> Tokenizer:
    """folder/tokenizer.json without truncation: a window's every token, with the word each belongs to."""
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(Path(path) / "tokenizer.json"))


@lru_cache(maxsize=4)
def added_reach(path: str) -> int:
    """The length of the tokenizer's longest added token (matched in the text before it is split into words)."""
    added = whole_tokenizer(path).get_added_tokens_decoder().values()
    return max((len(token.content) for token in added), default=0)


def bounded_prefix(text: str, tokenizer_path: str, window: int = FIRST_WINDOW) -> str:
    """The shortest prefix of `text` (a window of `window` characters, doubled) whose first 74 text tokens are the
    whole text's: two whole words follow, inside it, the word of the last token the cut keeps, and end further from
    its end than an added token can reach."""
    tokenizer = whole_tokenizer(tokenizer_path)
    reach = added_reach(tokenizer_path)
    while window < len(text):
        prefix = text[:window]
        encoding = tokenizer.encode(prefix)
        if len(encoding.ids) > MAX_RESPONSE_TOKENS:
            words = encoding.word_ids
            last = words[MAX_RESPONSE_TOKENS - 1]
            after = [
                (word, end)
                for word, (_, end) in zip(words[MAX_RESPONSE_TOKENS:], encoding.offsets[MAX_RESPONSE_TOKENS:])
                if word is not None and last is not None and word >= last + 2
            ]
            if after and after[0][1] + reach < len(prefix):
                return prefix
        window *= 2
    return text


def truncate_response(text: str, tokenizer_path: str) -> str:
    """CRAGEvaluator.truncate_agent_responses: encode (with the BOS, truncated to 75 ids), decode (special tokens
    skipped), over the bounded prefix that holds the kept tokens. Not stripped."""
    tokenizer = llama32_tokenizer(tokenizer_path)
    return str(tokenizer.decode(tokenizer.encode(bounded_prefix(text, tokenizer_path)).ids))
