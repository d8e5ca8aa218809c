"""ppi_python_mean.json: fixed inputs and what ppi-python and ARES (ares-ai) give for them (NOTES.md).

Run in a separate environment, never by the tests:
    python -m venv /tmp/ppi-venv && /tmp/ppi-venv/bin/pip install ppi-python matplotlib && \
        /tmp/ppi-venv/bin/pip install --no-deps ares-ai
    /tmp/ppi-venv/bin/python tests/data/ppi/make_fixture.py tests/data/ppi/ppi_python_mean.json
"""

import importlib.util
import json
import sys
from importlib.metadata import version

import numpy as np
import ppi_py

ARES_PPI = "ares/RAG_Automatic_Evaluation/ppi.py"  # imported alone: the ares package imports torch and more


def ares_ppi_module():
    root = importlib.util.find_spec("ares").submodule_search_locations[0]
    spec = importlib.util.spec_from_file_location("ares_ppi", f"{root}/{ARES_PPI.removeprefix('ares/')}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ares = ares_ppi_module()
rng = np.random.default_rng(61)
cases = []


def add(name, Y, Yhat, Yhat_u):
    Y, Yhat, Yhat_u = (np.asarray(a, float) for a in (Y, Yhat, Yhat_u))
    out = {"name": name, "labels": Y.tolist(), "judged": Yhat.tolist(), "unlabelled": Yhat_u.tolist()}
    for alpha in (0.05, 0.1):
        lo, hi = ppi_py.ppi_mean_ci(Y, Yhat, Yhat_u, alpha=alpha)
        lo1, hi1 = ppi_py.ppi_mean_ci(Y, Yhat, Yhat_u, alpha=alpha, lam=1)
        clo, chi = ppi_py.classical_mean_ci(Y, alpha=alpha)
        alo, ahi = ares.pp_mean_iid_asymptotic(Y, Yhat, Yhat_u, alpha)
        out[f"alpha_{alpha}"] = {
            "ppi_ci": [float(np.squeeze(lo)), float(np.squeeze(hi))],
            "ppi_ci_lhat1": [float(np.squeeze(lo1)), float(np.squeeze(hi1))],
            "classical_ci": [float(np.squeeze(clo)), float(np.squeeze(chi))],
            "ares_pp_mean_iid_asymptotic": [float(alo), float(ahi)],
        }
    out["ppi_pointestimate"] = float(np.squeeze(ppi_py.ppi_mean_pointestimate(Y, Yhat, Yhat_u)))
    out["ppi_pointestimate_lhat1"] = float(np.squeeze(ppi_py.ppi_mean_pointestimate(Y, Yhat, Yhat_u, lam=1)))
    cases.append(out)


# binary judge that agrees 85% of the time
truth = rng.binomial(1, 0.6, 300).astype(float)
judge = np.where(rng.random(300) < 0.85, truth, 1 - truth)
add("binary_judge_85pct", truth[:40], judge[:40], judge[40:])
# CRAG three-way scale, judge mostly right
t3 = rng.choice([-1.0, 0.0, 1.0], size=200, p=[0.3, 0.2, 0.5])
j3 = np.where(rng.random(200) < 0.8, t3, rng.choice([-1.0, 0.0, 1.0], size=200))
add("three_way_judge", t3[:30], j3[:30], j3[30:])
# continuous judge score in [0,1]
y = rng.random(120)
add(
    "continuous_judge",
    y[:25],
    np.clip(y[:25] + rng.normal(0, 0.2, 25), 0, 1),
    np.clip(y[25:] + rng.normal(0, 0.2, 95), 0, 1),
)
# judge of no use: independent of the labels (lambda tuned to about 0)
add("noise_judge", rng.binomial(1, 0.5, 30), rng.binomial(1, 0.5, 30), rng.binomial(1, 0.5, 200))
# anti-correlated judge: lambda clipped at 0
yy = rng.binomial(1, 0.5, 20).astype(float)
add("anticorrelated_judge", yy, 1 - yy, rng.binomial(1, 0.5, 50))
# small n, N
add("tiny", [1, 0, 1], [1, 1, 1], [0, 1])
GENERATOR = (
    f"ppi-python {version('ppi-python')}, numpy {version('numpy')}, statsmodels {version('statsmodels')}, "
    f"ares-ai {version('ares-ai')} ({ARES_PPI} pp_mean_iid_asymptotic, scipy {version('scipy')})"
)
with open(sys.argv[1], "w") as out:
    json.dump({"generator": GENERATOR, "cases": cases}, out, indent=1)
