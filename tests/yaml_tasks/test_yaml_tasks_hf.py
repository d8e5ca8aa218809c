"""YAML tasks reading through Hugging Face `datasets`, offline: a folder written by `save_to_disk`, a folder
of data files as a hub repository holds them, a Parquet file, and a hub name missing from the cache (one
line saying what to download where, at once, also when the hub's address does not answer)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from conftest import needs
from ragbench.api import ConfigError
from support.command_zygote import Zygote
from support.helpers import closed_port

pytestmark = needs("datasets")  # not imported while the tests are collected


ROWS = [  # Hugging Face hotpot_qa's layout: context as parallel lists
    {
        "id": "5a8b",
        "question": "Which magazine was started first?",
        "answer": "Arthur's Magazine",
        "level": "medium",
        "context": {
            "title": ["Arthur's Magazine", "First for Women"],
            "sentences": [["Arthur's Magazine (1844-1846) was a periodical."], ["First for Women began in 1989."]],
        },
    },
    {
        "id": "5a7a",
        "question": "Which city is bigger?",
        "answer": "Lyon",
        "level": "hard",
        "context": {"title": ["Lyon"], "sentences": [["Lyon is big.", " It is old."]]},
    },
]
TASK = """task: hotpot_hf
data: {DATA}
fields:
  gold: {answers: answer}
  documents: {path: context, shape: columns}
  slices: {level: level}
prompt: {template: "{% for doc in docs %}{{ doc.title }}: {{ doc.text }}\\n{% endfor %}Q: {{ question }}"}
metrics: [em]
"""


@pytest.fixture
def offline(tmp_path, monkeypatch) -> dict[str, str]:
    """The environment of a machine without the hub: offline flags, an empty cache of our own (set after datasets
    is imported: it and huggingface_hub read them once, when imported, and they are this test's alone)."""
    import datasets  # noqa: F401

    env = {"HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf_home")}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


def run_task(zygote: Zygote, tmp_path: Path, data: str, env: dict[str, str], *extra: str):
    """The task run by `ragbench` as a command in `env`: a fork of the tests' command zygote, which has not
    imported datasets or huggingface_hub (they read the environment as the command imports them)."""
    task = tmp_path / "task.yaml"
    task.write_text(TASK.replace("{DATA}", data), encoding="utf-8")
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"pattern": "magazine", "response": "Arthur's Magazine"}, {"response": "Paris"}]))
    args = ["--tasks", str(task), "--model", f"scripted:{rules}", "--no-progress", "--output", str(tmp_path / "r")]
    return zygote.run([*args, *extra], {**os.environ, **env})


def scored(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "r" / "results.json").read_text())


def test_a_dataset_saved_with_save_to_disk(tmp_path, offline, ragbench_zygote):
    import datasets

    dataset = datasets.Dataset.from_list(ROWS)
    datasets.DatasetDict({"validation": dataset, "train": dataset.select([0])}).save_to_disk(str(tmp_path / "saved"))
    result = run_task(ragbench_zygote, tmp_path, "{path: saved, split: validation}", offline)
    assert result.returncode == 0, result.stderr
    results = scored(tmp_path)
    assert results["counts"]["hotpot_hf"]["scored"] == 2 and results["results"]["hotpot_hf"]["em"] == 0.5
    sample = json.loads((tmp_path / "r" / "samples" / "hotpot_hf.jsonl").read_text().splitlines()[1])
    assert sample["prediction"]["docs"] == [{"id": "5a7a:0", "title": "Lyon", "text": "Lyon is big. It is old."}]


def test_a_bad_row_is_named_by_its_row_in_the_dataset(tmp_path, offline):
    import datasets

    from ragbench.api.yaml_tasks import yaml_task_class

    datasets.Dataset.from_list([ROWS[0], {**ROWS[1], "answer": None}]).save_to_disk(str(tmp_path / "saved"))
    (tmp_path / "task.yaml").write_text(TASK.replace("{DATA}", "{path: saved}"), encoding="utf-8")
    good, bad = yaml_task_class(tmp_path / "task.yaml")().examples()
    assert (
        good.id == "5a8b" and str(bad) == f"{tmp_path / 'saved'} row 1 field 'answer': null where a value is required"
    )


def test_a_data_files_folder_as_a_hub_repository_holds_it(tmp_path, offline, ragbench_zygote):
    import datasets

    folder = tmp_path / "hotpot_qa"
    (folder / "data").mkdir(parents=True)
    datasets.Dataset.from_list(ROWS).to_parquet(str(folder / "data" / "validation-00000-of-00001.parquet"))
    datasets.Dataset.from_list(ROWS[:1]).to_parquet(str(folder / "data" / "train-00000-of-00001.parquet"))
    result = run_task(ragbench_zygote, tmp_path, "{path: hotpot_qa, split: validation}", offline)
    assert result.returncode == 0, result.stderr
    assert scored(tmp_path)["counts"]["hotpot_hf"]["scored"] == 2


