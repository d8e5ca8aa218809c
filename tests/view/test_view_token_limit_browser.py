"""The viewer's run page in headless Chromium says how many outputs were cut at their token limit."""

from __future__ import annotations

from test_token_limit import cut_task

from support.chromium import require_chromium, run_page
from support.helpers import run

require_chromium()


def test_run_page_says_how_many_outputs_were_cut(tmp_path, ragbench_zygote):
    run(
        tmp_path,
        tasks=[str(cut_task(tmp_path, {2}))],
        system="closed_book",
        model=f"scripted:{tmp_path / 'answers.json'}",
    )
    with run_page(ragbench_zygote, tmp_path / "run") as driver:
        assert driver.find_element("id", "token-limit-qa").text == (
            "1 LLM call(s) in 1 scored examples stopped at their max_tokens, their outputs cut there: answer 1"
        )
