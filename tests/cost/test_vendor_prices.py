"""The built-in prices are each vendor's list prices, read from the price lists shipped with ragbench
(ragbench/_cost/price_lists/<vendor>.yaml, each price with the page it was read from and when): an `anthropic:`
model sent to Anthropic's own host is priced in a run's results as an `openai:` model sent to OpenAI is, a
--price-table entry still replaces a built-in price, a model sent elsewhere (its base_url given, or a vendor's
base-URL variable naming another server) takes none, decided from where the run recorded it was sent, and a price
list not of its shape is refused naming the file."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import needs
from ragbench._cost.prices import model_price
from ragbench._cost.vendor_prices import PRICE_LISTS, read_price_lists, vendor_prices
from support.helpers import cli_here, preflight_problems, run
from support.http_threads import serving

PROMPT, COMPLETION = 1000, 10  # each answer's usage, as the fake Messages API reports it


class _Messages(BaseHTTPRequestHandler):
    """Anthropic's Messages API as far as a closed-book answer needs it: every answer "Paris", of one usage."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        answer = {"id": "msg_1", "type": "message", "role": "assistant", "model": body["model"],
                  "content": [{"type": "text", "text": "Paris"}], "stop_reason": "end_turn", "stop_sequence": None,
                  "usage": {"input_tokens": PROMPT, "output_tokens": COMPLETION}}  # fmt: skip
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def messages_api() -> Iterator[str]:
    with serving(_Messages, poll_seconds=0.01) as url:
        yield url


ANTHROPIC = "api.anthropic.com"


def anthropic_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str, host: str = ANTHROPIC, **config: Any
) -> dict[str, Any]:
    """results.json's model_cost of a closed-book run of `model` on the demo task, answered by the fake API: the
    engine finds it through $ANTHROPIC_BASE_URL, the model has no base_url. The fake API is reached at `host`:
    Anthropic's own host is resolved to it (as a corporate proxy or resolver hands Anthropic's host to a gateway
    forwarding to Anthropic), another host (127.0.0.1: a vLLM server or a gateway of other prices) is itself."""
    with messages_api() as url:
        port = url.rpartition(":")[2]
        if host == ANTHROPIC:
            resolve, names = socket.getaddrinfo, (ANTHROPIC, ANTHROPIC.encode())  # anyio asks with the name's bytes

            def resolved(name: Any, *args: Any, **kwargs: Any) -> Any:
                return resolve("127.0.0.1" if name in names else name, *args, **kwargs)

            monkeypatch.setattr(socket, "getaddrinfo", resolved)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://{host}:{port}")
        results = run(tmp_path, tasks=["demo"], system="closed_book", model=model, **config)
        monkeypatch.undo()  # the shell of the commands after: neither the variable nor the resolver
    return dict(results["model_cost"]["demo"])


@needs("anthropic")
def test_an_anthropic_model_sent_to_anthropics_host_is_priced_at_its_list_price_and_a_price_table_entry_replaces_it(
    tmp_path, monkeypatch
):
    cost = anthropic_run(tmp_path, monkeypatch, "anthropic:claude-opus-5")
    config = json.loads((tmp_path / "run" / "run.json").read_text())["config"]
    assert re.fullmatch(r"http://api\.anthropic\.com:\d+", config["model_urls"]["model"][0])
    calls = cost["calls"]
    assert calls > 0 and (cost["prompt_tokens"], cost["completion_tokens"]) == (PROMPT * calls, COMPLETION * calls)
    # Claude Opus 5's page: input $5, output $25, 5m cache write $6.25, 1h cache write $10, cache read $0.50
    assert cost["usd"] == round((PROMPT * 5.0 + COMPLETION * 25.0) * calls / 1e6, 6)
    assert cost["price_per_million"] == {
        "prompt": 5.0, "completion": 25.0, "cached_prompt": 0.5, "cache_write": 6.25, "cache_write_1h": 10.0
    }  # fmt: skip
    assert "usd_note" not in cost and "price_note" not in cost  # the list's own cache prices, no multipliers
    table = tmp_path / "prices.yaml"
    table.write_text("'anthropic:claude-opus-5': {prompt: 1.0, completion: 2.0}\n")
    cost = anthropic_run(tmp_path / "table", monkeypatch, "anthropic:claude-opus-5", price_table=str(table))
    assert cost["usd"] == round((PROMPT * 1.0 + COMPLETION * 2.0) * calls / 1e6, 6)


def rescored_cost(run_dir: Path, output: Path, *args: str) -> dict[str, Any]:
    done = cli_here("rescore", str(run_dir), "--output", str(output), "--no-progress", *args)
    assert done.returncode == 0, done.stderr
    return dict(json.loads((output / "results.json").read_text())["model_cost"]["demo"])


