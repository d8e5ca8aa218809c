"""`tevatron_dense` (alias `browsecomp_plus_dense`): BrowseComp-Plus's dense searcher (searcher/searchers/
faiss_searcher.py) over its prebuilt Qwen3-Embedding index, the files read as they are.

As the searcher: the shards (Tevatron's `(embeddings, docids)` pickles, read by `tevatron_shards` without running
code) go into one flat inner-product faiss index, shard after shard, their docids into one list; each query is
encoded alone (`tevatron_encoder`) and searched alone, and the scores are faiss's. A hit's text is the corpus's
document of its docid. What differs: the shards are taken in name order, where the searcher takes glob's order (the
file system's), which only reorders equal scores; a docid the corpus lacks fails that search, where the searcher
shows "Text not found".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..._errors import ConfigError
from ..._storage.content_digest import content_digest
from ..._types import Document
from ..._values.json_values import JsonObject
from ..base import RetrievalError, Retriever
from ..corpus.lookup import CorpusLookup
from ..corpus.readers import corpus_format
from .tevatron_encoder import LABEL, TASK_PREFIX, TevatronQueryEncoder
from .tevatron_shards import read_shard, shard_paths


class TevatronDenseRetriever(Retriever):
    """Searches Tevatron index shards with the query encoder they were built with (module docstring).

    `index`: the shards' glob pattern (e.g. 'indexes/qwen3-embedding-8b/corpus.shard*.pkl'), a shard, or their
    folder; `model`: the encoder (e.g. Qwen/Qwen3-Embedding-8B, a folder or a downloaded hub name); `corpus`: the
    documents by docid (BrowseComp-Plus's corpus, its save_to_disk folder or a JSONL). The searcher's options as the
    leaderboard's commands set them: `task_prefix` (its default instruction), `max_length` 8192, `pooling` eos,
    `normalize` (--normalize), `torch_dtype` float16; `attn_implementation` defaults to Tevatron's
    flash_attention_2 where flash-attn is installed and a GPU runs the model, else sdpa."""

    name = "tevatron_dense"

    def __init__(
        self,
        index: str | None = None,
        model: str | None = None,
        corpus: str | None = None,
        task_prefix: str = TASK_PREFIX,
        max_length: int = 8192,
        pooling: str = "eos",
        normalize: bool = True,
        torch_dtype: str = "float16",
        attn_implementation: str | None = None,
        device: str | None = None,
    ) -> None:
        if not index or not model or not corpus:
            missing = [name for name, value in (("index", index), ("model", model), ("corpus", corpus)) if not value]
            raise ConfigError(
                f"{LABEL} needs --retriever-arg {'=, '.join(missing)}= (index: the shards' glob pattern, e.g. "
                "'indexes/qwen3-embedding-8b/corpus.shard*.pkl'; model: the encoder they were built with; corpus: "
                "the documents by docid)"
            )
        corpus_format(Path(corpus))
        self.paths = shard_paths(index)
        self.index_pattern, self.model_name, self.corpus_path = index, model, Path(corpus)
        self.index, self.docids = self.read_index()
        self.encoder = TevatronQueryEncoder(
            model, task_prefix, max_length, pooling, normalize, torch_dtype, attn_implementation, device
        )
        if self.encoder.dim != self.index.d:
            raise ConfigError(
                f"{LABEL}: model {model} gives {self.encoder.dim}-dimensional vectors, the shards of {index} hold "
                f"{self.index.d}-dimensional ones; pass model= the encoder the index was built with"
            )
        self.documents = CorpusLookup(self.corpus_path)

    def read_index(self) -> tuple[Any, list[str]]:
        return flat_index(self.paths)

    def search(self, queries: list[str], k: int) -> list[list[Document] | RetrievalError]:
        return [self.search_one(query, k) for query in queries]

    def search_one(self, query: str, k: int) -> list[Document] | RetrievalError:
        if k == 0:
            return []
        scores, rows = self.index.search(self.encoder.encode(query), k)
        return self.hits_of(rows[0].tolist(), scores[0].tolist())

    def hits_of(self, rows: list[int], scores: list[float]) -> list[Document] | RetrievalError:
        """The corpus's documents of the index's `rows` (a -1 row left out), scored `scores`."""
        hits = []
        for row, score in zip(rows, scores):
            if row < 0:  # fewer vectors than k
                continue
            document = self.documents.get(self.docids[row])
            if document is None:
                return RetrievalError(
                    f"{LABEL}: docid {self.docids[row]} of the index is not in corpus {self.corpus_path}; pass the "
                    "corpus the index was built from"
                )
            document.score = float(score)  # a fresh Document per lookup
            hits.append(document)
        return hits

    def metadata(self) -> JsonObject:
        encoder = self.encoder
        return {
            "retriever": self.name,
            "index": [str(path.resolve()) for path in self.paths],
            "vectors": int(self.index.ntotal),
            "dim": int(self.index.d),
            "corpus": str(self.corpus_path.resolve()),
            "model": self.model_name,
            "task_prefix": encoder.task_prefix,
            "max_length": encoder.max_length,
            "pooling": encoder.pooling,
            "normalize": encoder.normalize,
            "torch_dtype": encoder.torch_dtype,
            "attn_implementation": encoder.attn_implementation,
            "device": encoder.device,
        }

    def contents(self) -> JsonObject:
        """The files' contents (sampled: `content_digest`), so a resumed run searches the same shards, corpus and
        encoder wherever they were moved."""
        model = Path(self.model_name).expanduser()
        return {
            "index": [content_digest(path) for path in self.paths],
            "corpus": content_digest(self.corpus_path),
            "model": content_digest(model) if model.exists() else self.model_name,
            "vectors": int(self.index.ntotal),
        }

    def close(self) -> None:
        self.index, self.docids = None, []


def flat_index(paths: list[Path]) -> tuple[Any, list[str]]:
    """The shards at `paths` in one flat inner-product index, their docids in the same order."""
    try:
        import faiss
    except ImportError:
        raise ConfigError(f"{LABEL} needs faiss: pip install faiss-cpu") from None
    index, docids = None, []
    for path in paths:
        embeddings, shard_docids = read_shard(path)
        if index is None:
            index = faiss.IndexFlatIP(embeddings.shape[1])
        if embeddings.shape[1] != index.d:
            raise ConfigError(
                f"{LABEL}: shard {path} holds {embeddings.shape[1]}-dimensional vectors, {paths[0]} "
                f"{index.d}-dimensional ones; pass the shards of one index"
            )
        index.add(embeddings)
        docids += shard_docids
    return index, docids
