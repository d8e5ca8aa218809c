"""llama-index 0.9.40's `SentenceSplitter`, which cuts MultiHop-RAG's corpus for its retrieval experiments
(simple_retrieval.py: `SentenceSplitter(chunk_size=256)`, overlap the default 200, each article's
metadata text taken off the budget), re-implemented from that release's algorithm
(llama_index/node_parser/text/sentence.py); tests/tasks/multihop_rag/test_multihop_rag_corpus.py pins it to that release's
own chunks.

1. split: a text within the budget is one split; otherwise the first of these that cuts it in more than
   one piece: at "\\n\\n\\n" (the separator kept in front of each piece after the first), nltk's untrained
   `PunktSentenceTokenizer` (each sentence running to the start of the next), the regex
   `[^,.;。？！]+[,.;。？！]?` (its matches only: text between them is lost, as upstream), " " (kept in
   front), single characters. A piece still over budget is cut again the same way.
2. merge: splits join the current chunk while they fit; the split that does not closes it, and the next
   chunk starts with as many of the closed one's last splits as fit in the overlap, then that split
   (whatever the sum: llama-index's loop, whose sentence/phrase distinction changes nothing there).
   Chunks are stripped and blank ones dropped.
3. metadata-aware: the budget is chunk_size minus the tokens of the metadata text (no format allowance).

Lengths are tiktoken cl100k_base tokens (llama-index 0.9's `encoding_for_model("gpt-3.5-turbo")`,
special-token text as one token). llama-index 0.9.40 is not a dependency: installed into a fresh Python
3.11 environment it brings 55 packages (openai, SQLAlchemy, aiohttp, pandas among them) for this one
function.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ragbench.api import ConfigError
from ragbench.api.text import TokenSplitter, keep_separator

PARAGRAPH_SEPARATOR = "\n\n\n"
CHUNKING_REGEX = re.compile("[^,.;。？！]+[,.;。？！]?")
CHUNK_SIZE = 256  # simple_retrieval.py --chunk_size default
CHUNK_OVERLAP = 200  # llama-index 0.9's SENTENCE_CHUNK_OVERLAP


def punkt_sentences() -> Callable[[str], list[str]]:
    """llama-index's `split_by_sentence_tokenizer`: nltk's untrained Punkt spans, each sentence running to
    the start of the next (so the whitespace between them stays with the one before)."""
    try:
        from nltk.tokenize import PunktSentenceTokenizer
    except ImportError as exc:
        raise ConfigError(
            f"cutting MultiHop-RAG's corpus needs nltk ({exc}); run `pip install 'ragbench[multihop_rag]'`"
        ) from None
    tokenizer = PunktSentenceTokenizer()

    def split(text: str) -> list[str]:
        starts = [start for start, _ in tokenizer.span_tokenize(text)]
        return [text[start:end] for start, end in zip(starts, [*starts[1:], len(text)])]

    return split


class SentenceSplitter(TokenSplitter):
    """llama-index 0.9.40 `SentenceSplitter(chunk_size, chunk_overlap)` (module docstring): TokenSplitter's
    budget and checks, its own splits and merge."""

    metadata_format_tokens = 0

    def __init__(
        self, chunk_size: int = CHUNK_SIZE, overlap: int = CHUNK_OVERLAP, count: Callable[[str], int] | None = None
    ) -> None:
        super().__init__(chunk_size, overlap, count)
        self.splitters = (
            lambda text: keep_separator(text, PARAGRAPH_SEPARATOR),
            punkt_sentences(),
            CHUNKING_REGEX.findall,
            lambda text: keep_separator(text, " "),
            list,
        )

    def _split_once(self, text: str) -> list[str]:
        for split in self.splitters:
            pieces = split(text)
            if len(pieces) > 1:
                return pieces
        return pieces

    def _chunks(self, text: str, budget: int) -> list[str]:
        return self._merge_counted(self._counted_pieces(text, budget), budget)

    def _counted_pieces(self, text: str, budget: int) -> list[tuple[str, int]]:
        """(text, tokens) of each split, in order."""
        tokens = self.length(text)
        if tokens <= budget:
            return [(text, tokens)]
        out: list[tuple[str, int]] = []
        for piece in self._split_once(text):
            tokens = self.length(piece)
            out.extend([(piece, tokens)] if tokens <= budget else self._counted_pieces(piece, budget))
        return out

    def _merge_counted(self, splits: list[tuple[str, int]], budget: int) -> list[str]:
        chunks: list[str] = []
        current: list[tuple[str, int]] = []
        size = 0
        for text, tokens in splits:
            if tokens > budget:  # a single character over the budget: llama-index raises the same
                raise ConfigError(f"chunking: {text!r} alone is over the chunk budget of {budget} tokens")
            if current and size + tokens > budget:
                chunks.append("".join(piece for piece, _ in current))
                current = self._overlap(current)
                size = sum(n for _, n in current)
            current.append((text, tokens))
            size += tokens
        if current:
            chunks.append("".join(piece for piece, _ in current))
        return [chunk.strip() for chunk in chunks if chunk.strip()]

    def _overlap(self, closed: list[tuple[str, int]]) -> list[tuple[str, int]]:
        """The closed chunk's last splits that together fit in the overlap."""
        kept: list[tuple[str, int]] = []
        size = 0
        for text, tokens in reversed(closed):
            if size + tokens > self.overlap:
                break
            kept.insert(0, (text, tokens))
            size += tokens
        return kept
