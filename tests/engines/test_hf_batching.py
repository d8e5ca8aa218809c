"""The hf engine's batch size on a GPU (batch_size=auto: halve on out-of-memory, cache on disk) and
the split of a batch that runs out of memory at run time, with a fake out-of-memory error (no GPU
here), run on a tiny random model of the embedded SmolLM2's architecture; the last test loads the embedded SmolLM2."""

from __future__ import annotations

import copy
import json
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import needs
from ragbench._engines.hf import batching as hf_batching
from ragbench.api import ConfigError

pytestmark = needs("torch")  # imported by the tests that use it, not while collecting


@pytest.fixture(scope="module")
def tiny_engine(tmp_path_factory):
    """The engine on a tiny random model of the embedded SmolLM2's architecture and tokenizer
    (support/tiny_models.py), loaded once for the module's tests of how batches are cut (each takes a copy: the
    settings are its own); the promise is the cutting and the order, not the text."""
    pytest.importorskip("transformers")
    from ragbench._engines.hf.engine import HFEngine
    from ragbench.testing import embedded_model
    from support.tiny_models import tiny_llama_like

    engine = HFEngine(str(tiny_llama_like(embedded_model(), tmp_path_factory.mktemp("tiny"))), batch_size=8)
    yield engine
    engine.close()


def oom() -> Exception:
    import torch

    return torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")


def test_the_largest_batch_that_fits_is_found_by_halving_on_out_of_memory():
    import torch

    tried, freed = [], []

    def try_batch(rows):
        tried.append(rows)
        if rows > 100:
            raise oom()

    assert (
        hf_batching.largest_fitting(
            try_batch, 512, lambda e: hf_batching.is_out_of_memory(torch, e), lambda: freed.append(1)
        )
        == 64
    )
    assert tried == [512, 256, 128, 64] and len(freed) == 3


def test_other_errors_are_not_taken_for_out_of_memory_and_one_row_too_many_is_a_config_error():
    import torch

    def broken(rows):
        raise ValueError("shape mismatch")

    with pytest.raises(ValueError, match="shape mismatch"):
        hf_batching.largest_fitting(broken, 8, lambda e: hf_batching.is_out_of_memory(torch, e))

    def never(rows):
        raise RuntimeError("CUDA error: out of memory")  # the older message form counts too

    with pytest.raises(ConfigError, match="even one row runs out of GPU memory"):
        hf_batching.largest_fitting(never, 4, lambda e: hf_batching.is_out_of_memory(torch, e))


def test_batch_size_is_auto_on_cuda_and_16_on_cpu_unless_given():
    assert hf_batching.parse_batch_size(None, "cuda") is None
    assert hf_batching.parse_batch_size("auto", "cuda:1") is None
    assert hf_batching.parse_batch_size(None, "cpu") == 16
    assert hf_batching.parse_batch_size("auto", "cpu") == 16  # no out-of-memory signal to search with
    assert hf_batching.parse_batch_size("8", "cuda") == 8
    for bad in ("0", "many"):
        with pytest.raises(ConfigError, match="batch_size"):
            hf_batching.parse_batch_size(bad, "cpu")


class FakeGpu:
    """Just enough of torch and a model for auto_batch_size: generate runs out of memory above
    `fits` rows, and every probe is counted."""

    def __init__(self, fits: int) -> None:
        import torch

        self.fits, self.probes = fits, []
        self.cuda = SimpleNamespace(
            get_device_name=lambda index: "Fake GPU 80GB",
            get_device_properties=lambda index: SimpleNamespace(total_memory=80 << 30),
            empty_cache=lambda: None,
            OutOfMemoryError=torch.cuda.OutOfMemoryError,
        )
        self.long, self.device = torch.long, torch.device
        self.ones_like, self.inference_mode = torch.ones_like, torch.inference_mode

    def full(self, shape, value, dtype, device):
        import torch

        assert device == "cuda"
        return torch.full(shape, value, dtype=dtype)  # on the CPU: no GPU here

    def generate(self, input_ids, **kwargs):
        self.probes.append(tuple(input_ids.shape))
        if input_ids.shape[0] > self.fits:
            raise oom()


