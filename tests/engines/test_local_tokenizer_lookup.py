"""A model's tokenizer on disk (what FLARE's judge, Self-RAG's pre-flight and the token counters read) is looked for
with transformers only where it can be on disk: a folder, or a hub name with a folder in the hub cache. Any other model
(a scripted engine's rules file, an API model's name) has none, told without importing transformers (seconds)."""

from __future__ import annotations

import sys
from types import ModuleType

import pytest

from ragbench.api.engines import local_tokenizer


@pytest.fixture
def loads(monkeypatch, tmp_path):
    """The names transformers' AutoTokenizer is asked to load (a stand-in module: nothing real is loaded), with
    the hub cache at tmp_path/hub."""
    from huggingface_hub import constants

    asked: list[str] = []

    class AutoTokenizer:
        @staticmethod
        def from_pretrained(name: str, local_files_only: bool) -> str:
            assert local_files_only
            asked.append(name)
            return f"tokenizer of {name}"

    stand_in = ModuleType("transformers")
    stand_in.AutoTokenizer = AutoTokenizer
    monkeypatch.setitem(sys.modules, "transformers", stand_in)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    return asked


def test_only_a_folder_or_a_cached_hub_name_is_looked_up(tmp_path, loads):
    rules = tmp_path / "rules.json"
    rules.write_text("[]", encoding="utf-8")
    (tmp_path / "hub" / "models--org--cached").mkdir(parents=True)
    folder = tmp_path / "model"
    folder.mkdir()
    assert [local_tokenizer(name) for name in (str(rules), "echo", "org/elsewhere", "gpt-4o")] == [None] * 4
    assert loads == []
    assert local_tokenizer("org/cached") == "tokenizer of org/cached"
    assert local_tokenizer(str(folder)) == f"tokenizer of {folder}"
    assert loads == ["org/cached", str(folder)]
