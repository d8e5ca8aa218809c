"""pip resolves the `s3` and `test` extras without backtracking: s3fs, aiobotocore, botocore and the boto3 moto
pulls are bounded together (pyproject.toml), to releases that admit each other. Unbounded, moto's newest boto3
wanted a botocore no aiobotocore admitted, and pip downloaded 60 aiobotocore and 25 s3fs releases in turn."""

from __future__ import annotations

import importlib.metadata
import importlib.util

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from conftest import ROOT

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

EXTRAS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]


def bounds(extra: str) -> dict[str, Requirement]:
    return {(req := Requirement(line)).name: req for line in EXTRAS[extra] if not line.startswith("ragbench")}


def test_each_of_the_four_is_bounded_above_and_below():
    s3, test = bounds("s3"), bounds("test")
    for req in (s3["aiobotocore"], s3["botocore"], test["boto3"], test["botocore"]):
        operators = {spec.operator for spec in req.specifier}
        assert {">=", "<"} <= operators, req
    assert ">=" in {spec.operator for spec in s3["s3fs"].specifier}
    # boto3 X needs botocore X's minor: the two ranges are one, and `test` repeats `s3`'s botocore
    assert str(test["boto3"].specifier) == str(test["botocore"].specifier) == str(s3["botocore"].specifier)


@pytest.mark.skipif(
    not all(importlib.util.find_spec(name) for name in ("aiobotocore", "s3fs")), reason="needs ragbench[s3]"
)
def test_the_installed_releases_are_the_bounds_and_admit_each_other():
    """What pip chose lies in the bounds, and the aiobotocore chosen admits every botocore the bounds admit."""
    s3 = bounds("s3")
    for name in ("s3fs", "aiobotocore", "botocore"):
        assert Version(importlib.metadata.version(name)) in s3[name].specifier, name
    wanted = next(
        Requirement(line) for line in importlib.metadata.requires("aiobotocore") or [] if line.startswith("botocore")
    )
    lowest = min(spec.version for spec in s3["botocore"].specifier if spec.operator == ">=")
    assert Version(lowest) in wanted.specifier
