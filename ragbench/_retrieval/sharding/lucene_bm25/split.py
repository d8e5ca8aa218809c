"""A lucene_bm25 index's files split into shards (`sharding.split.split_index`), each scoring with the whole index's
statistics, so its scores are the unsharded index's bit for bit.

A shard of passages start..stop-1 holds, under `lucene_bm25/`: each term's postings among them (renumbered from 0,
still rising within the term's run) with their frequencies and the local offsets; the norms and id ranks of its
passages (the ranks global: ties are broken by id across shards); the whole vocabulary (terms.json, a term's number
is the index's); `doc_freqs.npy`, each term's passage count in the whole index; and `stats.json`, the whole index's
docs_with_terms and total_terms (BM25's N and average length).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

from ...index.damage import read_array
from ...index.staging import MANIFEST_FILE
from ...lucene.retriever import FILES_DIR

BLOCK = 1 << 22  # postings copied at a time
DOC_FREQS, STATS = "doc_freqs.npy", "stats.json"


def split_lucene(index: Path, folders: list[Path], ranges: list[tuple[int, int]]) -> None:
    files = index / FILES_DIR
    offsets = np.asarray(read_array(files, "offsets.npy"), dtype=np.int64)
    postings, freqs = read_array(files, "postings.npy"), read_array(files, "freqs.npy")
    norms, ranks = read_array(files, "norms.npy"), read_array(files, "id_ranks.npy")
    options = json.loads((index / MANIFEST_FILE).read_text("utf-8"))["options"]
    terms = len(offsets) - 1
    for folder, (start, stop) in zip(folders, ranges):
        out = folder / FILES_DIR
        out.mkdir()
        counts = np.zeros(terms, dtype=np.int64)
        for first in range(0, len(postings), BLOCK):
            block = np.asarray(postings[first : first + BLOCK])
            kept = first + np.flatnonzero((block >= start) & (block < stop))
            counts += np.bincount(np.searchsorted(offsets, kept, side="right") - 1, minlength=terms)
        local_offsets = np.zeros(terms + 1, dtype=np.int64)
        np.cumsum(counts, out=local_offsets[1:])
        total = int(local_offsets[-1])
        local = np.lib.format.open_memmap(out / "postings.npy", "w+", np.int32, (total,))
        local_freqs = np.lib.format.open_memmap(out / "freqs.npy", "w+", np.int32, (total,))
        written = 0
        for first in range(0, len(postings), BLOCK):  # the terms' runs stay in order: the shard's are the same
            block = np.asarray(postings[first : first + BLOCK])
            keep = (block >= start) & (block < stop)
            taken = int(keep.sum())
            local[written : written + taken] = block[keep] - start
            local_freqs[written : written + taken] = np.asarray(freqs[first : first + BLOCK])[keep]
            written += taken
        local.flush()
        local_freqs.flush()
        del local, local_freqs
        np.save(out / "offsets.npy", local_offsets)
        np.save(out / "norms.npy", np.asarray(norms[start:stop]))
        np.save(out / "id_ranks.npy", np.asarray(ranks[start:stop]))
        np.save(out / DOC_FREQS, np.diff(offsets))
        shutil.copyfile(files / "terms.json", out / "terms.json")
        stats = {key: options[key] for key in ("docs_with_terms", "total_terms")}
        (out / STATS).write_text(json.dumps(stats), encoding="utf-8")
