"""OmniEval's corpus chunking: documents of at most 2,048 characters stay whole, longer ones are cut
as llama-index's `TokenTextSplitter(chunk_size=2048, chunk_overlap=256)` cuts them
(OmniEval corpus_builder/build_corpus.py; spec omnieval.md section 2.1).

The splitter is re-implemented from llama-index's algorithm, with tiktoken's cl100k_base (llama-index
0.11's default tokenizer, `encoding_for_model("gpt-3.5-turbo")`) for every length:
  1. split: a text within the budget is one split; otherwise it is cut at " " (each piece after the
     first keeps the separator in front, empty pieces dropped), else at "\\n", else into characters,
     and every piece still over budget is cut again the same way;
  2. merge: splits are added to the current chunk until the next one would overflow; the chunk is
     emitted (joined, stripped, if non-empty) and splits are dropped from its front while the rest
     is over `overlap` tokens or the next split would still overflow;
  3. metadata-aware: the budget is chunk_size - (tokens of the metadata string + 2).
Installing llama-index here is not an option (it pins numpy < 2); its node ids are random UUIDs,
so chunks get deterministic ids `<document id>#<n>` instead, and upstream's relevance labels
(`relevant_node`) only match upstream's own released nodes: index those as they are for MAP/MRR parity.
"""
from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import Callable, Iterable, Iterator

from ..errors import ConfigError, RecordError
from ..types import Document

METADATA_FORMAT_TOKENS = 2  # llama-index's DEFAULT_METADATA_FORMAT_LEN
WHOLE_UP_TO_CHARS = 2048


@lru_cache(maxsize=4)
def tiktoken_counter(name: str = "cl100k_base") -> Callable[[str], int]:
    """Token counts of a tiktoken encoding. tiktoken downloads an encoding's file once and caches it
    ($TIKTOKEN_CACHE_DIR); offline and not cached, this is a configuration error."""
    try:
        import tiktoken

        encoding = tiktoken.get_encoding(name)
    except ImportError as exc:
        raise ConfigError("chunking needs tiktoken: pip install tiktoken") from exc
    except Exception as exc:  # requests' ConnectionError offline, ValueError for an unknown name
        raise ConfigError(f"chunking: tiktoken encoding {name!r} is not available ({type(exc).__name__}); it is "
                          "downloaded once when online and cached in $TIKTOKEN_CACHE_DIR - run once online or copy "
                          "the cache folder") from None
    return lambda text: len(encoding.encode(text, allowed_special="all"))


def _keep_separator(text: str, separator: str) -> list[str]:
    parts = text.split(separator)
    return [piece for piece in [parts[0], *(separator + p for p in parts[1:])] if piece]


class TokenSplitter:
    """llama-index TokenTextSplitter's split-and-merge, lengths by `count` (default cl100k_base tokens)."""

    def __init__(self, chunk_size: int = 2048, overlap: int = 256, count: Callable[[str], int] | None = None,
                 separators: tuple[str, ...] = (" ", "\n")) -> None:
        if overlap > chunk_size or chunk_size < 1 or overlap < 0:
            raise ConfigError(f"chunking: need 0 <= overlap ({overlap}) <= chunk size ({chunk_size})")
        self.chunk_size, self.overlap = chunk_size, overlap
        self.length = count or tiktoken_counter()
        self.separators = separators

    def split(self, text: str, metadata: str = "") -> list[str]:
        budget = self.chunk_size - (self.length(metadata) + METADATA_FORMAT_TOKENS if metadata else 0)
        if budget <= 0:
            raise ConfigError(f"chunking: metadata of {self.chunk_size - budget} tokens leaves no room in "
                              f"chunks of {self.chunk_size}")
        if text == "":
            return [text]
        return self._merge(self._pieces(text, budget), budget)

    def _pieces(self, text: str, budget: int) -> list[str]:
        if self.length(text) <= budget:
            return [text]
        pieces = list(text)
        for separator in self.separators:
            split = _keep_separator(text, separator)
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


def chunk_documents(docs: Iterable[Document | RecordError], splitter: TokenSplitter,
                    whole_up_to: int = WHOLE_UP_TO_CHARS, metadata: str = "title") -> Iterator[Document | RecordError]:
    """Each document whole when its text has at most `whole_up_to` characters, else its chunks with
    ids "<id>#<n>" (n from 0) and the document's title. `metadata`: "title" takes "Title: <title>"
    off the budget as upstream's node metadata does (upstream also carries the file path, which a
    corpus file does not have), "none" takes nothing."""
    for doc in docs:
        if isinstance(doc, RecordError) or len(doc.text) <= whole_up_to:
            yield doc
            continue
        header = f"Title: {doc.title}" if metadata == "title" and doc.title else ""
        for n, text in enumerate(splitter.split(doc.text, header)):
            yield replace(doc, id=f"{doc.id}#{n}", text=text, metadata={**doc.metadata, "chunk_of": doc.id})


def parse_split(spec: str) -> TokenSplitter:
    """`tokens:SIZE:OVERLAP[:ENCODING]` (OmniEval: tokens:2048:256, cl100k_base)."""
    kind, *numbers = spec.split(":")
    try:
        size, overlap = int(numbers[0]), int(numbers[1])
    except (IndexError, ValueError):
        size = overlap = -1
    if kind != "tokens" or size < 1 or len(numbers) > 3:
        raise ConfigError(f"--split {spec!r}: expected tokens:SIZE:OVERLAP[:ENCODING], e.g. tokens:2048:256 "
                          "(OmniEval's corpus; tiktoken encoding cl100k_base by default)")
    return TokenSplitter(size, overlap, tiktoken_counter(numbers[2] if len(numbers) == 3 else "cl100k_base"))
