"""Retrieval: the bases a retriever, reranker or refiner plugin subclasses, and the conventions they share.

    from ragbench.api.retrieval import Reranker, Retriever

`Retriever` (`search(queries, k)`), its on-disk index's `IndexBuilder`, `RetrievalError`; `QueryStyle`
and `BGE_QUERY_INSTRUCTION` (how a query is phrased for an embedder, registered through the
`ragbench_query_styles` hook); `model_location` (a sentence-transformers model's folder or hub name, "embedded"
the packaged all-MiniLM-L6-v2); `FlashRagEncoder` (a transformers encoder under FlashRAG's pooling and
normalisation rules), `DualEncoder` (a local SigLIP or CLIP model and its processor); `option_path` (the file or
folder a retriever option names, or a ConfigError saying what to pass); `opened_picture` (a query's picture decoded,
or the RetrievalError of its search); `passage_text` (a document as indexed: `title\\ntext`); `read_corpus` (a passage
file's or saved dataset's documents, a bad line as a RecordError), `corpus_format` (how a corpus path is read, or
a ConfigError saying what a corpus can be); `CorpusLookup` (a passage file's documents by id, read from
disk at each lookup); `Reranker` and `Refiner` (the `--reranker`/`--refiner` components) and `REFINED_TEXT` (the
metadata key of the one document holding a refiner's text, which a prompt shows as it is); `trec_measures`
(trec_eval's measures of one query's ranking against qrels, by pytrec_eval), `trec_eval_all` (a run file's
`trec_eval -c` values), `import_pytrec_eval`, `check_pytrec_eval` (a metric's pre-flight step: pytrec_eval
installed), `relevance` (a qrels grade as trec_eval holds it, or a ValueError) and `shown_short` (fewer documents shown than a cut-off while the searches returned more);
`trec_ranking`, `trec_run_text`, `read_trec_run` and `run_tag` (TREC run files); `open_vidore` (a ViDoRe dataset kept
offline, its QA or BEIR tables: `ViDoReData`), `qa_queries` (a ViDoRe V1 table's queries and their pages),
`id_column` (a V2 or V3 id column's spelling), `PageCorpus` (what a page retriever, `colpali` or `siglip`, reads of
its pages: rows, each one's page id and picture, and what the pages are; ViDoRe's datasets and a folder of page
images are ones, and a retriever takes any as `corpus=`), `open_pages` (the corpus a `pages=` folder holds),
`PageRetriever` (the base of a page retriever: pages encoded into an index saved and reused), its two kinds
`LateInteractionRetriever` (many vectors a page, scored by MaxSim: `colpali`) and `ImageDenseRetriever` (one vector a
page: `siglip`, `clip`), which a retriever of another page model subclasses, and
what a page retriever's hits carry in their metadata:
`PAGE_INDEX` (the page's place in the corpus) and, on a query's first hit, `RANKING` (the confidence of the
ranking over every page's score, as mteb computes it).

A retriever kind that can be built in shards and searched on them is one `ShardedKind` subclass, whose object its
catalogue entry names (`shards: "pkg.module:KIND"`), declaring by its bases what else it can do (`Splits`,
`BuildsShards`, `BuildsBlocks`): its members are the shard-parallel build (each part analysed,
the parts' small statistics merged, each shard's files finished), its `ShardSearcher` (`search`: one shard's search
in a Ray actor), its `BuiltShardsFront` (`shards_front`: the run's side: a batch's payload, the shards' answers
merged, `merge_top_k`; it serves a split of the one index too, so one class can be `front` as well) and, for the
merged parallel build (`index build --ray`, one index), its blocks (a block of passages analysed by a `BlockWorker`
on a Ray actor, as arrays, `json_array` and `from_json_array` carrying JSON values, then given to the kind's
builder).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragbench.api._lazy import lazy_names

if TYPE_CHECKING:  # type checkers read each name where it is defined; it is imported on first use (below)
    from ragbench._components.base import Refiner, Reranker
    from ragbench._retrieval.base import IndexBuilder, RetrievalError, Retriever
    from ragbench._retrieval.corpus.lookup import CorpusLookup
    from ragbench._retrieval.corpus.readers import corpus_format, passage_text, read_corpus
    from ragbench._retrieval.dense.flashrag_encoder import FlashRagEncoder
    from ragbench._retrieval.dense.retriever import model_location
    from ragbench._retrieval.option_paths import option_path
    from ragbench._retrieval.pages.corpus import PageCorpus, open_pages
    from ragbench._retrieval.pages.late_interaction import LateInteractionRetriever
    from ragbench._retrieval.pages.page_retriever import PageRetriever
    from ragbench._retrieval.pages.ranking import PAGE_INDEX, RANKING
    from ragbench._retrieval.pages.single_vector import DualEncoder, ImageDenseRetriever
    from ragbench._retrieval.pages.vidore_data import ViDoReData, id_column, open_vidore, qa_queries
    from ragbench._retrieval.pictures import opened_picture
    from ragbench._retrieval.query_style import BGE_QUERY_INSTRUCTION, QueryStyle
    from ragbench._retrieval.sharding.build.front import BuiltShardsFront
    from ragbench._retrieval.sharding.kind import BuildsBlocks, BuildsShards, ShardedKind, Splits
    from ragbench._retrieval.sharding.merge import merge_top_k
    from ragbench._retrieval.sharding.merged_build.analysis import BlockWorker, from_json_array, json_array
    from ragbench._retrieval.sharding.searcher import ShardSearcher
    from ragbench._retrieval.trec.grades import relevance
    from ragbench._retrieval.trec.measures import (
        check_pytrec_eval,
        import_pytrec_eval,
        shown_short,
        trec_eval_all,
        trec_measures,
    )
    from ragbench._retrieval.trec.run_file import read_trec_run, run_tag, trec_ranking, trec_run_text
    from ragbench._shared.refined_text import REFINED_TEXT

_MODULES = {
    "ragbench._retrieval.base": ("Retriever", "IndexBuilder", "RetrievalError"),
    "ragbench._retrieval.query_style": ("QueryStyle", "BGE_QUERY_INSTRUCTION"),
    "ragbench._retrieval.dense.retriever": ("model_location",),
    "ragbench._retrieval.dense.flashrag_encoder": ("FlashRagEncoder",),
    "ragbench._retrieval.option_paths": ("option_path",),
    "ragbench._retrieval.pictures": ("opened_picture",),
    "ragbench._retrieval.pages.single_vector": ("DualEncoder", "ImageDenseRetriever"),
    "ragbench._retrieval.pages.page_retriever": ("PageRetriever",),
    "ragbench._retrieval.pages.late_interaction": ("LateInteractionRetriever",),
    "ragbench._retrieval.corpus.readers": ("passage_text", "read_corpus", "corpus_format"),
    "ragbench._retrieval.trec.measures": (
        "trec_measures",
        "trec_eval_all",
        "import_pytrec_eval",
        "check_pytrec_eval",
        "shown_short",
    ),
    "ragbench._retrieval.trec.grades": ("relevance",),
    "ragbench._retrieval.trec.run_file": ("trec_ranking", "trec_run_text", "read_trec_run", "run_tag"),
    "ragbench._retrieval.corpus.lookup": ("CorpusLookup",),
    "ragbench._components.base": ("Reranker", "Refiner"),
    "ragbench._shared.refined_text": ("REFINED_TEXT",),
    "ragbench._retrieval.sharding.kind": ("ShardedKind", "Splits", "BuildsShards", "BuildsBlocks"),
    "ragbench._retrieval.sharding.searcher": ("ShardSearcher",),
    "ragbench._retrieval.sharding.build.front": ("BuiltShardsFront",),
    "ragbench._retrieval.sharding.merge": ("merge_top_k",),
    "ragbench._retrieval.pages.vidore_data": ("open_vidore", "ViDoReData", "qa_queries", "id_column"),
    "ragbench._retrieval.pages.ranking": ("PAGE_INDEX", "RANKING"),
    "ragbench._retrieval.pages.corpus": ("PageCorpus", "open_pages"),
    "ragbench._retrieval.sharding.merged_build.analysis": ("BlockWorker", "json_array", "from_json_array"),
}
__all__, __getattr__, __dir__ = lazy_names(__name__, _MODULES)
