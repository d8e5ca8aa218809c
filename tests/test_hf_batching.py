"""The hf engine's batch size on a GPU (batch_size=auto: halve on out-of-memory, cache on disk) and
the split of a batch that runs out of memory at run time, with a fake out-of-memory error (no GPU
here); the last test runs the embedded SmolLM2."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

from ragbench._engines import hf_batching  # noqa: E402
from ragbench._errors import ConfigError  # noqa: E402


def oom() -> Exception:
    return torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")


def test_the_largest_batch_that_fits_is_found_by_halving_on_out_of_memory():
    tried, freed = [], []

    def try_batch(rows):
        tried.append(rows)
        if rows > 100:
            raise oom()

    assert hf_batching.largest_fitting(try_batch, 512, lambda e: hf_batching.is_out_of_memory(torch, e),
                                       lambda: freed.append(1)) == 64
    assert tried == [512, 256, 128, 64] and len(freed) == 3


def test_other_errors_are_not_taken_for_out_of_memory_and_one_row_too_many_is_a_config_error():
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
        self.fits, self.probes = fits, []
        self.cuda = SimpleNamespace(get_device_name=lambda index: "Fake GPU 80GB",
                                    get_device_properties=lambda index: SimpleNamespace(total_memory=80 << 30),
                                    empty_cache=lambda: None, OutOfMemoryError=torch.cuda.OutOfMemoryError)
        self.long, self.device = torch.long, torch.device
        self.ones_like, self.inference_mode = torch.ones_like, torch.inference_mode

    def full(self, shape, value, dtype, device):
        assert device == "cuda"
        return torch.full(shape, value, dtype=dtype)  # on the CPU: no GPU here

    def generate(self, input_ids, **kwargs):
        self.probes.append(tuple(input_ids.shape))
        if input_ids.shape[0] > self.fits:
            raise oom()


def test_auto_batch_size_is_searched_once_per_model_and_gpu_then_read_from_the_disk_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(hf_batching, "default_cache_dir", lambda: tmp_path)
    gpu = FakeGpu(fits=200)
    size = hf_batching.auto_batch_size(gpu, gpu, "m;auto", "cuda", 8192, 0, 512)
    assert size == 128 and gpu.probes == [(512, 2048), (256, 2048), (128, 2048)]
    assert json.loads((tmp_path / "hf_batch_sizes.json").read_text()) == {
        f"m;auto|Fake GPU 80GB|{80 << 30}|probe=2048": 128}
    gpu.probes.clear()
    assert hf_batching.auto_batch_size(gpu, gpu, "m;auto", "cuda", 8192, 0, 512) == 128 and gpu.probes == []
    other = FakeGpu(fits=40)  # another model: its own search
    assert hf_batching.auto_batch_size(other, other, "n;auto", "cuda", 1024, 0, 512) == 32
    assert other.probes[0] == (512, 1024 - hf_batching.PROBE_NEW_TOKENS)  # a short context: shorter probes


@pytest.mark.model
def test_a_batch_that_runs_out_of_memory_is_split_and_answers_as_it_would_whole(monkeypatch):
    pytest.importorskip("transformers")
    from ragbench._engines.hf import HFEngine
    from ragbench._values.llm_calls import Request, Sampling

    engine = HFEngine("embedded", batch_size=8)
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
