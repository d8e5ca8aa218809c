"""`batch=true` batches cut within each vendor's limits (batches/cuts.py): by requests and by bytes as the vendor
receives the batch (Anthropic: the creation's body as its SDK writes it; OpenAI: the uploaded JSONL file), measured
on requests carrying real pictures (PNG bytes from PIL) built by the vendor's own SDK, against the fake batch
servers (tests/support/batch_fake.py), which refuse a larger batch with HTTP 413 as the vendors do. The limits are
lowered here to a few hundred kB (the vendors' own, 256 MB and 200 MB, are checked as documented)."""

from __future__ import annotations

import io
import random
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image as PILImage
from test_batch_api import engine, texts

from conftest import needs
from ragbench._engines.batches.cuts import cut
from ragbench._engines.hosted import batch_anthropic, batch_openai
from ragbench.api import user_turn
from ragbench.api.engines import BatchLimits, Request, RequestError, Response
from support.batch_fake import FakeBatchServer, fake, no_ambient_keys  # noqa: F401 (fixtures)

VENDORS = ["openai", pytest.param("anthropic", marks=needs("anthropic"))]
SIDES = {"openai": batch_openai.OpenAIBatches, "anthropic": batch_anthropic.AnthropicBatches}


def noise_png(side: int, seed: int) -> bytes:
    """A PNG of random pixels (it does not compress): about 3 * side**2 bytes."""
    rng = random.Random(seed)
    picture = PILImage.frombytes("RGB", (side, side), rng.randbytes(3 * side * side))
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    return buffer.getvalue()


def asked(n: int, side: int) -> Request:
    return Request.chat([user_turn(f"picture {n}: what is it?", [noise_png(side, n)])])


def lowered(monkeypatch: pytest.MonkeyPatch, vendor: str, **limits: int) -> BatchLimits:
    side = SIDES[vendor]
    made = replace(side.limits, **limits)
    monkeypatch.setattr(side, "limits", made)
    return made


@pytest.mark.parametrize("vendor", VENDORS)
def test_a_batch_too_large_for_the_vendor_is_cut_by_its_bytes_as_the_vendor_receives_them(fake, vendor, monkeypatch):
    """The attack: 100 pictures' requests went as one 313 MB batch, refused (413) each time, `--resume` too."""
    fake.max_bytes = 400_000  # the vendor's limit, lowered
    limits = lowered(monkeypatch, vendor, bytes=fake.max_bytes)
    requests = [asked(n, 160 + 20 * (n % 3)) for n in range(9)]  # pictures of 77-120 kB, 105-160 kB as sent
    made = engine(fake, vendor)
    answers = made.generate(requests)
    assert all(isinstance(answer, Response) for answer in answers), texts(answers)[:1]
    assert len(fake.created) > 1 and len(fake.received) == len(fake.created)  # no batch refused
    assert all(size <= fake.max_bytes for size in fake.received)
    # measured as the vendor receives them: each batch's bytes as the loop counted them, and none could take the
    # next batch's first request
    vendor_side = made.batch_vendor()
    sent = [fake.batches[b]["lines"] for b in fake.created]
    for batch, size in zip(sent, fake.received):
        assert size == limits.framing + sum(map(limits.size, batch)) + limits.separator * (len(batch) - 1)
    for batch, after in zip(sent, sent[1:]):
        whole = limits.framing + sum(map(limits.size, [*batch, after[0]])) + limits.separator * len(batch)
        assert whole > fake.max_bytes
    assert [asked_text(line) for batch in sent for line in batch] == [f"picture {n}: what is it?" for n in range(9)]
    assert vendor_side.limits is limits


def asked_text(line: dict[str, Any]) -> str:
    content = (line.get("body") or line["params"])["messages"][-1]["content"]
    return str(next(part["text"] for part in content if part["type"] == "text"))


@pytest.mark.parametrize("vendor", VENDORS)
def test_a_batch_is_cut_by_the_vendors_count_of_requests(fake, vendor, monkeypatch):
    lowered(monkeypatch, vendor, requests=2)
    answers = engine(fake, vendor).generate([asked(n, 8) for n in range(5)])
    assert all(isinstance(answer, Response) for answer in answers)
    assert [len(fake.batches[b]["lines"]) for b in fake.created] == [2, 2, 1]


@pytest.mark.parametrize("vendor", VENDORS)
def test_a_request_too_large_for_any_batch_fails_alone_in_one_line(fake, vendor, monkeypatch):
    lowered(monkeypatch, vendor, bytes=60_000)
    requests = [asked(0, 8), asked(1, 200), asked(2, 8)]  # the second's picture: 120 kB
    answers = engine(fake, vendor).generate(requests)
    assert isinstance(answers[0], Response) and isinstance(answers[2], Response)
    refused = answers[1]
    assert isinstance(refused, RequestError) and "\n" not in str(refused)
    assert "MB as the vendor receives it, over the 0.1 MB one batch may hold" in str(refused)
    assert len(fake.created) == 1 and len(fake.sent) == 2  # never sent


def test_each_vendors_documented_limits():
    # platform.claude.com/docs/en/build-with-claude/batch-processing: 100,000 requests or 256 MB
    anthropic = batch_anthropic.LIMITS
    assert (anthropic.requests, anthropic.bytes, anthropic.framing, anthropic.separator) == (100_000, 256e6, 15, 1)
    # platform.openai.com/docs/api-reference/batch/create: 50,000 requests, 200 MB a file
    assert (batch_openai.LIMITS.requests, batch_openai.LIMITS.bytes) == (50_000, 200e6)
    line = {"custom_id": "c", "params": {"messages": [{"role": "user", "content": "é"}]}}
    assert anthropic.size(line) == len(
        '{"custom_id":"c","params":{"messages":[{"role":"user","content":"é"}]}}'.encode()
    )
    assert batch_openai.LIMITS.size(line) == len(batch_openai.jsonl(line))


def sized(size: int) -> dict[str, Any]:
    return {"n": "x" * size}


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 120), max_size=30),
    st.integers(1, 6),
    st.integers(20, 300),
    st.integers(0, 3),
    st.integers(0, 20),
)
def test_the_cut_keeps_order_and_every_limit_and_fills_each_batch(sizes, most, room, separator, framing):
    limits = BatchLimits(most, room, lambda line: len(line["n"]), "test", separator, framing)
    lines = [(n, sized(size)) for n, size in enumerate(sizes)]
    made = cut(lines, limits)
    too_large = {key for key, _ in made.too_large}
    assert too_large == {n for n, size in enumerate(sizes) if framing + size > room}
    assert [key for batch in made.batches for key, _ in batch] == [n for n in range(len(sizes)) if n not in too_large]

    def used(batch: list[tuple[int, dict[str, Any]]]) -> int:
        return framing + sum(len(line["n"]) for _, line in batch) + separator * (len(batch) - 1)

    assert all(0 < len(batch) <= most and used(batch) <= room for batch in made.batches)
    for batch, after in zip(made.batches, made.batches[1:]):  # the next batch's first line did not fit
        assert len(batch) == most or used([*batch, after[0]]) > room
