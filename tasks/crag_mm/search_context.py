"""get_rag_context's image-search block (utils/retriever.py) over the image hits of the `cragmm_search` retriever
(Documents whose metadata says `cragmm_search: image` and holds the hit's `entities`, as UnifiedSearchPipeline
returns them): the hits scoring above 0.75; every entity name once, in order; then, while the block is under 8,000
characters, each entity's attributes once (entities without attributes are named, not described).
"""

from __future__ import annotations

import json
from typing import Any

from ragbench.api import Document

from .prompts import prompts


def is_image_hit(doc: Document) -> bool:
    return bool(doc.metadata.get("cragmm_search") == "image")


def image_block(docs: list[Document]) -> str:
    """The image-search part of the search results ("" when no hit passes the threshold)."""
    rag = prompts()["rag"]
    hits = [list(doc.metadata.get("entities") or []) for doc in docs if (doc.score or 0) > rag["image_threshold"]]
    if not hits:
        return ""
    names = list(dict.fromkeys(entity["entity_name"] for entities in hits for entity in entities))
    block: str = rag["image_intro"] + rag["image_names"].format(names=", ".join(names)) + rag["image_attributes_intro"]
    cap, seen, number = rag["image_cap_chars"], set(), 0
    for entities in hits:
        if len(block) > cap:
            break
        for entity in entities:
            name, attributes = entity["entity_name"], entity.get("entity_attributes")
            if name in seen:
                continue
            seen.add(name)
            if attributes and len(block) + len(str(attributes)) < cap:  # str(): the dict's repr, as upstream counts
                number += 1
                block += rag["image_entity"].format(number=number, name=name)
                block += rag["image_attributes"].format(attributes=shown(attributes))
    return block + str(rag["image_outro"])


def shown(attributes: Any) -> str:
    """The attributes as upstream writes them: indented JSON, or their str() where JSON cannot hold them."""
    try:
        return json.dumps(attributes, indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(attributes)