def test_auto_batch_size_is_searched_once_per_model_and_gpu_then_read_from_the_disk_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(hf_batching, "cache_root", lambda: tmp_path)
    gpu = FakeGpu(fits=200)
    size = hf_batching.auto_batch_size(gpu, gpu, "m;auto", "cuda", 8192, 0, 512)
    assert size == 128 and gpu.probes == [(512, 2048), (256, 2048), (128, 2048)]
    assert json.loads((tmp_path / "hf_batch_sizes.json").read_text()) == {
        f"m;auto|Fake GPU 80GB|{80 << 30}|probe=2048": 128
    }
    gpu.probes.clear()
    assert hf_batching.auto_batch_size(gpu, gpu, "m;auto", "cuda", 8192, 0, 512) == 128 and gpu.probes == []
    other = FakeGpu(fits=40)  # another model: its own search
    assert hf_batching.auto_batch_size(other, other, "n;auto", "cuda", 1024, 0, 512) == 32
    assert other.probes[0] == (512, 1024 - hf_batching.PROBE_NEW_TOKENS)  # a short context: shorter probes


@pytest.mark.model
def test_a_batch_that_runs_out_of_memory_is_split_and_answers_as_it_would_whole(tiny_engine, monkeypatch):
    from ragbench.api.engines import Request, Sampling

    engine = copy.copy(tiny_engine)  # batch_size=8, the default prefix cache
    requests = [Request(prompt=f"Count to {i}:", sampling=Sampling(max_tokens=4)) for i in range(6)]
    whole = engine.generate(requests)
    run, sizes = engine._run, []

    def small_gpu(chunk, sampling):
        sizes.append(len(chunk))
        if len(chunk) > 2:
            raise oom()
        return run(chunk, sampling)

    monkeypatch.setattr(engine, "_run", small_gpu)
    split = engine.generate(requests)
    assert [r.texts for r in split] == [r.texts for r in whole]
    assert sizes == [6, 3, 1, 2, 3, 1, 2] and engine.max_batch_size == 1
    monkeypatch.setattr(engine, "_run", lambda chunk, sampling: (_ for _ in ()).throw(RuntimeError("device lost")))
    assert all("generation failed (RuntimeError: device lost)" in str(r) for r in engine.generate(requests[:2]))


@settings(max_examples=300, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 3000), max_size=40),
    new_tokens=st.integers(1, 512),
    rows_per_request=st.integers(1, 4),
    max_rows=st.integers(1, 64),
    max_tokens=st.one_of(st.none(), st.integers(1, 20_000)),
)
def test_token_bounded_cuts_cover_every_request_in_order_within_both_limits_and_cut_no_earlier_than_needed(
    lengths, new_tokens, rows_per_request, max_rows, max_tokens
):
    lengths = sorted(lengths, reverse=True)  # as the engine sorts a batch, longest first
    cuts = hf_batching.token_bounded_cuts(lengths, new_tokens, rows_per_request, max_rows, max_tokens)
    assert [i for start, end in cuts for i in range(start, end)] == list(range(len(lengths)))
    per_batch = max(1, max_rows // rows_per_request)
    for start, end in cuts:
        rows = (end - start) * rows_per_request
        padded = rows * (lengths[start] + new_tokens)
        assert end - start <= per_batch
        assert end - start == 1 or max_tokens is None or padded <= max_tokens
        if end < len(lengths):  # the next request would have broken a limit
            grown = (end - start + 1) * rows_per_request * (lengths[start] + new_tokens)
            assert end - start + 1 > per_batch or (max_tokens is not None and grown > max_tokens)


@pytest.mark.model
def test_a_token_budget_cuts_a_batch_by_padded_tokens_and_answers_as_it_would_whole(tiny_engine, monkeypatch):
    from ragbench.api.engines import Request, Sampling

    engine = copy.copy(tiny_engine)
    engine.prefix_cache = None  # as prefix_cache_mb=0: the padded-token bound's path
    assert engine.max_batch_tokens == hf_batching.CPU_BATCH_TOKENS
    requests = [Request(prompt="Count: " + "one two " * (3 * i), sampling=Sampling(max_tokens=4)) for i in range(6)]
    whole = engine.generate(requests)
    run, shapes = engine._run, []

    def recorded(chunk, sampling):
        shapes.append((len(chunk), max(len(ids) for _, ids, _ in chunk)))
        return run(chunk, sampling)

    monkeypatch.setattr(engine, "_run", recorded)
    engine.max_batch_tokens = 100
    cut = engine.generate(requests)
    assert [r.texts for r in cut] == [r.texts for r in whole]  # in request order, greedy answers unchanged
    assert len(shapes) > 1 and all(rows == 1 or rows * (width + 4) <= 100 for rows, width in shapes)
    assert [width for _, width in shapes] == sorted((width for _, width in shapes), reverse=True)


@pytest.mark.model
def test_the_embedded_model_attends_with_sdpa_which_keeps_no_full_attention_matrix():
    pytest.importorskip("transformers")
    from ragbench._engines.hf.engine import HFEngine

    assert HFEngine("embedded", batch_size=1).model_obj.config._attn_implementation == "sdpa"
