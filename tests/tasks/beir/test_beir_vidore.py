"""The vidore task: ViDoRe V1's QA table and V2's and V3's BEIR configs read as vidore-benchmark's evaluators read
them, and a run whose figures equal the evaluator's on the same scores (tests/data/parity/vidore_run.json)."""

from __future__ import annotations

import json
import math

import pytest

from conftest import TEST_DATA, needs
from ragbench.api import ConfigError, RecordError
from ragbench.tasks.beir.vidore import ViDoReTask
from ragbench.testing import run_eval

VIDORE = TEST_DATA / "vidore"
RECORD = json.loads((TEST_DATA / "parity" / "vidore_run.json").read_text(encoding="utf-8"))
# vidore-benchmark 5.0.0's figures on made-up score matrices (record_vidore_figures.py)
FIGURES = json.loads((TEST_DATA / "parity" / "vidore_figures.json").read_text(encoding="utf-8"))


def test_v1_queries_are_deduplicated_and_judge_the_last_rows_page():
    examples = list(ViDoReTask(VIDORE / "v1").examples())
    assert [(e.id, e.question, e.gold) for e in examples] == [
        ("0", "Who collects the harbour tolls of Olm?", {"qrels": {"data/pages/page_0.png": 1}}),
        ("1", "How many people lived in Varn in 1911?", {"qrels": {"data/pages/page_3.png": 1}}),  # its last row's
        ("3", "Which lighthouse did Pell build?", {"qrels": {"data/pages/page_1.png": 1}}),
        ("5", "When is high tide at Olm?", {"qrels": {"data/pages/page_4.png": 1}}),
        ("6", "What did Varn export?", {"qrels": {"data/pages/page_5.png": 1}}),
    ]  # row 2 asks nothing: a page only


@pytest.mark.parametrize("version", ["v2", "v3"])
def test_v2_and_v3_score_the_judged_queries_with_graded_gold(version):
    items = list(ViDoReTask(VIDORE / version).examples())
    examples = [item for item in items if not isinstance(item, RecordError)]
    assert [(e.id, e.gold["qrels"]) for e in examples] == [
        ("0", {"0": 2, "3": 1}),
        ("1", {"1": 1}),
        ("2", {"2": 2, "1": 0}),
        ("3", {"4": 1, "0": 1}),
    ]  # query 4 is judged nowhere: unscored, as pytrec_eval leaves it
    [unasked] = [str(item) for item in items if isinstance(item, RecordError)]
    assert unasked.endswith("qrels query '9' is not in queries")


def test_v3_keeps_one_language_where_asked():
    examples = [e for e in ViDoReTask(VIDORE / "v3", language="french").examples() if not isinstance(e, RecordError)]
    assert [e.id for e in examples] == ["2"]
    with pytest.raises(ConfigError, match="has no 'language' column"):
        list(ViDoReTask(VIDORE / "v2", language="french").examples())


def test_systems_show_every_cutoff_and_page_ids_are_never_dropped_for_a_query_id():
    task = ViDoReTask(VIDORE / "v2")
    assert task.system_defaults() == {"top_n": 100}
    assert task.scoring.metric_options == {
        "vidore_retrieval": {"k": "1,3,5,10,20,50,100", "ignore_identical_ids": False}
    }


@pytest.mark.parametrize(("version", "language"), [("v1", None), ("v2", None), ("v3", None), ("v3", "french")])
def test_the_progress_total_is_the_items_the_task_yields(version, language):
    """The progress bar showed no total and no ETA: the task told no size. Its size is its queries and bad records,
    counted from the tables of text."""
    task = ViDoReTask(VIDORE / version, language=language)
    assert task.size_hint() == len(list(task.examples())) > 0
    assert ViDoReTask(VIDORE / "nowhere").size_hint() is None  # no data: the pre-flight says why


def test_no_data_is_one_line():
    with pytest.raises(ConfigError, match="--data vidore=FOLDER reads a ViDoRe dataset kept offline"):
        ViDoReTask().prepare()


