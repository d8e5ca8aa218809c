"""What each turn gives a system equals what upstream's CRAGTurnBatchIterator gives its agent, on the same sample
datasets (tests/data/parity/crag_mm_loader.json, its "how")."""

from __future__ import annotations

import hashlib
import io
import json

import pytest

from conftest import TEST_DATA
from ragbench.tasks.crag_mm.synthetic import write_dataset
from ragbench.tasks.crag_mm.task import CragMMMulti, CragMMSingle
from support.crag_mm_helpers import case_rows, fill_image_cache, loader_cases, tokenizer_dir

UPSTREAM = json.loads((TEST_DATA / "parity" / "crag_mm_loader.json").read_text(encoding="utf-8"))
TASKS = {"single": CragMMSingle, "multi": CragMMMulti}


def rgb_sha256(image) -> str:
    from PIL import Image as PILImage

    return hashlib.sha256(PILImage.open(io.BytesIO(image.data)).convert("RGB").tobytes()).hexdigest()


@pytest.mark.parametrize("kind", ["single", "multi"])
def test_each_turn_equals_what_upstreams_iterator_gives_the_agent(tmp_path, kind):
    cases = loader_cases()
    path = write_dataset(tmp_path / kind, case_rows(cases[kind]), layout="saved")
    cache = fill_image_cache(tmp_path / "cache", cases["cached"])
    found = list(TASKS[kind](data_path=path, tokenizer=tokenizer_dir(), image_cache=str(cache)).examples())
    upstream = UPSTREAM[kind]
    queries = {turn["interaction_id"]: turn["query"] for turn in upstream}
    answers = {turn["interaction_id"]: turn["answer"] for turn in upstream}
    # the same turns (skipped sessions left out); ragbench keeps data order, upstream's batches interleave
    # conversations (scoring sorts by session and turn)
    assert sorted(e.id for e in found) == sorted(turn["interaction_id"] for turn in upstream)
    by_id = {turn["interaction_id"]: turn for turn in upstream}
    for example in found:
        turn = by_id[example.id]
        assert (example.meta["session_id"], example.meta["turn"]) == (turn["session_id"], turn["turn_idx"])
        assert (example.question, example.gold["answers"]) == (turn["query"], [turn["answer"]])
        assert (example.extras["image_url"] or None) == turn["image_url"]  # SESSIONS_TO_UPDATE's URL too
        assert (example.meta["image_source"] == "ego") == turn["is_ego"]
        for field in ("domain", "query_category", "dynamism"):
            assert example.meta[field] == turn[field]
        assert turn["image_quality"] is None  # upstream reads it from the row, where v0.1.2 does not keep it
        assert rgb_sha256(example.images[0]) == turn["image_rgb_sha256"]  # the egocentric resize included
        if kind == "multi":
            # the earlier turns, each question then its answer: ragbench shows the gold answer, upstream the agent's own
            assert example.turns == [
                message
                for iid in turn["history"]
                for message in (
                    {"role": "user", "content": queries[iid]},
                    {"role": "assistant", "content": answers[iid]},
                )
            ]