@needs("anthropic")
def test_a_model_the_base_url_variable_sent_to_another_server_is_not_priced_at_the_list_then_or_in_a_rescore(
    tmp_path, monkeypatch
):
    """$ANTHROPIC_BASE_URL naming a server that is not Anthropic (a vLLM serving under --served-model-name
    claude-opus-5, a gateway of its own prices) was priced at Anthropic's list, while the same server given with
    --model-arg base_url= was not. Where the model was sent is recorded in run.json (`model_urls`), and a rescore
    from a shell without the variable prices it from that record, not from its own environment."""
    cost = anthropic_run(tmp_path, monkeypatch, "anthropic:claude-opus-5", host="127.0.0.1")
    run_dir = tmp_path / "run"
    (url,) = json.loads((run_dir / "run.json").read_text())["config"]["model_urls"]["model"]
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", url)
    note = (
        f"anthropic:claude-opus-5 was sent to {url}, not to api.anthropic.com: not priced at the vendor's list price "
        "(give its price with --price-table FILE)"
    )
    assert (cost["usd"], cost["usd_note"]) == (None, note) and cost["calls"] > 0
    assert rescored_cost(run_dir, tmp_path / "rescored")["usd_note"] == note  # no $ANTHROPIC_BASE_URL here
    table = tmp_path / "prices.yaml"
    table.write_text("'anthropic:claude-opus-5': {prompt: 1.0, completion: 2.0}\n")
    priced = rescored_cost(run_dir, tmp_path / "table", "--price-table", str(table))  # a price table always wins
    assert priced["usd"] == round((PROMPT * 1.0 + COMPLETION * 2.0) * cost["calls"] / 1e6, 6)
    # a run.json of before the record: priced as then (the list price, the model having no base_url of its own)
    for name in ("run.json", "results.json"):
        recorded = json.loads((run_dir / name).read_text())
        del recorded["config"]["model_urls"]
        (run_dir / name).write_text(json.dumps(recorded))
    assert rescored_cost(run_dir, tmp_path / "old")["usd"] == round(
        (PROMPT * 5.0 + COMPLETION * 25.0) * cost["calls"] / 1e6, 6
    )


def test_a_max_cost_is_refused_for_a_model_the_base_url_variable_sends_elsewhere(tmp_path, monkeypatch):
    """The cap counts a model's dollars at its price: one sent to another server than the vendor's has none."""
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    problems = preflight_problems(tmp_path, tasks=["demo"], system="closed_book", model="openai:gpt-4o", max_cost=1.0)
    assert (
        "--max-cost 1: openai:gpt-4o was sent to http://127.0.0.1:9/v1, not to api.openai.com: not priced at the "
        "vendor's list price (give its price with --price-table FILE) (the cap counts every model's dollars)"
    ) in problems


def test_a_model_sent_elsewhere_than_its_vendors_host_takes_no_built_in_price():
    """Another server than the vendor's (a vLLM, a proxy of other prices) is not priced at the vendor's list: the
    URLs the run recorded decide; a run.json of before them, the model's base_url option."""
    assert model_price("anthropic:claude-opus-5", {}, {}) is not None
    assert model_price("anthropic:claude-opus-5", {"base_url": "http://127.0.0.1:9/"}, {}) is None
    assert model_price("anthropic:claude-opus-5", {}, {}, ["http://127.0.0.1:9"]) is None
    assert model_price("openai:gpt-4o", {}, {}, ["https://api.openai.com/v1"]) == OPENAI_2025["gpt-4o"]
    given = {"base_url": "https://api.openai.com/v1"}  # given, to the vendor's own host: its list price
    assert model_price("openai:gpt-4o", given, {}, ["https://api.openai.com/v1"]) is not None
    assert model_price("openai:gpt-4o", {}, {}, ["https://api.openai.com/v1", "http://10.0.0.2/v1"]) is None
    assert model_price("openai:gpt-4o", {}, {}, ["https://api.openai.com.example.net/v1"]) is None
    assert model_price("gemini:claude-opus-5", {}, {}) is None  # a list prices its own engine's models only


def test_batch_calls_take_the_lists_batch_prices():
    assert model_price("anthropic:claude-3-haiku-20240307", {"batch": True}, {}) == {
        "prompt": 0.125, "completion": 0.625, "cached_prompt": 0.015, "cache_write": 0.15, "cache_write_1h": 0.25
    }  # fmt: skip


OPENAI_2025 = {  # the built-in prices ragbench held in code before the price lists: kept as they were
    "gpt-4o": {"prompt": 2.50, "completion": 10.00, "cached_prompt": 1.25},
    "gpt-4o-mini": {"prompt": 0.15, "completion": 0.60, "cached_prompt": 0.075},
    "gpt-4.1": {"prompt": 2.00, "completion": 8.00, "cached_prompt": 0.50},
    "gpt-4.1-mini": {"prompt": 0.40, "completion": 1.60, "cached_prompt": 0.10},
    "gpt-4.1-nano": {"prompt": 0.10, "completion": 0.40, "cached_prompt": 0.025},
    "gpt-4-turbo": {"prompt": 10.00, "completion": 30.00},
    "gpt-3.5-turbo": {"prompt": 0.50, "completion": 1.50},
}


@pytest.mark.parametrize("model", OPENAI_2025)
def test_openais_built_in_prices_are_those_of_before(model):
    assert model_price(f"openai:{model}", {}, {}) == OPENAI_2025[model]


