"""Processes that need the embedded model's converted copy at once convert it once: the second waits on the
OS lock the first holds on the cache folder while it converts, then finds the copy made."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from ragbench._engines.local import embedded


class SavedFiles:
    """Stands for a model or tokenizer: `save_pretrained` writes the files a complete copy has."""

    def __init__(self, *names: str) -> None:
        self.names = names

    def save_pretrained(self, folder: Path) -> None:
        Path(folder).mkdir(parents=True, exist_ok=True)
        for name in self.names:
            (Path(folder) / name).write_text("{}", encoding="utf-8")


def waiting_on_a_lock() -> bool:
    """Whether a lock request of this process waits (a `->` line of /proc/locks names its pid)."""
    lines = Path("/proc/locks").read_text(encoding="utf-8").splitlines()
    return any("->" in line and line.split()[5] == str(os.getpid()) for line in lines)


def test_a_second_conversion_waits_for_the_first_and_converts_nothing(tmp_path):
    pytest.importorskip("transformers")
    if not Path("/proc/locks").is_file():
        pytest.skip("needs Linux's /proc/locks to see the second conversion wait")
    target = tmp_path / embedded.CONVERTED_NAME
    first_building, go = threading.Event(), threading.Event()
    second_built = threading.Event()

    def first_build():
        first_building.set()
        assert go.wait(120)
        return SavedFiles("config.json", "model.safetensors"), SavedFiles("tokenizer.json")

    def second_build():
        second_built.set()
        return SavedFiles("config.json", "model.safetensors"), SavedFiles("tokenizer.json")

    made: list[Path] = []
    first = threading.Thread(target=lambda: made.append(embedded._saved_once(target, "gguf", first_build)))
    second = threading.Thread(target=lambda: made.append(embedded._saved_once(target, "gguf", second_build)))
    first.start()
    assert first_building.wait(120)
    second.start()
    while not (second_built.is_set() or waiting_on_a_lock()):  # the second reached the lock, or converted
        second.join(0.01)
    go.set()
    first.join(120)
    second.join(120)
    assert not second_built.is_set(), "the second process converted the model again"
    assert made == [target, target] and (target / "SOURCE").read_text(encoding="utf-8") == "gguf\n"
    assert [path.name for path in tmp_path.iterdir()] == [target.name]  # no scratch folder left
