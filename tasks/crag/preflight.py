"""CRAG's own pre-flight checks: the Llama-2 tokenizer recognised by its vocabulary (a folder's name
proves nothing), and the mock KG API answering."""

from __future__ import annotations

import functools
from pathlib import Path

from ragbench.api import ConfigError
from ragbench.api.data import refuse_tokenizer
from ragbench.api.run import unreachable

# Llama-2's SentencePiece vocabulary (meta-llama/Llama-2-7b-hf tokenizer.json, as facebookresearch/CRAG
# ships it): its size and a few ids no other tokenizer shares all of.
LLAMA2_VOCAB_SIZE = 32000
LLAMA2_IDS = {"<unk>": 0, "<s>": 1, "</s>": 2, "\u2581the": 278}


def llama2_tokenizer_problem(folder: str | Path) -> str | None:
    """Why `folder`/tokenizer.json is not Llama-2's tokenizer, or None. A file read before, unchanged since
    (same path, device, inode, size and modification time), is not parsed again: parsing it takes a tenth of a
    second, paid by every CRAG run of a process otherwise."""
    try:
        stat = (Path(folder) / "tokenizer.json").stat()
    except OSError:
        return _tokenizer_problem(folder)  # the parse names why it cannot be read
    return _unchanged_tokenizer_problem(str(folder), stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=16)
def _unchanged_tokenizer_problem(folder: str, device: int, inode: int, size: int, mtime_ns: int) -> str | None:
    return _tokenizer_problem(folder)


def _tokenizer_problem(folder: str | Path) -> str | None:
    try:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(Path(folder) / "tokenizer.json"))
    except Exception as exc:  # any unreadable file: one line
        return f"{folder}/tokenizer.json is not a readable tokenizer ({type(exc).__name__}: {exc})"
    size = tokenizer.get_vocab_size()
    wrong = {
        token: tokenizer.token_to_id(token) for token, id_ in LLAMA2_IDS.items() if tokenizer.token_to_id(token) != id_
    }
    if size == LLAMA2_VOCAB_SIZE and not wrong:
        return None
    found = f"a vocabulary of {size} entries" + (
        f", {', '.join(f'{t!r} = {i}' for t, i in wrong.items())}" if wrong else ""
    )
    return (
        f"{folder} is not the Llama-2 tokenizer ({found}; Llama-2 has {LLAMA2_VOCAB_SIZE} entries, "
        + ", ".join(f"{t!r} = {i}" for t, i in LLAMA2_IDS.items())
        + ")"
    )


def check_llama2_tokenizer(task: str, folder: str | Path) -> None:
    refuse_tokenizer(
        task,
        llama2_tokenizer_problem(folder),
        "pass --task-arg tokenizer=DIR with facebookresearch/CRAG's tokenizer/ folder (CRAG's scoring cuts answers "
        "to 75 Llama-2 tokens)",
    )


def check_kg_reachable(task: str, url: str) -> None:
    why = unreachable(url.rstrip("/") + "/")
    if why:
        raise ConfigError(
            f"task {task}: the mock KG API gives {why}; start it (ragbench serve crag-kg --kg-dir DIR), "
            "correct --task-arg kg_url=URL, serve it in-process with --task-arg kg_dir=DIR, or run "
            "without it: --task-arg kg=false"
        )
