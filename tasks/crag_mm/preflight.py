"""CRAG-MM's own pre-flight: the Llama-3.2 tokenizer recognised by its vocabulary (a folder's name proves nothing).
Reading a tokenizer.json takes a third of a second; a file already judged is not read again while it is the same
file (its device, inode, size and modification time: a file replaced or rewritten is read afresh)."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from ragbench.api.data import refuse_tokenizer

from .synthetic import LLAMA32_BOS, LLAMA32_VOCAB_SIZE


def llama32_tokenizer_problem(folder: str | Path) -> str | None:
    """Why `folder`/tokenizer.json is not a Llama-3.2 tokenizer (128,256 entries, <|begin_of_text|> = 128000,
    added before every encoding), or None."""
    try:
        found = os.stat(Path(folder) / "tokenizer.json")
    except OSError:
        return _read_problem(str(folder))  # no file to know again: the line says why
    return _judged_problem(str(folder), (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns))


@lru_cache(maxsize=16)
def _judged_problem(folder: str, identity: tuple[int, int, int, int]) -> str | None:
    """`_read_problem(folder)`, once per file identity (the key only: device, inode, size, modification time)."""
    return _read_problem(folder)


def _read_problem(folder: str) -> str | None:
    try:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(Path(folder) / "tokenizer.json"))
    except Exception as exc:  # any unreadable file: one line
        return f"{folder}/tokenizer.json is not a readable tokenizer ({type(exc).__name__}: {exc})"
    size, bos = tokenizer.get_vocab_size(), tokenizer.token_to_id(LLAMA32_BOS[0])
    first = tokenizer.encode("a").ids[:1]
    if size == LLAMA32_VOCAB_SIZE and bos == LLAMA32_BOS[1] and first == [bos]:
        return None
    return (
        f"{folder} is not the Llama-3.2 tokenizer (a vocabulary of {size} entries, {LLAMA32_BOS[0]} = {bos}, "
        f"encodings starting with {first}; Llama-3.2 has {LLAMA32_VOCAB_SIZE} entries and starts every encoding "
        f"with {LLAMA32_BOS[0]} = {LLAMA32_BOS[1]})"
    )


def check_llama32_tokenizer(task: str, folder: str | Path) -> None:
    refuse_tokenizer(
        task,
        llama32_tokenizer_problem(folder),
        "pass --task-arg tokenizer=DIR with meta-llama/Llama-3.2-1B-Instruct's tokenizer.json (CRAG-MM's scoring "
        "cuts answers to 75 Llama-3.2 tokens)",
    )
