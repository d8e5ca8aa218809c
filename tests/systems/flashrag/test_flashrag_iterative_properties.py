"""Properties of the iterative FlashRAG methods' own bookkeeping, over inputs the parity fixtures cannot cover:
IRCoT's passage pool, Self-Ask's kept text, FLARE's sentence read from an engine's tokens, the text written so far
that FlashRAG's template appends."""

import math

from hypothesis import given
from hypothesis import strategies as st

from ragbench.api import Document
from ragbench.api.engines import Response, TokenLogprobs
from ragbench.api.flashrag import FLASHRAG_RAG_TEMPLATE
from ragbench.plugins.flare.system import Flare
from ragbench.plugins.ircot.system import Ircot, IrcotFixed
from ragbench.plugins.self_ask.prompts import FOLLOW_UP, INTERMEDIATE_ANSWER
from ragbench.plugins.self_ask.system import follow_up_question, keep

scores = st.floats(min_value=-5, max_value=50, allow_nan=False).map(lambda x: round(x, 1))
searches = st.lists(st.lists(st.tuples(st.sampled_from("abcdef"), scores), max_size=5), min_size=1, max_size=5)


@given(searches)
def test_ircot_pool_keeps_each_passage_once_with_its_best_score_in_score_order(found):
    pool = {}
    for search in found:
        pool = Ircot.merge(pool, [Document(id=i, title=i, text=f"text {i}", score=s) for i, s in search])
    hits = [hit for search in found for hit in search]
    first_seen = list(dict.fromkeys(i for i, _ in hits))
    best = {i: max(s for j, s in hits if j == i) for i in first_seen}
    for system, sign in ((Ircot(), 1), (IrcotFixed(), -1)):
        ordered = system.ordered(pool)
        assert [d.id for d in ordered] == sorted(first_seen, key=lambda i: sign * best[i])  # stable: ties first-seen
        assert {d.id: d.score for d in ordered} == best


text = st.lists(
    st.sampled_from(["Follow up:", "Follow up: ", "Intermediate answer:", "\n", " q?", "So", "x", "#"]), max_size=8
).map("".join)


@given(text, text, st.sampled_from([INTERMEDIATE_ANSWER, FOLLOW_UP]))
def test_self_ask_keeps_a_prefix_of_each_output_and_alternates_its_stop(res, output, stop):
    kept, next_stop = keep(res, output, stop)
    assert kept.startswith(res) and output.startswith(kept[len(res) :])
    assert next_stop != stop
    if stop == INTERMEDIATE_ANSWER:
        assert INTERMEDIATE_ANSWER not in kept[len(res) :]
    question = follow_up_question(output)
    assert (question is None) == ("Follow up: " not in output)
    assert question is None or "\n" not in question


pieces = st.lists(
    st.sampled_from([" The", " cat", " sat", ".", " So", "?", " A", "1", "9", " ", "  ", "x."]), min_size=1, max_size=14
)


@given(pieces, st.lists(st.sampled_from([0.9, 0.1]), min_size=14, max_size=14))
def test_flare_reads_the_engine_tokens_that_cover_the_first_sentence(tokens, probabilities):
    response = Response(
        texts=["".join(tokens)],
        logprobs=[TokenLogprobs(token=t, logprob=math.log(p)) for t, p in zip(tokens, probabilities)],
    )
    flare = Flare()
    sentence, covering, read = flare.first_sentence(response)
    covered = "".join(covering)
    assert covered.lstrip().startswith(sentence)
    assert not covering or len("".join(covering[:-1]).lstrip()) < len(sentence)  # no token past the sentence
    assert read == [math.exp(math.log(p)) for p in probabilities[: len(covering)]]
    query = flare.query(covering, read)
    if all(p > flare.threshold for p in read):
        assert query is None
    else:
        assert query == ("".join(t for t, p in zip(covering, read) if p > flare.threshold) or None)


@given(st.lists(st.sampled_from(["", " ", "  ", "x", "."]), max_size=3).map(" ".join), st.booleans())
def test_the_text_written_so_far_follows_the_prompt_unless_it_is_empty_or_one_space(previous_gen, chat_model):
    """PromptTemplate.get_string (flashrag/prompt/base_prompt.py:155) appends previous_gen unless it is "" or " ":
    IRCoT's thoughts joined by spaces are " " when both were empty, and FlashRAG's prompt then ends as the bare one."""
    bare = FLASHRAG_RAG_TEMPLATE.render(chat_model, [], question="q")
    prompt = FLASHRAG_RAG_TEMPLATE.render(chat_model, [], previous_gen=previous_gen, question="q")
    if previous_gen in ("", " "):
        assert prompt == bare
    elif chat_model:
        assert prompt == [*bare, {"role": "assistant", "content": previous_gen}]
    else:
        assert prompt == bare + previous_gen
