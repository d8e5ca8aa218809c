"""What ragnarok's 2025 submission validator (castorini/ragnarok 7233fa7, scripts/rag25_validation.py, its
`validate_entry`) says of one submission line: its errors (any error makes the file invalid) and its warnings, in its
words. `--format_type 1` wants citations as indices into `references`, 2 as the cited docids; ragbench reads both, so
a line is checked as format 2 where it cites any docid, else as format 1.

The validator's quirks, kept: an index is an int as Python tests it (`True` passes as 1); a metadata missing several
keys is named as a Python set, whose order varies between runs (here sorted); the topic check runs only when no
required metadata key is missing; and it reads each topic's text from "title": the released topics file, which names
it "narrative", parses no topic there, so every line fails "not found in topic file" (ragbench reads both)."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

MARCODOC = re.compile(r"^msmarco_v2\.1_doc_\d+_\d+#\d+_\d+$")
REQUIRED = ("narrative_id", "run_id", "team_id")
TYPES = ("manual", "automatic")


def format_of(line: Mapping[str, Any]) -> int:
    """2 where a sentence cites a docid (a string), else 1."""
    answer = line.get("answer")
    sentences = answer if isinstance(answer, list) else []
    cites = [
        c for s in sentences if isinstance(s, dict) and isinstance(s.get("citations"), list) for c in s["citations"]
    ]
    return 2 if any(isinstance(cite, str) for cite in cites) else 1


def metadata_findings(metadata: Any, topic_ids: Collection[str] | None) -> tuple[list[str], list[str]]:
    if not isinstance(metadata, dict):
        return ["metadata must be an object"], []
    errors, warnings = [], []
    missing = sorted(set(REQUIRED) - metadata.keys())
    if missing:
        errors.append("metadata missing keys: {" + ", ".join(repr(key) for key in missing) + "}")
    elif topic_ids is not None and str(metadata["narrative_id"]) not in topic_ids:
        errors.append(f"metadata.narrative_id '{metadata['narrative_id']}' not found in topic file")
    if "type" in metadata and metadata["type"] not in TYPES:
        errors.append(f"invalid metadata.type: {metadata['type']}")
    if "type" not in metadata:
        warnings.append("optional field 'type' is missing from metadata")
    if "narrative" not in metadata:
        warnings.append("optional field 'narrative' is missing from metadata. Added narrative field.")
    if "prompt" not in metadata:
        warnings.append("optional field 'prompt' is missing from metadata")
    return errors, warnings


def citation_errors(index: int, cites: list[Any], references: list[Any], format_type: int) -> list[str]:
    where = f"answer[{index}]"
    if format_type == 1:
        if not all(isinstance(cite, int) for cite in cites):
            return [f"{where}.citations must be ints (indexes into references)"]
        return [f"{where}.citations index out of range: {c}" for c in cites if not 0 <= c < len(references)]
    if not all(isinstance(cite, str) for cite in cites):
        return [f"{where}.citations must be strings (segment IDs)"]
    return [f"{where}.citation not found in references: {c}" for c in cites if c not in references]


def rag25_findings(
    line: Mapping[str, Any], topic_ids: Collection[str] | None = None, format_type: int | None = None
) -> tuple[list[str], list[str]]:
    """The validator's errors and warnings of `line`, in its order; `topic_ids` None: the topic is not checked;
    `format_type` None: `format_of(line)`."""
    kind = format_of(line) if format_type is None else format_type
    errors, warnings = metadata_findings(line.get("metadata"), topic_ids)
    references = line.get("references")
    if not isinstance(references, list):
        errors.append("references must be a list")
        references = []
    for i, ref in enumerate(references):
        if not isinstance(ref, str) or not MARCODOC.match(ref):
            warnings.append(f"reference[{i}] not in MARCODOC format: {ref}")
    answer = line.get("answer", [])
    if not isinstance(answer, list):
        return [*errors, "answer must be a list"], warnings
    for i, sentence in enumerate(answer):
        if not isinstance(sentence, dict):
            errors.append(f"answer[{i}] must be object")
            continue
        if not isinstance(sentence.get("text"), str):
            errors.append(f"answer[{i}].text missing or not string")
        if "citations" not in sentence:
            errors.append(f"answer[{i}].citations missing")
        elif not isinstance(sentence["citations"], list):
            errors.append(f"answer[{i}].citations not a list")
        else:
            errors.extend(citation_errors(i, sentence["citations"], references, kind))
    return errors, warnings
