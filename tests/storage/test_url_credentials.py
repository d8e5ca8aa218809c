"""Credentials in a URL (`--base-url http://user:PASS@host/v1`, `...?api_key=KEY`) work, and are shown nowhere:
not in run.json, results.json, report.md, the samples, the caches, errors or the console (ragbench._values.urls)."""

from __future__ import annotations

import base64
import json
import logging
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_engine_openai import FAST, FakeServer, chat, error, generate

from ragbench.api import System, SystemDeclaration
from ragbench.testing import Registry, cli, load_engine, run_eval
from support.helpers import cli_run_args, samples


@pytest.fixture
def server():
    fake = FakeServer()
    yield fake
    fake.stop()


def with_credentials(base_url: str, user: str, password: str, query: str = "") -> str:
    scheme, _, rest = base_url.partition("://")
    return f"{scheme}://{quote(user, safe='')}:{quote(password, safe='')}@{rest}{query}"


def test_user_info_in_the_base_url_is_sent_as_basic_auth(server):
    engine = load_engine("openai:m", base_url=with_credentials(server.base_url, "alice", "s3cret:pass@word"), **FAST)
    assert generate(engine, chat("hi")).text == "echo0: hi"
    [got] = server.requests
    assert got["path"] == "/v1/chat/completions"
    assert got["authorization"] == "Basic " + base64.b64encode(b"alice:s3cret:pass@word").decode()


def test_a_query_on_the_base_url_is_kept_on_every_request_path(server):
    engine = load_engine("openai:m", base_url=server.base_url + "?api-version=2024-06-01&api_key=K3Y", **FAST)
    generate(engine, chat("hi"))
    generate(engine, chat("hi", logprobs=1))
    assert [r["path"] for r in server.requests] == ["/v1/chat/completions?api-version=2024-06-01&api_key=K3Y"] * 2


def test_the_base_urls_credentials_stay_out_of_the_engine_its_errors_and_the_cache_key(server):
    url = with_credentials(server.base_url, "bob", "PASSW0RD", "?token=T0KENVALUE")
    server.then(error(401, "bad credentials PASSW0RD for http://bob:PASSW0RD@host/v1?token=T0KENVALUE"))
    engine = load_engine("openai:m", base_url=url, **FAST)
    with pytest.raises(Exception) as caught:
        generate(engine, chat())
    for text in (str(caught.value), repr(engine), engine.engine_id, str(vars(engine))):
        assert "PASSW0RD" not in text and "T0KENVALUE" not in text
    assert (
        engine.engine_id == load_engine("openai:m", base_url=server.base_url).engine_id
    )  # a changed key: same answers


def test_the_http_librarys_logs_show_no_credentials_of_the_base_url(server, caplog):
    caplog.set_level(logging.DEBUG)
    generate(
        load_engine(
            "openai:m", base_url=with_credentials(server.base_url, "u", "PASSW0RD", "?api_key=K3YVALUE"), **FAST
        ),
        chat("hi"),
    )
    assert "HTTP Request: POST" in caplog.text and "api_key=***" in caplog.text
    assert "PASSW0RD" not in caplog.text and "K3YVALUE" not in caplog.text


def files_text(folder: Path) -> bytes:
    return b"".join(path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file())


# Any letters and digits, marked so that no file could hold them by chance: a bare secret of 8 digits ("00000000",
# hypothesis's first try) was found in a SQLite page of the run folder, and the test failed with no leak.
SECRETS = st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=8, max_size=16).map(
    lambda text: f"Sq{text}x7"
)


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(password=SECRETS, key=SECRETS, failing=st.booleans())
def test_no_secret_of_the_base_url_reaches_the_run_folder_or_the_console(tmp_path_factory, password, key, failing):
    """A run whose --base-url holds a password and a key, against a server that answers or fails (echoing them
    back): neither is in any file of the run folder, nor in what the command printed."""
    fake = FakeServer()
    folder = tmp_path_factory.mktemp("run")
    try:
        if failing:
            fake.then(*[error(500, f"upstream saw {password} and {key} at {fake.base_url}?key={key}")] * 20)
        url = with_credentials(fake.base_url, "user", password, f"?api_key={key}")
        outcome = CliRunner().invoke(
            cli,
            cli_run_args(
                "openai:m",
                "--base-url",
                url,
                "--limit",
                "2",
                "--no-progress",
                "--model-arg",
                "max_retries=1",
                "--model-arg",
                "backoff_base=0.001",
                "--bootstrap-iters",
                "10",
                "--output",
                str(folder / "out"),
            ),
        )
        assert outcome.exit_code == (1 if failing else 0), outcome.output
        assert {r["authorization"] for r in fake.requests} == {
            "Basic " + base64.b64encode(f"user:{password}".encode()).decode()
        }
        assert all(r["path"].endswith(f"?api_key={key}") for r in fake.requests)
        written = files_text(folder / "out")
        assert json.loads((folder / "out" / "results.json").read_text())["config"]["model_args"][
            "base_url"
        ] == with_credentials(fake.base_url, "", "", "?api_key=***").replace("://:@", "://***@")
        for secret in (password, key):
            assert secret.encode() not in written and secret not in outcome.output
    finally:
        fake.stop()


def test_the_preflight_names_an_unreachable_url_without_its_credentials(tmp_path):
    outcome = CliRunner().invoke(
        cli,
        cli_run_args(
            "openai:m",
            "--base-url",
            "http://user:PASSW0RD@127.0.0.1:9/v1?api_key=K3YVALUE",
            "--limit",
            "1",
            "--no-progress",
            "--output",
            str(tmp_path / "out"),
        ),
    )
    assert outcome.exit_code != 0 and "http://127.0.0.1:9/v1/models" in outcome.output
    assert "PASSW0RD" not in outcome.output and "K3YVALUE" not in outcome.output


class QuotingSystem(System):
    """A plugin whose service call fails with an error quoting the URL it called, key and all."""

    name = "quoting_system"
    declares = SystemDeclaration(uses_llm=False)

    async def run(self, example, ctx):
        raise RuntimeError("GET https://kg.example/api?apiKey=K3YVALUE&q=x failed (HTTP 503)")


def test_a_plugins_error_quoting_a_url_is_saved_and_shown_without_its_key(tmp_path):
    registry = Registry.discover()
    registry.add_catalog({"systems": {"quoting_system": {"target": "test_url_credentials:QuotingSystem"}}}, "tests")
    results = run_eval(
        "demo", "quoting_system", registry=registry, limit=2, bootstrap_iters=10, output=tmp_path / "run"
    ).results
    assert results["counts"]["demo"]["failed"] == 2
    [sample, _] = samples(tmp_path / "run", "demo")
    assert sample["error"] == "RuntimeError: GET https://kg.example/api?apiKey=***&q=x failed (HTTP 503)"
    assert b"K3YVALUE" not in files_text(tmp_path / "run")


def test_a_replica_set_names_its_servers_without_their_credentials():
    engine = load_engine("openai:m", base_url=["http://u:PASSW0RD@a:1/v1", "http://b:2/v1?key=K3YVALUE"])
    assert engine.names == ["http://***@a:1/v1", "http://b:2/v1?key=***"]
