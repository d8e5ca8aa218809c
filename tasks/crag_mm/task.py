"""CRAG-MM single-turn and multi-turn (KDD Cup 2025) from the user's local copy of the hub datasets.

crag_mm_single  crag-mm-2025/crag-mm-single-turn-public (v0.1.2), one question per image
crag_mm_multi   crag-mm-2025/crag-mm-multi-turn-public (v0.1.2), conversations about one image; each turn is an
                example whose `turns` hold the earlier questions and their gold answers (the `history=gold`
                variant: upstream's agent sees its own earlier answers, which ragbench does not do yet)

Options (--task-arg): split=validation|public_test (default validation, the only split v0.1.2 publishes),
tokenizer=DIR (the Llama-3.2 tokenizer.json for the 75-token cut; else $CRAG_MM_LLAMA32_TOKENIZER or
DATA_DIR/llama32_tokenizer), evaluation=upstream|corrected (the metric: crag_mm or crag_mm_corrected),
image_cache=DIR (upstream's image download cache, for rows with only an image_url), agent=open|closed|pixtral|qwen|
internvl (the example agent whose messages the prompting sends: VlmAgent, the API agents', or the Pixtral, Qwen,
InternVL agents' own forms, agent_formats.py), history=gold (the earlier turns' answers a multi-turn example shows:
the gold ones; the only variant, named so runs and docs say which).
`ragbench score --predictions DIR` reads local_evaluation.py's output folder (its response.jsonl).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from ragbench.api import ConfigError, Example, RecordError, Task, TaskScoring
from ragbench.api.data import data_dir, find_tokenizer_dir, is_saved_dataset, iter_jsonl, load_split

from .agent_formats import AGENTS
from .metrics import TOKENIZER_ENV
from .prompting import CragMMPrompting
from .records import ImageReader, image_cache_dir, label_names, refuse_missing, row_examples

REVISION = "v0.1.2"
SPLITS = ("validation", "public_test")
EVALUATIONS = {"upstream": ("crag_mm",), "corrected": ("crag_mm_corrected",)}
HISTORIES = ("gold",)
OWN_HISTORY = (
    "the system's own earlier answers (upstream's) need a run that answers a conversation's turns in order, which "
    "ragbench does not do yet (docs/benchmarks/crag-mm.md)"
)
SLICES = ("image_source", "domain", "query_category", "image_quality", "dynamism")


class CragMMTask(Task):
    scoring = TaskScoring(metrics=("crag_mm",), slice_fields=SLICES, gold_fields=("answers",))
    prompting = CragMMPrompting()
    own_documents = False  # questions about an image; retrieval, if any, is the system's
    holds_images = True  # the prompting sends each example's image: a model that takes none is refused before the run
    kind: ClassVar[str] = "single"
    repo: ClassVar[str] = ""

    def __init__(
        self,
        data_path: str | Path | None = None,
        split: str = "validation",
        tokenizer: str | None = None,
        evaluation: str = "upstream",
        image_cache: str | None = None,
        agent: str = "open",
        history: str = "gold",
    ) -> None:
        for name, value, allowed in (
            ("split", split, SPLITS),
            ("evaluation", evaluation, tuple(EVALUATIONS)),
            ("agent", agent, AGENTS),
            ("history", history, HISTORIES),
        ):
            if value not in allowed:
                why = f" ({OWN_HISTORY})" if name == "history" else ""
                raise ConfigError(f"task {self.name}: {name} '{value}' is not one of {', '.join(allowed)}{why}")
        super().__init__(
            data_path,
            split=split,
            tokenizer=tokenizer,
            evaluation=evaluation,
            image_cache=image_cache,
            agent=agent,
            history=history,
        )
        self.prompting = CragMMPrompting(agent)
        self.split = split
        self.scoring = replace(self.scoring, metrics=EVALUATIONS[evaluation])
        self.tokenizer_path = tokenizer
        self.image_cache = image_cache_dir(image_cache)
        self.path: Path | None = None

    def prepare(self) -> None:
        self.path = self.resolve_data()
        self.tokenizer_path = self.resolve_tokenizer()

    def preflight(self, check: Any) -> None:
        """The data copy, and the Llama-3.2 tokenizer (by its vocabulary), each on its own."""
        from .preflight import check_llama32_tokenizer

        with check.step(f"task {self.name}: local copy of {self.repo}"):
            self.path = self.resolve_data()
        with check.step(f"task {self.name}: Llama-3.2 tokenizer"):
            self.tokenizer_path = self.resolve_tokenizer()
            check_llama32_tokenizer(self.name, self.tokenizer_path)

    def resolve_data(self) -> Path:
        if self.data_path is not None:
            if not self.data_path.exists():
                raise ConfigError(f"--data {self.name}={self.data_path}: no such file or folder")
            return self.data_path
        local = data_dir() / self.repo.rsplit("/", 1)[1]
        if local.exists():
            return local
        raise refuse_missing(self.name, self.repo, REVISION, data_dir())

    def resolve_tokenizer(self) -> str:
        return find_tokenizer_dir(
            self.name,
            self.tokenizer_path,
            TOKENIZER_ENV,
            "llama32_tokenizer",
            "CRAG-MM scoring cuts answers to 75 Llama-3.2 tokens and needs that tokenizer",
            "a folder with meta-llama/Llama-3.2-1B-Instruct's tokenizer.json",
        )

    def load(self) -> Any:
        """The split as a `datasets.Dataset`, images left undecoded (bytes): from one Parquet file (the split
        itself), a `save_to_disk` folder, or the hub repository's files (data/<split>-*.parquet)."""
        import datasets

        assert self.path is not None
        if self.path.is_file():
            split = load_split(self.name, parquet=self.path)
        elif is_saved_dataset(self.path):
            split = load_split(self.name, folder=self.path, split=self.split)
        else:  # the files named one by one: `datasets` caches a folder's data by the folder's name alone
            split = load_split(self.name, parquet=self.split_files(self.path))
        return split.cast_column("image", datasets.Image(decode=False)) if "image" in split.features else split

    def split_files(self, folder: Path) -> list[Path]:
        files = sorted(folder.glob(f"**/{self.split}-*.parquet"))
        if not files:
            found = sorted({f.name.split("-")[0] for f in folder.glob("**/*.parquet")})
            raise ConfigError(
                f"task {self.name}: {folder} has no {self.split}-*.parquet (the hub repository's data/ files; splits "
                f"found: {', '.join(found) or 'none'}); pass the downloaded folder or another --task-arg split="
            )
        return files

    def examples(self) -> Iterator[Example | RecordError]:
        if self.path is None:
            self.prepare()
        rows = self.load()
        names = label_names(rows.features)
        where = str(self.path)
        read_image = ImageReader(self.image_cache)
        positions = itertools.count()
        for number, row in enumerate(rows):
            try:
                yield from row_examples(row, number, where, self.kind, names, read_image, positions)
            except RecordError as exc:
                yield exc

    def prediction_records(self, folder: Path) -> Iterator[tuple[int, Any]]:
        """`ragbench score --predictions DIR` over local_evaluation.py's output folder: its one response.jsonl
        (the turns generate mode wrote, in a timestamped folder), each `interaction_id` with its `agent_response`."""
        files = sorted(folder.glob("**/response.jsonl"))
        if len(files) != 1:
            found = f"{len(files)}: {', '.join(str(f) for f in files[:3])}" if files else "none"
            raise ConfigError(
                f"--predictions {folder}: task {self.name} reads the one response.jsonl local_evaluation.py writes "
                f"there (found {found}); pass the folder that holds the run's"
            )
        for index, record in iter_jsonl(files[0]):
            if isinstance(record, RecordError):
                yield index, record
            else:
                yield index, {"id": record.get("interaction_id"), "output": record.get("agent_response")}

    def gold_references(self, gold: dict[str, Any]) -> list[str]:
        return [str(answer) for answer in gold["answers"]]


class CragMMSingle(CragMMTask):
    name = "crag_mm_single"
    kind = "single"
    repo = "crag-mm-2025/crag-mm-single-turn-public"


class CragMMMulti(CragMMTask):
    name = "crag_mm_multi"
    kind = "multi"
    repo = "crag-mm-2025/crag-mm-multi-turn-public"
