"""The run the reranker and refiner tests make: the vanilla system on nq_open_flashrag, searching a BM25 index."""

from __future__ import annotations

from pathlib import Path

from support.helpers import run

TASK = "nq_open_flashrag"


def bm25_vanilla_run(tmp_path: Path, data: Path, index: Path, model: str = "scripted:echo", **components) -> dict:
    """A vanilla run of nq_open_flashrag on `data` searching the BM25 index `index`, with `components` (a
    reranker or refiner and its options)."""
    return run(
        tmp_path,
        tasks=[TASK],
        data={TASK: str(data)},
        system="vanilla",
        model=model,
        retriever="bm25",
        retriever_args={"index": str(index)},
        **components,
    )


def bm25_args(data: Path, index: Path) -> list[str]:
    """The command line of that run (its system the default, vanilla) but its model and components."""
    return [
        "--tasks",
        TASK,
        "--data",
        f"{TASK}={data}",
        "--retriever",
        "bm25",
        "--retriever-arg",
        f"index={index}",
    ]