def test_a_parquet_file(tmp_path, offline, ragbench_zygote):
    import datasets

    datasets.Dataset.from_list(ROWS).to_parquet(str(tmp_path / "dev.parquet"))
    result = run_task(ragbench_zygote, tmp_path, "{path: dev.parquet}", offline)
    assert result.returncode == 0, result.stderr
    assert scored(tmp_path)["results"]["hotpot_hf"]["em"] == 0.5


def test_a_split_that_is_not_there_is_named_with_the_splits_there_are(tmp_path, offline, ragbench_zygote):
    import datasets

    datasets.DatasetDict({"validation": datasets.Dataset.from_list(ROWS)}).save_to_disk(str(tmp_path / "saved"))
    result = run_task(ragbench_zygote, tmp_path, "{path: saved, split: dev}", offline)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"ragbench: error: task hotpot_hf: dataset folder {tmp_path / 'saved'} has no "
        "split 'dev' (its splits: validation)"
    )


def test_a_hub_dataset_not_in_the_cache_says_what_to_download_where(tmp_path, offline, ragbench_zygote):
    result = run_task(
        ragbench_zygote, tmp_path, "{hf: hotpotqa/hotpot_qa, config: distractor, split: validation}", offline
    )
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert result.stderr.startswith(
        "ragbench: error: task hotpot_hf: Hugging Face dataset 'hotpotqa/hotpot_qa' "
        "(config distractor) is not in the Hugging Face cache and the hub cannot be reached"
    )
    assert (
        "datasets.load_dataset('hotpotqa/hotpot_qa', 'distractor', split='validation').save_to_disk('FOLDER')"
        in result.stderr
    )
    assert result.stderr.strip().endswith("copy FOLDER here and pass --data hotpot_hf=FOLDER")


def test_without_offline_flags_an_unanswering_hub_is_not_waited_for(tmp_path, monkeypatch, ragbench_zygote):
    """No HF_*_OFFLINE: the hub's address refuses the connection, so the load runs offline at once
    (datasets alone retries the hub for about 25 s) and fails with the same one line."""
    for key in ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE"):
        monkeypatch.delenv(key, raising=False)
    env = {"HF_HOME": str(tmp_path / "hf_home"), "HF_ENDPOINT": "http://127.0.0.1:9"}
    result = run_task(ragbench_zygote, tmp_path, "{hf: someone/missing_set}", env)
    assert result.returncode == 2 and "the hub cannot be reached" in result.stderr, result.stderr


def test_the_data_option_replaces_a_hub_name_with_a_saved_folder(tmp_path, offline, ragbench_zygote):
    import datasets

    datasets.Dataset.from_list(ROWS).save_to_disk(str(tmp_path / "saved"))
    result = run_task(
        ragbench_zygote,
        tmp_path,
        "{hf: hotpotqa/hotpot_qa, config: distractor, split: validation}",
        offline,
        "--data",
        f"hotpot_hf={tmp_path / 'saved'}",
    )
    assert result.returncode == 0, result.stderr
    assert scored(tmp_path)["counts"]["hotpot_hf"]["scored"] == 2


def test_a_hub_dataset_loaded_offline_leaves_a_model_checked_in_another_thread_online(tmp_path, monkeypatch):
    """A hub dataset whose hub does not answer is loaded in the libraries' offline mode, a process-wide flag: a hub
    model checked meanwhile in another thread still finds the hub unreachable and says so (was: it read the
    dataset's flag, took the hub for off on purpose and went on to the model's loader, which failed otherwise)."""
    import datasets
    from huggingface_hub import constants

    from ragbench.api.data import load_split
    from ragbench.api.run import hub_fetch_problem

    inside, release = threading.Event(), threading.Event()

    def held_load(*args, **kwargs):
        inside.set()
        release.wait()
        raise FileNotFoundError("not in the cache")

    answers = []
    with closed_port() as port:
        monkeypatch.setattr(constants, "ENDPOINT", f"http://127.0.0.1:{port}")
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
        monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
        monkeypatch.setattr(datasets, "load_dataset", held_load)
        loader = threading.Thread(target=lambda: pytest.raises(ConfigError, load_split, "t", name="someorg/data"))
        loader.start()
        inside.wait()  # the dataset's load is under way, offline
        checker = threading.Thread(target=lambda: answers.append(hub_fetch_problem("someorg/a-model")))
        checker.start()
        checker.join(timeout=2)  # a check reading the flag has answered by now; one waiting for the load has not
        release.set()
        loader.join()
        checker.join()
    [answer] = answers
    assert answer is not None and "the hub cannot be reached: no answer from" in answer
