"""An installed package that fails to import is said as what it is, not as a missing extra: `pip install
'ragbench[vision]'` on a machine whose torch is a CPU build took PyPI's torchvision, built for PyPI's CUDA torch,
whose import raises "operator torchvision::nms does not exist"; transformers reported it as a class it could not
import, and ragbench said "install ragbench[vision]" again. Here a torchvision that raises that error as it is
imported stands on the path (the environment's fault itself; the real wheels cannot be installed in the tests)."""

from __future__ import annotations

import sys

import pytest

from conftest import TEST_DATA, needs
from ragbench.api import ConfigError
from ragbench.api.data import import_extra
from support.helpers import cli_here

BROKEN = "raise RuntimeError('operator torchvision::nms does not exist')\n"
PAGES, MODEL = str(TEST_DATA / "vidore" / "v2"), str(TEST_DATA / "vidore" / "tiny-siglip")


@pytest.fixture
def broken_torchvision(tmp_path, monkeypatch):
    site = tmp_path / "site"
    (site / "torchvision").mkdir(parents=True)
    (site / "torchvision" / "__init__.py").write_text(BROKEN, encoding="utf-8")
    (site / "needs_torchvision.py").write_text("import torchvision\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    for name in ("torchvision", "needs_torchvision"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return site


def test_an_installed_module_that_fails_to_import_names_the_error_at_its_root(broken_torchvision):
    with pytest.raises(ConfigError) as refused:
        import_extra("needs_torchvision", "install it: pip install 'ragbench[vision]'")
    said = str(refused.value)
    assert said.startswith(
        "needs_torchvision is installed but cannot be imported: RuntimeError: operator torchvision::nms does not exist "
        f"(in {broken_torchvision / 'torchvision' / '__init__.py'}:1)"
    )
    assert "pip install" not in said and "\n" not in said


def test_a_missing_module_still_says_how_to_install_it():
    with pytest.raises(ConfigError) as refused:
        import_extra("no_such_package.models", "retriever x needs it: pip install 'ragbench[vision]'")
    assert str(refused.value) == "retriever x needs it: pip install 'ragbench[vision]'"


@needs("torch", "safetensors", "datasets", "transformers")
def test_a_page_retriever_beside_a_torchvision_that_does_not_load_is_one_line_naming_it_and_the_fix(
    tmp_path, broken_torchvision
):
    done = cli_here("index", "build", "--retriever", "siglip", "--corpus", PAGES, "--model", MODEL,
                    "--out", str(tmp_path / "index"), "--no-progress")  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    [line] = done.stderr.strip().splitlines()
    assert (
        line.startswith("ragbench: error: retriever siglip: torchvision (no version) does not load beside torch ")
        and "(RuntimeError: operator torchvision::nms does not exist (in " in line
    )
    assert line.endswith(
        "its wheel is built for another torch build; install the torchvision built for this torch (for a CPU torch: "
        "pip install torchvision --index-url https://download.pytorch.org/whl/cpu), or the CUDA pair PyPI has, which "
        "runs on the CPU too: pip install 'torch===2.13.0' torchvision==0.28.0"
    )
    assert not (tmp_path / "index").exists()
