"""The typed values that replaced `dict[str, Any]` in the contract hold what the code reads: `SamplingArgs` names
every field `Sampling.make` takes (and nothing else), `flashrag_sampling` builds what it built before, and
`json_object` / `json_list` narrow a JSON field to an object or an array, else an empty one."""

from __future__ import annotations

import dataclasses
import typing

from hypothesis import given
from hypothesis import strategies as st

from ragbench.api.data import json_list, json_object
from ragbench.api.engines import Sampling, SamplingArgs
from ragbench.api.flashrag import flashrag_sampling

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)


def test_sampling_args_name_every_field_of_sampling():
    assert set(typing.get_type_hints(SamplingArgs)) == {field.name for field in dataclasses.fields(Sampling)}
    assert not SamplingArgs.__required_keys__  # each keyword may be left out: Sampling's default applies


def test_sampling_args_are_what_sampling_make_takes():
    given: SamplingArgs = {"max_tokens": 7, "stop": "\n", "logprob_tokens": ["[Relevant]"], "left_to_server": ["n"]}
    made = Sampling.make(**given)
    assert (made.max_tokens, made.stop, made.logprob_tokens, made.left_to_server) == (
        7,
        ("\n",),
        ("[Relevant]",),
        ("n",),
    )


def test_flashrag_sampling_builds_the_keywords_it_built():
    assert flashrag_sampling() == {"max_tokens": 32, "temperature": 0.0, "stop": ["<|eot_id|>"], "keep_stop": False}
    assert flashrag_sampling("vllm", max_tokens=64, stop=["</search>"], top_p=0.85) == {
        "max_tokens": 64,
        "temperature": 0.0,
        "top_p": 0.85,
        "stop": ["</search>", "<|eot_id|>"],
        "keep_stop": True,
    }
    assert list(flashrag_sampling("vllm", max_tokens=64, stop=["x"], top_p=0.85)) == [
        "max_tokens",
        "temperature",
        "top_p",
        "stop",
        "keep_stop",
    ]
    assert flashrag_sampling("hf", stop=["\n"], skip_special_tokens=False) == {
        "max_tokens": 32,
        "temperature": 0.0,
        "skip_special_tokens": False,
        "stop": ["\n"],
    }
    assert flashrag_sampling("hf") == {"max_tokens": 32, "temperature": 0.0}
    assert flashrag_sampling("vllm", stop="Question:")["stop"] == ["Question:", "<|eot_id|>"]  # one string: one stop


@given(JSON)
def test_json_fields_narrow_to_their_shape(value):
    assert json_object(value) is value if isinstance(value, dict) else json_object(value) == {}
    assert json_list(value) is value if isinstance(value, list) else json_list(value) == []