PLUGIN = '''
import json

import torch
from ragbench._hookspecs import hookimpl
from ragbench._retrieval.pages.late_interaction import LateInteractionRetriever


class Matrix:
    """Upstream's score matrix as embeddings: query i is the unit vector e_i, a row's page the vector of its scores,
    so MaxSim gives row j score[i][j] exactly. A row is told by its picture (its first row's, where rows share one)."""

    def __init__(self, queries, rows, pictures):
        self.queries, self.rows, self.pictures = queries, rows, pictures

    def identity(self):
        return {"path": "recorded"}

    def encode_pages(self, images):
        return [torch.tensor([[row[self.pictures[image.tobytes()]] for row in self.rows]]) for image in images]

    def encode_queries(self, texts):
        return [torch.eye(len(self.queries))[self.queries.index(text)][None] for text in texts]


class Recorded(LateInteractionRetriever):
    name = "recorded"

    def __init__(self, pages, index, scores, **options):
        from ragbench._retrieval.pages.page_set import PageSet
        from ragbench.api.retrieval import open_pages

        corpus = PageSet(open_pages(pages, "test", "--corpus"))
        recorded = json.loads(open(scores).read())
        pictures = {corpus.decoded(row).tobytes(): row for row in reversed(range(len(corpus)))}
        encoder = Matrix(recorded["queries"], recorded["rows"], pictures)
        super().__init__(pages=pages, index=index, encoder=encoder, **options)


@hookimpl
def ragbench_catalog():
    return {"retrievers": {"recorded": {"target": "recorded_plugin:Recorded", "description": "recorded scores"}}}
'''


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    (site / "recorded_plugin.py").write_text(PLUGIN, encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    import recorded_plugin

    return recorded_plugin


def figures(tmp_path, plugin, data, queries, rows, **retriever_args) -> dict:
    """The vidore task's figures on `data`, its retriever scoring each row as the matrix `rows` says."""
    scores = tmp_path / "scores.json"
    scores.write_text(json.dumps({"queries": queries, "rows": rows}))
    script = tmp_path / "rules.json"
    script.write_text(json.dumps([{"response": "-"}]))
    result = run_eval(
        "vidore",
        "vanilla",
        f"scripted:{script}",
        data={"vidore": str(data)},
        plugins=[plugin],
        retriever="recorded",
        retriever_args={"pages": str(data), "index": str(tmp_path / "index"), "scores": str(scores), **retriever_args},
        task_args={"vidore.images": 0},
    )
    return {name: entry["value"] for name, entry in result.results["details"]["vidore"].items()}


def assert_upstreams(ours: dict, upstream: dict) -> int:
    """Every figure upstream outputs equals ours: pytrec_eval's means as upstream rounds them (5 decimals), mteb's
    MRR and nAUC unrounded (a NaN nAUC is none here); the count compared."""
    for name, value in upstream.items():
        mine = ours[name.replace("precision_at_", "p_at_")]
        if name.startswith(("mrr", "naucs")):
            assert (mine is None) if math.isnan(value) else mine == pytest.approx(value, abs=1e-12), (name, mine, value)
        else:
            assert round(mine, 5) == pytest.approx(value, abs=1e-12), (name, mine, value)
    return len(upstream)


@needs("torch", "safetensors", "pytrec_eval")
@pytest.mark.parametrize("version", ["v1", "v2"])
@pytest.mark.parametrize("key", ["scores", "pooled_scores"])
def test_a_run_gives_vidore_benchmarks_figures_on_the_same_scores(tmp_path, plugin, version, key):
    upstream = RECORD[version][f"metrics_{key}"]
    ours = figures(tmp_path, plugin, VIDORE / version, RECORD[version]["queries"], RECORD[version][key])
    assert assert_upstreams(ours, upstream) == 7 * 8  # nDCG, MAP, Recall, P, MRR, 3 nAUCs at 1, 3, ... 100


@needs("torch", "safetensors", "pytrec_eval")
@pytest.mark.parametrize("data", ["ties", "v1_twins", "v1_twins_swapped"])
def test_every_figure_equals_vidore_benchmarks_where_ties_cross_the_cut_scores_fall_below_0_and_rows_share_a_file(
    tmp_path, plugin, data
):
    """Pages tied across the 100th place (mteb's MRR@100 ranks the relevant page 11th where pytrec_eval's ranking
    leaves it past 100), scores below 0 (upstream's results floor them at 0), a V1 filename on two rows with two
    pictures (its best row's score, whichever row comes first)."""
    recorded = FIGURES[data]
    ours = figures(tmp_path, plugin, VIDORE / data, recorded["queries"], recorded["rows"])
    assert assert_upstreams(ours, recorded["metrics"]) == 7 * 8


@needs("torch", "safetensors", "pytrec_eval")
def test_raw_page_scores_rank_pages_below_0_by_their_own_score(tmp_path, plugin):
    """`page_scores=raw`: a page's best row's score as the model gave it. Upstream's floor at 0 ties every page
    below 0 at 0, ranked by id descending: the ties dataset's query 1 has its relevant page 3 (-1.0) there among 148
    pages, within the first 100 (by id, "3" comes early); raw, 90 pages of -0.25 to -0.75 come before it."""
    recorded = FIGURES["ties"]
    raw = figures(tmp_path, plugin, VIDORE / "ties", recorded["queries"], recorded["rows"], page_scores="raw")
    differ = sorted(
        name for name, value in recorded["metrics"].items() if name.startswith("ndcg") and round(raw[name], 5) != value
    )
    assert differ == ["ndcg_at_100"]
