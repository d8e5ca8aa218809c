"""KILT's knowledge source (kilt_knowledgesource.json: one Wikipedia page a line, `{"_id", "wikipedia_id",
"wikipedia_title", "text": [paragraph, ...], "anchors", ...}`, the first paragraph the title) as a passage
corpus for `ragbench index build`, chunked as KILT's scripts/create_kilt_data_paragraphs.py chunks it for
its retrieval baselines (`run_thread`, chunk size 100):

- the title paragraph is skipped; a paragraph holding "Section::::" names the section of those after it
  (the first ones are "Section::::Abstract") and is no passage;
- a paragraph's sentences (spaCy's) fill a passage until the next sentence would bring it to the chunk
  size in tokens (spaCy's, whitespace tokens counted in the sentence, not in the passage), which starts
  a new passage; a passage is the paragraph's text from its first token to its last, stripped;
- a paragraph's last passage joins the page's previous passage (after a space) when both are of one
  section and together shorter than the chunk size.

Sentences and tokens are spaCy's `en_core_web_sm`, as KILT's (a model installed with `python -m spacy
download en_core_web_sm`); `sentencizer` (spaCy's blank English pipeline and its rule-based sentence
splitter) needs no model, and gives other sentence boundaries, so other passages. Each passage is written
as `{"id": "<wikipedia_id>#<n>", "wikipedia_id", "title", "text"}` (n from 0 within the page; KILT numbers
passages across the whole file in the order its threads finish).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragbench.api import ConfigError, RecordError
from ragbench.api.data import JsonObject, given_jsonl, replacing

from ..shared.corpus_files import corpus_out, corpus_source, write_line

SECTION_MARK = "Section::::"
FIRST_SECTION = "Section::::Abstract"
KILT_CHUNK_SIZE = 100  # create_kilt_data_paragraphs.py --chunk_size default
KILT_SPACY_MODEL = "en_core_web_sm"
RULE_BASED = "sentencizer"


def spacy_pipeline(model: str) -> Any:
    """spaCy's pipeline `model`, or (`sentencizer`) its blank English one with the rule-based sentencizer."""
    try:
        import spacy
    except ImportError as exc:
        raise ConfigError(f"chunking KILT's knowledge source needs spaCy ({exc}); run `pip install spacy`") from exc
    if model == RULE_BASED:
        nlp = spacy.blank("en")
        nlp.add_pipe("sentencizer")
        return nlp
    try:
        return spacy.load(model)
    except OSError as exc:
        raise ConfigError(
            f"--spacy-model {model}: not installed ({str(exc).splitlines()[0][:120]}); run `python -m "
            f"spacy download {model}`, or pass --spacy-model {RULE_BASED} (no model; other sentence "
            "boundaries than KILT's)"
        ) from exc


def page_passages(paragraphs: list[str], nlp: Any, chunk_size: int = KILT_CHUNK_SIZE) -> list[tuple[str, str]]:
    """(section, text) of each passage of one page, as `run_thread` cuts them (module docstring)."""
    passages: list[list[Any]] = []  # [section, text, tokens]
    section = FIRST_SECTION
    for paragraph in nlp.pipe(paragraphs[1:]):
        if SECTION_MARK in paragraph.text:
            section = paragraph.text.strip()
            continue
        buffer: list[Any] = []
        for sentence in paragraph.sents:
            if buffer and len(buffer) + len(sentence) >= chunk_size:
                passages.append([section, _text(paragraph, buffer), len(buffer)])
                buffer = []
            buffer.extend(token for token in sentence if token.text.strip())
        if buffer:
            last = passages[-1] if passages else None
            if last is not None and last[0] == section and len(buffer) + last[2] < chunk_size:
                last[1] += " " + _text(paragraph, buffer)
                last[2] += len(buffer) + 1
            else:
                passages.append([section, _text(paragraph, buffer), len(buffer)])
    return [(section, text) for section, text, _ in passages]


def _text(paragraph: Any, tokens: list[Any]) -> str:
    """`create_chunk`: the paragraph's text from the first token to one character past the last, stripped."""
    start, end = tokens[0].idx, tokens[-1].idx + len(tokens[-1])
    text: str = paragraph.text[start : end + 1].strip()
    return text


@dataclass
class KnowledgeSourceStats:
    pages: int = 0
    passages: int = 0
    errors: list[RecordError] = field(default_factory=list)


def read_pages(path: Path) -> Iterator[dict[str, Any] | RecordError]:
    """The knowledge source's pages; a line that is not a page (no wikipedia_id, text not a list of
    strings) is a RecordError naming the file and line."""
    for index, record in given_jsonl(path, "KILT's knowledge source (kilt_knowledgesource.json, JSON Lines)"):
        if isinstance(record, RecordError):
            yield record
            continue
        text = record.get("text")
        if record.get("wikipedia_id") in (None, ""):
            yield RecordError(str(path), index + 1, "missing field", "wikipedia_id")
        elif not isinstance(text, list) or not all(isinstance(paragraph, str) for paragraph in text):
            yield RecordError(str(path), index + 1, "expected a list of paragraphs (strings)", "text")
        else:
            yield record


def build_corpus(
    source: str | Path,
    out: str | Path,
    model: str = KILT_SPACY_MODEL,
    chunk_size: int = KILT_CHUNK_SIZE,
    overwrite: bool = False,
) -> KnowledgeSourceStats:
    """Write `out` (JSONL passages for `ragbench index build --corpus`) from the knowledge source `source`,
    one page at a time; `out` appears only once complete."""
    source = corpus_source(source, "--knowledge-source", "KILT's kilt_knowledgesource.json")
    if chunk_size < 1:
        raise ConfigError(f"--chunk-size {chunk_size}: must be at least 1")
    out = corpus_out(out, overwrite)
    nlp = spacy_pipeline(model)
    stats = KnowledgeSourceStats()
    with replacing(out) as handle:
        for page in read_pages(source):
            if isinstance(page, RecordError):
                stats.errors.append(page)
                continue
            stats.pages += 1
            page_id, title = str(page["wikipedia_id"]), str(page.get("wikipedia_title") or "")
            for n, (_, text) in enumerate(page_passages(page["text"], nlp, chunk_size)):
                passage: JsonObject = {"id": f"{page_id}#{n}", "wikipedia_id": page_id, "title": title, "text": text}
                write_line(handle, passage)
                stats.passages += 1
    return stats
