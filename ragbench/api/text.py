"""Text helpers benchmarks share: answers, citations, sentences, instruction formats, token-counted chunks.

    from ragbench.api.text import normalize_answer, sent_tokenize

Answers: `normalize_answer` (SQuAD's normalisation), `exact_presence`, `token_f1`, `list_lines` (an answer
written as a list, one item a line). Citations: `remove_citations`, `cited_numbers`, `cited_sentences` (a TREC RAG
answer's), `list_items`. Sentences: `sent_tokenize` (punkt's, offline).
Instruction-tuned prompt formats: `TEMPLATES` and `fill`. Chunking counted in tokens: `TokenSplitter`,
`parse_split`, `keep_separator`, `tiktoken_encoding` (a tiktoken encoding, cl100k_base offline). Search
results cut to their first tokens (BrowseComp-Plus's snippets): `Snippets` (the tokenizer read when first needed),
`first_tokens`, `load_snippet_tokenizer`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragbench.api._lazy import lazy_names

if TYPE_CHECKING:  # type checkers read each name where it is defined; it is imported on first use (below)
    from ragbench._retrieval.corpus.chunking import TokenSplitter, keep_separator, parse_split, tiktoken_encoding
    from ragbench._shared.answers import exact_presence, list_lines, normalize_answer, token_f1
    from ragbench._shared.citations import cited_numbers, cited_sentences, list_items, remove_citations
    from ragbench._shared.instruction_templates import TEMPLATES, fill
    from ragbench._shared.sentences import sent_tokenize
    from ragbench._shared.snippets import Snippets, first_tokens, load_snippet_tokenizer

_MODULES = {
    "ragbench._shared.answers": ("normalize_answer", "exact_presence", "token_f1", "list_lines"),
    "ragbench._shared.sentences": ("sent_tokenize",),
    "ragbench._shared.citations": ("remove_citations", "cited_numbers", "cited_sentences", "list_items"),
    "ragbench._shared.instruction_templates": ("TEMPLATES", "fill"),
    "ragbench._retrieval.corpus.chunking": ("TokenSplitter", "parse_split", "tiktoken_encoding", "keep_separator"),
    "ragbench._shared.snippets": ("Snippets", "first_tokens", "load_snippet_tokenizer"),
}
__all__, __getattr__, __dir__ = lazy_names(__name__, _MODULES)
