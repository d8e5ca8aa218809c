"""The vidore task: ViDoRe V1's QA table and V2's and V3's BEIR configs read as vidore-benchmark's evaluators read
them, and a run whose figures equal the evaluator's on the same scores (tests/data/parity/vidore_run.json)."""

from __future__ import annotations

import json

import pytest

from conftest import TEST_DATA, needs
from ragbench.api import ConfigError, RecordError
from ragbench.tasks.beir.vidore import ViDoReTask
from ragbench.testing import run_eval

VIDORE = TEST_DATA / "vidore"
RECORD = json.loads((TEST_DATA / "parity" / "vidore_run.json").read_text(encoding="utf-8"))
V1_ROWS = [0, 1, 2, 1, 3, 4, 5]  # the page on each row of v1's table (record_vidore_data.py)


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
from io import BytesIO

import torch
from ragbench._hookspecs import hookimpl
from ragbench._retrieval.pages.late_interaction import LateInteractionRetriever


class Matrix:
    """Upstream's score matrix as embeddings: query i is the unit vector e_i, page j the vector of its scores, so
    MaxSim gives page j score[i][j] exactly."""

    def __init__(self, queries, pages, images):
        self.queries, self.pages, self.images = queries, pages, images

    def identity(self):
        return {"path": "recorded"}

    def encode_pages(self, images):
        return [torch.tensor([self.pages[self.images[image.tobytes()]]]) for image in images]

    def encode_queries(self, texts):
        return [torch.eye(len(self.queries))[self.queries.index(text)][None] for text in texts]


class Recorded(LateInteractionRetriever):
    name = "recorded"

    def __init__(self, pages, index, scores):
        from ragbench._retrieval.pages.corpus import page_corpus
        from ragbench._retrieval.pages.vidore_data import open_vidore

        corpus = page_corpus(open_vidore(pages))
        recorded = json.loads(open(scores).read())
        images = {corpus.decoded(i).tobytes(): corpus.ids[i] for i in range(len(corpus))}
        super().__init__(pages=pages, index=index, encoder=Matrix(recorded["queries"], recorded["pages"], images))


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


def page_scores(version: str, key: str) -> dict[str, list[float]]:
    """Each page's upstream scores, one per query; a V1 page on several rows takes its best (upstream's max)."""
    matrix = RECORD[version][key]
    columns = V1_ROWS if version == "v1" else list(range(len(matrix[0])))
    names = [f"data/pages/page_{n}.png" if version == "v1" else str(n) for n in columns]
    pages: dict[str, list[float]] = {}
    for column, name in enumerate(names):
        scores = [row[column] for row in matrix]
        pages[name] = [max(a, b) for a, b in zip(pages[name], scores)] if name in pages else scores
    return pages


@needs("torch", "safetensors", "pytrec_eval")
@pytest.mark.parametrize("version", ["v1", "v2"])
@pytest.mark.parametrize("key", ["scores", "pooled_scores"])
def test_a_run_gives_vidore_benchmarks_figures_on_the_same_scores(tmp_path, plugin, version, key):
    scores = tmp_path / "scores.json"
    scores.write_text(json.dumps({"queries": RECORD[version]["queries"], "pages": page_scores(version, key)}))
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"response": "-"}]))
    result = run_eval(
        "vidore",
        "vanilla",
        f"scripted:{rules}",
        data={"vidore": str(VIDORE / version)},
        plugins=[plugin],
        retriever="recorded",
        retriever_args={"pages": str(VIDORE / version), "index": str(tmp_path / "index"), "scores": str(scores)},
    )
    figures = result.results["details"]["vidore"]
    upstream = RECORD[version][f"metrics_{key}"]
    compared = 0
    for name, value in upstream.items():
        ours = name.replace("precision_at_", "p_at_")
        if ours in figures:
            ours_value = figures[ours]["value"]  # upstream rounds pytrec_eval's means to 5 decimals, not mteb's MRR
            assert (ours_value if name.startswith("mrr") else round(ours_value, 5)) == pytest.approx(
                value, abs=1e-12
            ), name
            compared += 1
    assert compared == 5 * 7  # nDCG, MAP, Recall, P, MRR at 1, 3, 5, 10, 20, 50, 100 (not mteb's nAUC)
