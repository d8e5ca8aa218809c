"""How a URL's credentials are hidden (ragbench._values.urls), units with no public face: its user info and the
values of its secret parameters, in a URL and where URLs stand in a text (tests/storage/test_url_credentials.py
tests that no secret of a --base-url reaches a run's files, its errors or the console)."""

from __future__ import annotations

import pytest

from ragbench._values.urls import redact_url, redact_urls, secret_name


@pytest.mark.parametrize(
    "url, shown",
    [
        ("http://user:pw@host:8000/v1", "http://***@host:8000/v1"),
        ("https://TOKEN@host/v1", "https://***@host/v1"),
        ("http://host/v1?api_key=abc&api-version=1", "http://host/v1?api_key=***&api-version=1"),
        (
            "http://host/v1?apiKey=abc;sig=xyz&X-Amz-Signature=q",
            "http://host/v1?apiKey=***;sig=***&X-Amz-Signature=***",
        ),
        ("http://host/v1?access_token=a&code=b&model=c", "http://host/v1?access_token=***&code=***&model=c"),
        ("http://host/v1#access_token=a", "http://host/v1#access_token=***"),
        ("http://u:p@[::1/v1", "http://***@[::1/v1"),
        ("http://host:8000/v1", "http://host:8000/v1"),
    ],
)
def test_a_urls_user_info_and_secret_parameters_are_redacted(url, shown):
    assert redact_url(url) == shown


def test_urls_in_a_text_are_redacted_where_they_stand():
    text = 'no answer from "http://u:pw@h/v1?key=k" (refused); see http://h/docs.'
    assert redact_urls(text) == 'no answer from "http://***@h/v1?key=***" (refused); see http://h/docs.'


@pytest.mark.parametrize(
    "name, secret",
    [
        ("api_key", True),
        ("apiKey", True),
        ("X-API-KEY", True),
        ("sig", True),
        ("access_token", True),
        ("password", True),
        ("api-version", False),
        ("max_tokens", False),
        ("model", False),
        ("tokenizer", False),
    ],
)
def test_a_secret_parameter_is_one_whose_name_holds_a_secret_word(name, secret):
    assert secret_name(name) is secret
