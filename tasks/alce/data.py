"""Finding and reading ALCE's data files (one JSON array per file, from ALCE-data.tar)."""

from __future__ import annotations

import tarfile
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ragbench.api import ConfigError
from ragbench.api.data import data_dir, given_handle, given_text, parse_json, resolve_data_file

# princeton-nlp/ALCE download_data.sh: one archive holding every file.
ARCHIVE = "ALCE-data.tar"
ARCHIVE_URL = "https://huggingface.co/datasets/princeton-nlp/ALCE-data/resolve/main/ALCE-data.tar"


def data_files(dataset: str, retrievers: tuple[str, ...]) -> Mapping[str, str]:
    """The archive's file of each retrieval of `dataset`: `{dataset}_eval_{retriever}_top100.json`, and "oracle",
    the first retriever's top 100 reranked to the oracle five (`..._top100_reranked_oracle.json`)."""
    files = {retriever: f"{dataset}_eval_{retriever}_top100.json" for retriever in retrievers}
    return MappingProxyType({**files, "oracle": f"{dataset}_eval_{retrievers[0]}_top100_reranked_oracle.json"})


def alce_data_file(task: str, filename: str, explicit: Path | None) -> Path:
    """--data TASK=PATH, else DATA_DIR/filename, else the file extracted from ALCE-data.tar
    (DATA_DIR/ALCE-data.tar, downloaded when online)."""
    if explicit is not None:
        return resolve_data_file(task, filename, explicit, None)
    local = data_dir() / filename
    if local.is_file():
        return local
    archive = resolve_data_file(task, ARCHIVE, None, ARCHIVE_URL)
    try:
        with given_handle(archive, f"ALCE's {ARCHIVE}") as raw, tarfile.open(fileobj=raw) as tar:
            member = next((m for m in tar.getmembers() if m.isfile() and Path(m.name).name == filename), None)
            if member is None:
                raise ConfigError(f"task {task}: {archive} has no {filename}; pass --data {task}=PATH")
            source = tar.extractfile(member)
            assert source is not None  # a regular file's
            partial = local.with_suffix(".part")
            partial.write_bytes(source.read())
            partial.replace(local)
    except (tarfile.TarError, OSError) as exc:
        raise ConfigError(
            f"task {task}: cannot read {filename} from {archive} ({exc}); pass --data {task}=PATH"
        ) from exc
    return local


def read_records(path: Path) -> list[Any]:
    """The records of an ALCE data file (a JSON array) or of a run.py result file
    ({"args": ..., "data": [...]})."""
    text = given_text(path, "an ALCE data file (a JSON array of questions)")
    try:
        data = parse_json(text)
    except ValueError as exc:
        raise ConfigError(f"{path}: not an ALCE data file ({exc}); expected a JSON array of questions") from exc
    if isinstance(data, dict) and isinstance(data.get("data"), list):
        data = data["data"]
    if not isinstance(data, list):
        raise ConfigError(
            f"{path}: expected a JSON array of questions (or a run.py result with 'data'), got {type(data).__name__}"
        )
    return data
