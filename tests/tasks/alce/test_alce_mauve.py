"""MAUVE: upstream's text construction and settings, and the score of a run equal to mauve-text
called as eval.py calls it (with a tiny local featurizer in place of gpt2-large)."""

from __future__ import annotations

import pytest

from conftest import needs
from ragbench.api.run import finished_run
from ragbench.metrics.mauve import Mauve, mauve_texts
from support.alce_helpers import ALCE_DATA, DATA_FILES, scored_run, write_predictions
from support.helpers import run
from support.tiny_models import tiny_gpt2

pytestmark = needs("mauve")


@pytest.fixture(scope="module")
def gpt2_folder(tmp_path_factory):
    return tiny_gpt2(tmp_path_factory.mktemp("models") / "tiny-gpt2")  # mauve-text wants "gpt2" in the name


def score_eli5(tmp_path, featurizer=None):
    predictions = write_predictions(tmp_path / "p.jsonl", "eli5")
    return run(
        tmp_path,
        tasks=["alce_eli5"],
        system="recorded",
        system_args={"path": str(predictions)},
        data={"alce_eli5": str(ALCE_DATA / DATA_FILES["eli5"])},
        task_args={"run_py_cleanup": False, "citations": False, "claims_nli": False, "mauve": featurizer is not None},
        metric_args={"mauve.featurizer": str(featurizer)} if featurizer is not None else {},
    )


def test_texts_equal_eval_py_compute_mauve_inputs(tmp_path):
    score_eli5(tmp_path)
    call = scored_run("eli5")["aggregate"]["mauve_call"]
    human, model = mauve_texts(list(finished_run(tmp_path / "run", "test").records("alce_eli5")))
    assert (human, model) == (call["p_text"], call["q_text"])


def test_default_settings_are_eval_py_settings():
    call = scored_run("asqa")["aggregate"]["mauve_call"]
    config = Mauve().config()
    assert (config["featurizer"], config["max_text_length"], config["batch_size"]) == (
        call["featurize_model_name"],
        call["max_text_length"],
        call["batch_size"],
    )
    assert config["unstable"] is True


def test_run_value_equals_mauve_text_called_as_eval_py_does(tmp_path, gpt2_folder):
    import mauve

    results = score_eli5(tmp_path, gpt2_folder)
    entry = results["details"]["alce_eli5"]["mauve"]
    assert entry["corpus"] and entry["ci95"] is None and "error" not in entry
    call = scored_run("eli5")["aggregate"]["mauve_call"]
    expected = (
        mauve.compute_mauve(
            p_text=call["p_text"],
            q_text=call["q_text"],
            device_id=0,
            max_text_length=512,
            verbose=False,
            batch_size=8,
            featurize_model_name=str(gpt2_folder),
        ).mauve
        * 100
    )
    assert entry["value"] == pytest.approx(expected, abs=1e-9)


def test_unloadable_featurizer_is_recorded_on_the_metric_not_raised(tmp_path):
    results = score_eli5(tmp_path, tmp_path / "missing-gpt2")
    entry = results["details"]["alce_eli5"]["mauve"]
    assert entry["value"] is None and "cannot be loaded" in entry["error"]
    assert results["results"]["alce_eli5"]["length"] is not None
