"""ViDoRe's datasets as a user keeps them offline, read as vidore-benchmark's evaluators read them.

Two formats (vidore-benchmark's `ViDoReEvaluatorQA` and `ViDoReEvaluatorBEIR`):

- **QA** (ViDoRe V1, e.g. vidore/docvqa_test_subsampled): one table whose rows are pages (`image`,
  `image_filename`) and the query asked of each (`query`, null on a page asked nothing). The corpus is every row's
  page, identified by its `image_filename`; each query's one relevant page is the filename of the last row
  holding it.
- **BEIR** (ViDoRe V2 and V3): three configs, `corpus` (`corpus-id`, `image`), `queries` (`query-id`, `query`) and
  `qrels` (`query-id`, `corpus-id`, `score`, graded); V3 spells the ids `corpus_id` and `query_id`, and adds a
  query `language`.

Each table is read from a folder the user holds (no hub at run time): a `datasets` `save_to_disk` folder (a
Dataset, or a DatasetDict holding the split), Parquet files as the hub repository lays them out
(`data/test-*.parquet` for QA, `corpus/test-*.parquet`, `queries/...`, `qrels/...` for BEIR) or a Hugging Face
hub cache folder (`datasets--vidore--NAME`, its snapshot). Tables are Arrow, memory-mapped where the files allow:
an image column is its stored `{"bytes", "path"}` values, decoded only when a page is shown or encoded.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..._errors import ConfigError
from ..._imports import import_extra
from ..._storage.datafiles import is_saved_dataset
from ..._storage.given_files import given_files_there
from ..corpus.saved import folder_sha256

QA = "qa"
BEIR = "beir"
BEIR_CONFIGS = ("corpus", "queries", "qrels")
QA_FOLDERS = ("data", ".")
INSTALL = "pip install 'ragbench[datasets]'"


def id_column(table: Any, name: str, where: str) -> str:
    """The id column `name` (`corpus-id`, V2) or its V3 spelling (`corpus_id`) of `table`."""
    for column in (name, name.replace("-", "_")):
        if column in table.column_names:
            return column
    raise ConfigError(f"{where}: no column {name!r} (nor {name.replace('-', '_')!r}); columns: {table.column_names}")


def snapshot(folder: Path) -> Path:
    """A hub cache folder (`datasets--vidore--NAME`) as its one snapshot (the one `refs/main` names where it has
    several); any other folder as it is."""
    snapshots = folder / "snapshots"
    if not snapshots.is_dir():
        return folder
    ref = folder / "refs" / "main"
    if ref.is_file() and (snapshots / ref.read_text(encoding="utf-8").strip()).is_dir():
        return snapshots / ref.read_text(encoding="utf-8").strip()
    found = sorted(path for path in snapshots.iterdir() if path.is_dir())
    if len(found) != 1:
        raise ConfigError(f"{folder}: a hub cache folder with {len(found)} snapshots; name the snapshot folder to read")
    return found[0]


@dataclass(frozen=True)
class DataTable:
    """One table of a ViDoRe dataset: its Arrow rows and the files they were read from (its identity)."""

    rows: Any  # pyarrow.Table
    files: tuple[Path, ...]
    where: str

    def column(self, name: str) -> list[Any]:
        return list(self.rows.column(name).to_pylist())

    def __len__(self) -> int:
        return int(self.rows.num_rows)


def read_table(folder: Path, split: str) -> DataTable | None:
    """The `split` of the table stored at `folder` (a save_to_disk folder, or a folder of Parquet files named
    `SPLIT-*.parquet` or, where none is, `*.parquet`); None where `folder` holds neither."""
    if is_saved_dataset(folder):
        return saved_table(folder, split)
    parquet = sorted(folder.glob(f"{split}-*.parquet")) or sorted(folder.glob("*.parquet"))
    if not parquet:
        return None
    given_files_there(parquet, f"a Parquet file of the {split} split")
    pq = import_extra("pyarrow.parquet", f"{folder}: Parquet files, read with pyarrow: {INSTALL}")
    pa = import_extra("pyarrow", f"{folder}: Parquet files, read with pyarrow: {INSTALL}")
    try:
        rows = pa.concat_tables([pq.read_table(path, memory_map=True) for path in parquet])
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise ConfigError(f"{folder}: cannot read its Parquet files ({exc}); download them again") from None
    return DataTable(rows, tuple(parquet), str(folder))


def saved_table(folder: Path, split: str) -> DataTable:
    datasets = import_extra("datasets", f"{folder} is a dataset saved by Hugging Face datasets: {INSTALL}")
    try:
        loaded = datasets.load_from_disk(str(folder))
    except Exception as exc:  # datasets raises many kinds; each is one line
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ConfigError(f"{folder}: cannot read the saved dataset ({type(exc).__name__}: {reason})") from None
    if isinstance(loaded, datasets.DatasetDict):
        if split not in loaded:
            raise ConfigError(f"{folder}: no split {split!r} (it holds {', '.join(loaded)}); pass split=NAME")
        loaded = loaded[split]
    loaded = loaded.flatten_indices()  # rows as selected, not the Arrow file's order
    return DataTable(loaded.data.table, tuple(sorted(folder.rglob("*.arrow"))), str(folder))


@dataclass(frozen=True)
class ViDoReData:
    """A ViDoRe dataset's tables: `qa` (V1) or the three `corpus`, `queries`, `qrels` (V2, V3)."""

    folder: Path
    layout: str  # QA or BEIR
    tables: dict[str, DataTable]

    @property
    def sha256(self) -> str:
        """The digest of every file the tables were read from (names, sizes, bytes)."""
        files = sorted({file for table in self.tables.values() for file in table.files})
        return folder_sha256(self.folder, files)


