"""CRAG-MM's pre-flight reads a tokenizer.json once while it is the same file (every run of a process checks it, a
third of a second a read), and reads it afresh once it is replaced or rewritten at the same path."""

from __future__ import annotations

import shutil

import pytest

from support.crag_mm_helpers import tokenizer_dir


@pytest.fixture
def reads(monkeypatch):
    """The tokenizer.json files the pre-flight reads, in order."""
    from tokenizers import Tokenizer

    read: list[str] = []
    original = Tokenizer.from_file

    def counted(path: str) -> Tokenizer:
        read.append(path)
        return original(path)

    monkeypatch.setattr(Tokenizer, "from_file", staticmethod(counted))
    return read


def test_the_same_file_is_read_once_and_a_replaced_one_again(tmp_path, reads):
    from ragbench.tasks.crag_mm.preflight import llama32_tokenizer_problem

    folder = tmp_path / "tok"
    shutil.copytree(tokenizer_dir(), folder)
    assert llama32_tokenizer_problem(folder) is None
    assert llama32_tokenizer_problem(folder) is None and llama32_tokenizer_problem(str(folder)) is None
    assert len(reads) == 1
    # another file at the same path (a new inode), then the same file rewritten in place: each judged afresh
    (folder / "other.json").write_text('{"not": "a tokenizer"}', encoding="utf-8")
    (folder / "other.json").replace(folder / "tokenizer.json")
    assert "is not a readable tokenizer" in (llama32_tokenizer_problem(folder) or "")
    shutil.copyfile(tokenizer_dir() + "/tokenizer.json", folder / "tokenizer.json")
    assert llama32_tokenizer_problem(folder) is None
    assert len(reads) == 3
    (folder / "tokenizer.json").unlink()
    assert "is not a readable tokenizer" in (llama32_tokenizer_problem(folder) or "")
