"""A bm25s index folder read, and its structure checked, before it is searched (`read_bm25s_index`): the
folder `ragbench index build --retriever bm25` writes under `bm25/`, and the one FlashRAG's index_builder writes.

What bm25s writes there, and so what a folder must hold (anything else is an `IndexDamage` naming the file):

- params.index.json: an object; `num_docs` a whole number >= 0; k1, b, delta numbers; method, dtype and the
  other names strings, `dtype` a float type;
- vocab.index.json: an object from word to term number, the numbers 0..terms-1 each once (a term's number is its
  column of the score matrix); bm25s's empty word "" may have the number past them, as its `index()` of token
  lists gives it;
- indptr.csc.index.npy: integers, one more than the terms, from 0, never falling, ending at the postings' count;
- indices.csc.index.npy: integers, one a posting, each a passage number 0..num_docs-1, rising within each term's
  column (a passage appears once per term);
- data.csc.index.npy: numbers of params' dtype, one a posting, none infinite or NaN;
- nonoccurrence_array.index.npy (methods bm25l and bm25+): numbers, one a term, none infinite or NaN.

A folder that holds all this is searched as its arrays say; damage that keeps it (a score or a passage number
changed to another valid one) cannot be told from an index built so, and is not detected.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..._errors import shown_value
from ..index.damage import (
    FLOATS,
    INTEGERS,
    IndexDamage,
    ascending,
    finite,
    read_array,
    read_json_object,
    typed_fields,
    vector,
    within,
)

PARAMS, VOCAB = "params.index.json", "vocab.index.json"
DATA, INDICES, INDPTR = "data.csc.index.npy", "indices.csc.index.npy", "indptr.csc.index.npy"
NONOCCURRENCE = "nonoccurrence_array.index.npy"
NEEDS_NONOCCURRENCE = ("bm25l", "bm25+")
NUMBER = (int, float)
PARAM_TYPES: dict[str, tuple[type, ...]] = {
    "num_docs": (int,),
    "k1": NUMBER,
    "b": NUMBER,
    "delta": NUMBER,
    "method": (str,),
    "idf_method": (str, type(None)),
    "dtype": (str,),
    "int_dtype": (str,),
    "version": (str,),
    "backend": (str,),
}


@dataclass
class Bm25sIndex:
    params: dict[str, Any]
    vocab: dict[str, int]
    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray  # int64, in memory: one number a term

    @property
    def passages(self) -> int:
        return int(self.params["num_docs"])

    @property
    def terms(self) -> int:
        return len(self.indptr) - 1

    @property
    def postings(self) -> int:
        return len(self.data)


def read_bm25s_index(folder: Path, mmap: bool = True, prefix: str = "") -> Bm25sIndex:
    """The bm25s files of `folder` (the score matrix memory-mapped with `mmap`), each checked (module docstring);
    an IndexDamage names the first file found wrong, as `prefix` + its name."""
    try:
        params = read_json_object(folder, PARAMS)
        typed_fields(PARAMS, params, PARAM_TYPES, required=("num_docs",))
        if params["num_docs"] < 0:
            raise IndexDamage(PARAMS, f"num_docs is {params['num_docs']}, not a number of passages")
        indptr = read_indptr(folder)
        postings = int(indptr[-1])
        data = postings_array(folder, DATA, FLOATS, postings, mmap)
        if data.dtype != score_dtype(params):
            raise IndexDamage(DATA, f"holds {data.dtype} scores where {PARAMS} says {params.get('dtype', 'float32')}")
        finite(DATA, data)
        indices = postings_array(folder, INDICES, INTEGERS, postings, mmap)
        passages = params["num_docs"]
        within(INDICES, indices, 0, passages, "passage number", f"{PARAMS} has num_docs {passages}")
        columns = f" in its term's column, as {INDPTR} divides them"
        ascending(INDICES, indices, "passage number", strictly=True, restarts=indptr[1:-1], runs=columns)
        vocab = read_json_object(folder, VOCAB)
        check_vocabulary(vocab, len(indptr) - 1)
        if params.get("method") in NEEDS_NONOCCURRENCE:
            finite(NONOCCURRENCE, vector(NONOCCURRENCE, read_array(folder, NONOCCURRENCE), FLOATS, len(indptr) - 1))
    except IndexDamage as exc:
        raise IndexDamage(prefix + exc.file, exc.problem) from None
    return Bm25sIndex(params, vocab, data, indices, indptr)


def read_indptr(folder: Path) -> np.ndarray:
    """indptr as int64 in memory: from 0, never falling (it is as small as the vocabulary)."""
    indptr = vector(INDPTR, read_array(folder, INDPTR), INTEGERS)
    if not len(indptr):
        raise IndexDamage(INDPTR, "holds no numbers (a score matrix has at least its start, 0)")
    within(INDPTR, indptr, 0, np.iinfo(np.int64).max, "posting number", "a position in data and indices")
    ascending(INDPTR, indptr, "posting number", strictly=False)
    if indptr[0] != 0:
        raise IndexDamage(INDPTR, f"starts at {indptr[0]}, not 0")
    return np.asarray(indptr, dtype=np.int64)


def postings_array(folder: Path, name: str, kind: str, postings: int, mmap: bool) -> np.ndarray:
    array = vector(name, read_array(folder, name, mmap), kind)
    if len(array) != postings:
        raise IndexDamage(name, f"holds {len(array)} postings where {INDPTR} ends at {postings}")
    return array


def score_dtype(params: dict[str, Any]) -> np.dtype:
    """The float type params.index.json names for the scores (bm25s's default float32)."""
    name = params.get("dtype", "float32")
    try:
        dtype: np.dtype | None = np.dtype(name)
    except TypeError:
        dtype = None
    if dtype is None or dtype.kind != "f":
        raise IndexDamage(PARAMS, f"dtype is {shown_value(name, 80)}, not a float type")
    return dtype


def check_vocabulary(vocab: Mapping[str, object], terms: int) -> None:
    """Each of the `terms` columns has one word; the empty word may have the number past them (module docstring)."""
    for word, term in vocab.items():
        if not (isinstance(term, int) and not isinstance(term, bool) and 0 <= term <= terms) or (
            term == terms and word != ""
        ):
            raise IndexDamage(
                VOCAB,
                f"word {shown_value(json.dumps(word, ensure_ascii=False), 80)} has term number "
                f"{shown_value(json.dumps(term), 80)}, not one of 0..{terms - 1} (the terms of {INDPTR})",
            )
    numbers = np.fromiter(vocab.values(), dtype=np.int64, count=len(vocab))
    words_per_term = np.bincount(numbers[numbers < terms], minlength=terms)
    if (words_per_term != 1).any():
        term = int(np.flatnonzero(words_per_term != 1)[0])
        if words_per_term[term] == 0:
            raise IndexDamage(VOCAB, f"no word has term number {term} (each of the {terms} terms of {INDPTR} has one)")
        shared = [word for word, number in vocab.items() if number == term][:3]
        raise IndexDamage(VOCAB, f"words {', '.join(map(repr, shared))} have one term number, {term}")