def open_vidore(path: str | Path | None, split: str = "test", what: str = "task vidore") -> ViDoReData:
    """The ViDoRe dataset at `path` (QA or BEIR, by what the folder holds); a missing or unreadable one is one line."""
    if path is None:
        raise ConfigError(
            f"{what} reads a ViDoRe dataset kept offline: pass its folder (a save_to_disk folder, the hub repository's "
            "Parquet files, or its hub cache folder datasets--vidore--NAME)"
        )
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise ConfigError(
            f"{what}: {folder} not found; download the dataset where the hub is reachable (e.g. `hf download "
            "vidore/NAME --repo-type dataset --local-dir FOLDER`) and name that folder"
        )
    folder = snapshot(folder)
    found = read_vidore(folder, split, what)
    if found is None:
        raise ConfigError(
            f"{what}: {folder} is no ViDoRe dataset: expected corpus/, queries/ and qrels/ (V2, V3), or "
            f"data/{split}-*.parquet or a save_to_disk folder (V1)"
        )
    return found


def read_vidore(folder: Path, split: str, what: str) -> ViDoReData | None:
    """The ViDoRe dataset the folder `folder` holds (BEIR's three configs, or a QA table); None where it holds
    neither layout (a table of a layout it holds that cannot be read is a ConfigError)."""
    if all((folder / config).is_dir() for config in BEIR_CONFIGS):
        tables = {}
        for config in BEIR_CONFIGS:
            table = read_table(folder / config, split)
            if table is None:
                raise ConfigError(f"{what}: {folder / config} holds no saved dataset and no {split}-*.parquet")
            tables[config] = table
        return ViDoReData(folder, BEIR, tables)
    for sub in QA_FOLDERS:
        table = read_table(folder / sub, split)
        if table is not None:
            return ViDoReData(folder, QA, {QA: table})
    return None


def qa_queries(table: DataTable) -> Iterator[tuple[int, str, str]]:
    """(row, query, relevant filename) of each distinct non-null query of a QA table, in first-occurrence order
    (`deduplicate_dataset_rows`), its relevant page the filename of the LAST row holding it (upstream's
    `queries2filename`, a dict built over every row)."""
    queries, filenames = table.column("query"), table.column("image_filename")
    last = {query: filename for query, filename in zip(queries, filenames)}
    first: dict[str, int] = {}
    for row, query in enumerate(queries):
        if query is not None and query not in first:
            first[query] = row
    for query, row in first.items():
        yield row, query, str(last[query])