def test_every_shipped_price_is_a_price_entry_with_the_page_it_was_read_from():
    names = sorted(path.name for path in PRICE_LISTS.iterdir() if path.name.endswith(".yaml"))
    assert {"openai.yaml", "anthropic.yaml"} <= set(names)
    for name in names:
        listed = yaml.safe_load((PRICE_LISTS / name).read_text(encoding="utf-8"))
        assert name == f"{listed['engine']}.yaml"
        for page in listed["lists"]:
            assert page["source"].startswith("https://") and page["read"].strip()
            for model, entry in page["models"].items():
                assert {"prompt", "completion"} <= set(entry), model
                assert vendor_prices()[listed["engine"]][model] == entry


GOOD = {"engine": "anthropic", "vendor": "Anthropic", "lists": [
    {"source": "https://example.com/pricing", "read": "2026-11-28", "models": {"m": {"prompt": 1, "completion": 2}}}
]}  # fmt: skip


def damaged(change: Any) -> dict[str, Any]:
    listed = json.loads(json.dumps(GOOD))
    change(listed)
    return listed


@pytest.mark.parametrize(
    "listed",
    [
        damaged(lambda d: d.pop("vendor")),
        damaged(lambda d: d["lists"][0].pop("source")),
        damaged(lambda d: d["lists"][0].update(source="example.com/pricing")),
        damaged(lambda d: d["lists"][0].update(read=" ")),
        damaged(lambda d: d["lists"][0]["models"]["m"].pop("completion")),
        damaged(lambda d: d["lists"][0]["models"]["m"].update(prompt=float("nan"))),
        damaged(lambda d: d["lists"][0]["models"]["m"].update(batch_prompt=0.5)),
        damaged(lambda d: d["lists"][0].update(models={})),
        damaged(lambda d: d["lists"].append(d["lists"][0])),
        [],
    ],
)
def test_a_price_list_not_of_its_shape_is_refused_naming_the_file(tmp_path, listed):
    (tmp_path / "anthropic.yaml").write_text(yaml.safe_dump(listed))
    with pytest.raises(RuntimeError, match=r"^price list anthropic\.yaml \(a file of the installed ragbench\): "):
        read_price_lists(tmp_path)
    (tmp_path / "anthropic.yaml").write_text(yaml.safe_dump(GOOD))
    assert read_price_lists(tmp_path) == {"anthropic": {"m": {"prompt": 1.0, "completion": 2.0}}}


LISTED = """engine: anthropic
vendor: Anthropic
lists:
  - source: https://example.com/pricing
    read: 2026-11-28
    models:
      m: {prompt: 1, completion: 2}
"""


@pytest.mark.parametrize(
    "text, problem",
    [
        (
            LISTED.replace("      m:", "      m: {prompt: 0.01, completion: 0.01}\n      m:"),
            "line 8: key 'm' is given twice",
        ),
        (LISTED[:-12], r"line 8: not valid YAML \("),  # cut short
        ("engine: anthropic\nvendor: [\n", r"line 3: not valid YAML \("),
        (b"engine: anthropic\nvendor: Anthrop\xefc\n", r"not UTF-8 \(byte at offset 33\)"),
    ],
)
def test_a_price_list_that_does_not_read_is_refused_in_one_line_naming_the_file_and_the_fix(tmp_path, text, problem):
    listed = tmp_path / "anthropic.yaml"
    listed.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(RuntimeError) as refused:
        read_price_lists(tmp_path)
    message = str(refused.value)
    assert re.fullmatch(
        rf"price list anthropic\.yaml \(a file of the installed ragbench\): {problem}.*; reinstall ragbench "
        r"\(pip install --force-reinstall ragbench\)",
        message,
    ), message
    assert len(message.splitlines()) == 1


def test_a_run_with_a_damaged_price_list_gets_its_results_its_cost_unpriced_naming_the_list(tmp_path, monkeypatch):
    """A price list that does not read ended every run (a scripted model's too) in a traceback after its examples
    ran, with no results.json: the run finishes, its money figure null with the list's line and the fix."""
    from ragbench._cost import vendor_prices as lists

    shipped = tmp_path / "price_lists"
    shipped.mkdir()
    (shipped / "openai.yaml").write_text("engine: openai\nvendor: [\n")  # cut short
    monkeypatch.setattr(lists, "PRICE_LISTS", shipped)
    vendor_prices.cache_clear()
    try:
        done = cli_here("--tasks", "demo", "--model", "scripted:echo", "--no-progress", "--output", str(tmp_path / "r"))
    finally:
        vendor_prices.cache_clear()
    assert done.returncode == 0, done.stderr
    cost = json.loads((tmp_path / "r" / "results.json").read_text())["model_cost"]["demo"]
    assert cost["usd"] is None and cost["usd_note"] == (
        "price list openai.yaml (a file of the installed ragbench): line 3: not valid YAML (while parsing a flow node "
        "did not find expected node content, column 1); reinstall ragbench (pip install --force-reinstall ragbench)"
    )
