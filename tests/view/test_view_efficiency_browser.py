"""The viewer in headless Chromium: a run's page shows the tokens and dollars per correct answer beside each key
and its calls per example and latency (results.json `efficiency`)."""

from __future__ import annotations

from test_efficiency import scripted_run

from support.chromium import require_chromium, run_page

require_chromium()


def test_the_run_page_shows_the_cost_beside_every_number(tmp_path, ragbench_zygote):
    _, results, _ = scripted_run(tmp_path, "run", [{"pattern": "France", "response": "Paris"}, {"response": "no"}])
    tokens = results["efficiency"]["demo"]["per_correct"]["em"]["tokens_per_correct"]
    with run_page(ragbench_zygote, tmp_path / "run") as driver:
        body = driver.find_element("css selector", "body").text
        assert "tokens / correct" in body and "$ / correct" in body and f"{tokens:,.1f}" in body
        line = driver.find_element("css selector", "p.efficiency").text
        assert line.startswith("per example (all 6, failed ones too) LLM calls 1.00, searches 0.00")
