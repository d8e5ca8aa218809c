"""The mock KG API: server, store semantics, client failures, and the RAG+KG baseline's use of it."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_tool_calls import JSON_VALUES

from conftest import shared_reference
from ragbench.api.trace import trace_prompts
from ragbench.tasks.crag.kg.client import CragKgClient, CragKgError
from ragbench.tasks.crag.kg.endpoints import ENDPOINTS
from ragbench.tasks.crag.kg.server import BackgroundServer
from support.crag_helpers import crag_t2_run
from support.crag_tiny_kg import write_tiny_kg
from support.helpers import closed_port, samples

FIELDS = sorted({field for endpoint in ENDPOINTS.values() for field in endpoint.fields})


@pytest.fixture(scope="module")
def kg_dir(tmp_path_factory):
    return write_tiny_kg(tmp_path_factory.mktemp("kg") / "cragkg")


@pytest.fixture(scope="module")
def server(kg_dir):
    started = BackgroundServer.start(str(kg_dir), allow_pickle=True)
    yield started
    started.stop()


def call(url, method, *args, **client_options):
    async def go():
        client = CragKgClient(url, **client_options)
        try:
            return await getattr(client, method)(*args)
        finally:
            await client.aclose()

    return asyncio.run(go())


def kind(value):
    return type(value).__name__ if value is not None else None


def test_every_upstream_request_gets_a_result_of_the_upstream_shape(server):
    reference = json.loads((shared_reference() / "crag" / "mock_api_example_responses.json").read_text())
    assert {s["client_method"] for s in reference["samples"]} == set(ENDPOINTS)
    for sample in reference["samples"]:
        response = httpx.post(server.url + sample["endpoint"], json=sample["request_body"])
        assert response.status_code == 200, (sample["client_method"], response.text)
        body = response.json()
        assert list(body) == ["result"]
        expected = sample["response"]["result"]
        if body["result"] is not None and expected is not None:
            assert kind(body["result"]) == kind(expected), sample["client_method"]
            if isinstance(expected, dict) and sample["client_method"].startswith("sports"):
                assert set(body["result"]) <= set(expected)  # the tiny tables have a subset of the columns


def test_root_says_the_service_runs(server):
    assert httpx.get(server.url + "/").json() == {"message": "The CRAG API service is running"}


def test_search_normalises_and_returns_at_most_ten_names(server):
    assert (
        call(server.url, "open_search_entity_by_name", "FLORIDA!!")
        == call(server.url, "open_search_entity_by_name", "florida")[:10]
    )
    assert call(server.url, "open_search_entity_by_name", "florida")[0] == "Florida"
    assert len(call(server.url, "open_search_entity_by_name", "place")) == 10
    assert call(server.url, "finance_get_company_name", "apple") == ["Apple Inc. Common Stock"]
    assert call(server.url, "music_search_artist_entity_by_name", "adele") == ["Adele"]


def test_gets_are_exact_and_case_sensitive(server):
    assert call(server.url, "open_get_entity", "Florida")["summary_structured"] == {"capital": "Tallahassee"}
    assert call(server.url, "open_get_entity", "florida") is None
    assert call(server.url, "finance_get_ticker_by_name", "Apple Inc. Common Stock") == "AAPL"
    assert call(server.url, "finance_get_eps", "META") == 21.5 and call(server.url, "finance_get_eps", "meta") is None
    assert call(server.url, "music_get_artist_birth_place", "Adele") == "NO"


def test_multi_field_endpoints(server):
    assert call(server.url, "music_get_billboard_rank_date", 1, "2024-03-02") == [["Texas Hold 'Em"], ["Beyonce"]]
    assert call(server.url, "music_get_billboard_rank_date", 7) == [None, None]
    assert call(server.url, "music_get_billboard_attributes", "2024-03-02", "weeks_in_chart", "Texas Hold 'Em") == "2"
    assert call(server.url, "music_grammy_get_all_awarded_artists") == ["Adele"]
    games = call(server.url, "sports_nba_get_games_on_date", "2023-01", "Chicago Bulls")
    assert games["game_id"] == {"0": "0022200547", "1": "0022200548"}
    assert call(server.url, "sports_nba_get_games_on_date", "2023-01", "O'Neal's team") is None
    assert call(server.url, "sports_soccer_get_games_on_date", "2024-03-09", "Nobody FC") is None


def test_request_bodies_are_validated_like_upstream(server):
    assert (
        httpx.post(server.url + "/movie/get_movie_info_by_id", json={"query": "603"}).json()["result"]["title"]
        == "The Matrix"
    )  # "100"-style strings are coerced to int, as in the upstream notebook
    assert httpx.post(server.url + "/movie/get_year_info", json={"query": 1999}).status_code == 422


@pytest.mark.parametrize(
    ("year", "why"), [("1985", "Year must be between 1990 and 2021"), ("soon", "invalid literal for int()")]
)
def test_a_value_a_lookup_refuses_is_a_422_naming_it_not_a_500(server, year, why):
    refused = httpx.post(server.url + "/movie/get_year_info", json={"query": year})
    assert refused.status_code == 422 and refused.json()["detail"].startswith(f"movie_get_year_info: {why}")
    with pytest.raises(CragKgError, match=f"movie_get_year_info: HTTP 422 .*{re.escape(why)}"):
        call(server.url, "movie_get_year_info", year)


@pytest.fixture(scope="module")
def http():
    with httpx.Client() as client:  # one client: a new one per request costs a TLS context
        yield client


VALUES = st.text(max_size=6) | st.integers(1980, 2030).map(str) | JSON_VALUES


@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_any_body_is_answered_or_refused_with_a_json_reason_never_a_500(server, http, data):
    for method, endpoint in ENDPOINTS.items():  # every endpoint in every example: each gets 12 bodies
        body = data.draw(
            st.fixed_dictionaries(
                {field: VALUES for field in endpoint.fields},
                optional={field: VALUES for field in FIELDS if field not in endpoint.fields},
            )
        )
        response = http.post(server.url + endpoint.path, json=body)
        assert response.status_code in (200, 422, 503), (method, body, response.text)
        assert set(response.json()) == ({"result"} if response.status_code == 200 else {"detail"})


def test_pickled_domains_need_allow_pickle(kg_dir, server):
    """Two servers of one process, on one KG, each answer from their own store (the routes are made once a
    process): the one with --allow-pickle answers the pickled domain, the one without refuses it."""
    allowed = server
    server = BackgroundServer.start(str(kg_dir), allow_pickle=False)
    try:
        response = httpx.post(server.url + "/music/get_members", json={"query": "Maroon 5"})
        assert response.status_code == 503 and "--allow-pickle" in response.text
        assert httpx.post(allowed.url + "/music/get_members", json={"query": "Maroon 5"}).status_code == 200
        assert httpx.post(server.url + "/music/get_members", json={"query": "Maroon 5"}).status_code == 503
        assert call(server.url, "finance_get_eps", "META") == 21.5  # SqliteDict values: plain data only
        with pytest.raises(CragKgError, match="503"):
            call(server.url, "music_get_members", "Maroon 5")
    finally:
        server.stop()


def test_a_server_that_is_down_is_a_client_error_after_retries():
    with closed_port() as port, pytest.raises(CragKgError, match="unreachable after 3 attempts"):
        call(f"http://127.0.0.1:{port}", "open_get_entity", "x", retries=2, backoff=0.0)


@pytest.mark.parametrize("body, message", [(b"<html>oops", "not JSON"), (b'{"detail": "x"}', 'without a "result"')])
def test_malformed_replies_are_client_errors(body, message):
    transport = httpx.MockTransport(lambda request: httpx.Response(200, content=body))
    with pytest.raises(CragKgError, match=message):
        call("http://kg", "open_get_entity", "x", transport=transport)


def test_serve_command_runs_the_api_on_the_port_it_prints(kg_dir):
    command = ["serve", "crag-kg", "--kg-dir", str(kg_dir), "--port", "0"]
    process = subprocess.Popen(
        [sys.executable, "-m", "ragbench._cli.main", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        printed = []
        for line in process.stdout:  # the port is bound before this line is printed: no polling
            printed.append(line)
            if line.startswith("crag-kg: serving on ") or "Uvicorn running on" in line:
                break
        assert printed[-1].startswith("crag-kg: serving on "), printed
        url = printed[-1].removeprefix("crag-kg: serving on ").strip()
        body = httpx.post(f"{url}/open/get_entity", json={"query": "Florida"}).json()
        assert body["result"]["summary_text"] == "Florida is a state."
    finally:
        process.terminate()
        output = "".join(printed) + process.communicate(timeout=20)[0]
    assert "music unavailable" in output  # no --allow-pickle


def run_rag_kg(tmp_path, entity_reply, **task_args):
    results = crag_t2_run(tmp_path, ["what is florida's capital?"], entity_reply, **task_args)
    return results, samples(tmp_path / "run", "crag_t2")[0]


def test_rag_kg_baseline_routes_open_domain_entities_to_the_kg(tmp_path, kg_dir):
    _, sample = run_rag_kg(tmp_path, '{"domain": "encyclopedia", "main_entity": "florida"}', kg_dir=str(kg_dir))
    user = trace_prompts(sample["trace"])[1][1]["content"]
    kg = (
        "{'Florida': {'summary_text': 'Florida is a state.', 'summary_structured': {'capital': 'Tallahassee'}, "
        "'raw_mediawiki': '{{Infobox}} Florida'}}"
    )
    assert user.startswith("### References\n# Web\n- ") and f"# Knowledge Graph\n{kg}\n------\n\n" in user
    tools = [step["name"] for step in sample["trace"] if step["kind"] == "tool"]
    assert tools == ["crag_kg.open_search_entity_by_name", "crag_kg.open_get_entity"]
    llm_calls = [step for step in sample["trace"] if step["kind"] == "llm"]
    assert llm_calls[0]["request"]["sampling"]["max_tokens"] == 4096  # the entity-extraction call


def test_rag_kg_baseline_movie_person_branch_keeps_the_raw_responses(tmp_path, kg_dir):
    reply = '{"domain": "movie", "person": "keanu reeves", "person_aspect": "acted_movies", "year": 1999}'
    _, sample = run_rag_kg(tmp_path, reply, kg_dir=str(kg_dir))
    user = trace_prompts(sample["trace"])[1][1]["content"]
    assert "# Knowledge Graph\n[{'keanu reeves_acted_movies': [{'result': {'title': 'The Matrix'" not in user  # a list
    assert "{'keanu reeves_acted_movies': [{'result': {'title': 'The Matrix', 'id': 603" in user
    assert "1999_all_movies" not in user  # Oscar entries are not ids: the year branch fails, as upstream


def test_an_entity_reply_that_is_not_an_object_fails_the_example_as_upstream_crashes(tmp_path, kg_dir):
    # json.loads fails, the fallback returns a list of the objects found, and .keys() crashes upstream
    results, sample = run_rag_kg(tmp_path, 'Sure: {"domain": "other"}', kg_dir=str(kg_dir))
    assert "BaselineCrash" in sample["error"] and results["counts"]["crag_t2"]["failed"] == 1


def test_a_kg_that_is_down_leaves_the_kg_block_empty_and_the_trace_says_why(tmp_path, monkeypatch):
    # the KG answered the pre-flight and went down before the examples ran
    monkeypatch.setattr("ragbench.tasks.crag.preflight.unreachable", lambda url: None)
    with closed_port() as port:
        _, sample = run_rag_kg(
            tmp_path, '{"domain": "other", "main_entity": "florida"}', kg_url=f"http://127.0.0.1:{port}"
        )
    assert sample["error"] is None
    assert "# Knowledge Graph\n\n------" in trace_prompts(sample["trace"])[1][1]["content"]
    assert "unreachable" in [s for s in sample["trace"] if s["kind"] == "tool"][0]["error"]
