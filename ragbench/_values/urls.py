"""Credentials in URLs (`--base-url http://user:PASS@host/v1`, `...?api_key=KEY`): the one rule of what is
secret in a URL, the one redaction every place that records or prints a URL uses (`redact_url`, `redact_urls`
for free text, `redacted` for a recorded config), and a URL's parts for a client that sends them
(`Credentials.of`).

The rule: a URL's user info (everything before `@` in its authority: the user name too, which may be a
token; where the authority is `user:x` and `x` is no port, everything before the URL's last `@`, as a secret such
as AWS's may hold a `/`) is secret; so is the value of every query parameter (or fragment parameter) whose name is secret,
that is holds a word of SECRET_WORDS. A name's words are its runs of letters and digits, camelCase split
(`api_key`, `apiKey`, `X-Api-Key`: "api", "key"). A secret is written `***`. A key written in a URL's path
cannot be told from a path: it is not redacted (give it as a query parameter or user info).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

SECRET_WORDS = frozenset(
    {
        "key",
        "apikey",
        "secret",
        "password",
        "passwd",
        "pwd",
        "auth",
        "authorization",
        "token",
        "sig",
        "signature",
        "credential",
        "credentials",
        "session",
        "code",
        "jwt",
        "bearer",
    }
)
REDACTED = "***"
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"<>`]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_USER_INFO = re.compile(r"(?<=://)[^/?#@\s]*@")


def secret_name(name: str) -> bool:
    """Whether a parameter's (or an option's) name says its value is a secret (see the module docstring)."""
    return any(word in SECRET_WORDS for word in re.findall(r"[a-z0-9]+", _CAMEL.sub("_", name).lower()))


def redact_url(url: str) -> str:
    """`url` with its user info and its secret parameters' values written `***`; the rest as it was."""
    try:
        parts = urlsplit(url)
    except ValueError:  # a malformed authority (an unclosed IPv6 bracket): at least its user info goes
        return _USER_INFO.sub(REDACTED + "@", url)
    netloc = parts.netloc
    if "@" not in netloc and "@" in url and not _host(netloc):  # `user:sec/ret@host`: its secret holds a `/` (AWS's)
        return redact_url(f"{parts.scheme}://{REDACTED}@{url.rpartition('@')[2]}")
    if "@" in netloc:
        netloc = REDACTED + "@" + netloc.rpartition("@")[2]
    return urlunsplit(
        (parts.scheme, netloc, parts.path, _redact_parameters(parts.query), _redact_parameters(parts.fragment))
    )


def _host(netloc: str) -> bool:
    """Whether an authority without `@` is a host (with its port): not the start of user info cut short by a `/`."""
    name, colon, port = netloc.rpartition(":")
    return not colon or port.isdigit() or netloc.endswith("]")


def _redact_parameters(text: str) -> str:
    """`name=value&...` with each secret name's value written `***` (separators and encoding kept)."""
    pieces = re.split(r"([&;])", text)
    for n, piece in enumerate(pieces):
        name, equals, _ = piece.partition("=")
        if equals and secret_name(unquote(name)):
            pieces[n] = f"{name}={REDACTED}"
    return "".join(pieces)


def redact_urls(text: str) -> str:
    """`text` with every URL in it redacted (`redact_url`)."""
    return _URL.sub(lambda match: redact_url(match.group()), text) if "://" in text else text


def redacted(value: Any) -> Any:
    """A recorded value (a run's config: JSON-like data) with every URL in its strings redacted."""
    if isinstance(value, str):
        return redact_urls(value)
    if isinstance(value, dict):
        return {key: redacted(inner) for key, inner in value.items()}
    if isinstance(value, (list, tuple)):
        return [redacted(inner) for inner in value]
    return value


@dataclass(frozen=True)
class Credentials:
    """A URL taken apart for a client: `url` without user info, query or fragment (what requests' paths are
    joined to), the user info as basic auth's (user, password), the query's parameters (sent on every
    request). Its repr shows no secret."""

    url: str
    basic_auth: tuple[str, str] | None = field(default=None, repr=False)
    query: dict[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, url: str) -> Credentials:
        parts = urlsplit(url)
        user_info, at, host = parts.netloc.rpartition("@")
        user, _, password = user_info.partition(":")
        return cls(
            url=urlunsplit((parts.scheme, host, parts.path, "", "")),
            basic_auth=(unquote(user), unquote(password)) if at else None,
            query=dict(parse_qsl(parts.query, keep_blank_values=True)),
        )

    def secrets(self) -> list[str]:
        """The secret strings themselves (for redacting a text that echoes them, a server's error page)."""
        user, password = self.basic_auth or ("", "")
        values = [password or user, *(value for name, value in self.query.items() if secret_name(name))]
        return [value for value in values if len(value) >= 3]
