"""The chat messages nuggetizer 0.0.5's `Nuggetizer` sends (models/nuggetizer.py): a system message naming the
step's assistant, then the step's instruction. Lists are shown as Python writes them (`str` of a list of str)."""

from __future__ import annotations

CREATOR = (
    "You are NuggetizeLLM, an intelligent assistant that can update a list of atomic nuggets to best provide all "
    "the information required for the query."
)
SCORER = (
    "You are NuggetizeScoreLLM, an intelligent assistant that can label a list of atomic nuggets based on their "
    "importance for a given search query."
)
ASSIGNER = (
    "You are NuggetizeAssignerLLM, an intelligent assistant that can label a list of atomic nuggets based on if "
    "they are captured by a given passage."
)

CREATE = """Update the list of atomic nuggets of information (1-12 words), if needed, so they best provide the \
information required for the query. Leverage only the initial list of nuggets (if exists) and the provided context \
(this is an iterative process).  Return only the final list of all nuggets in a Pythonic list format (even if no \
updates). Make sure there is no redundant information. Ensure the updated nugget list has at most {max_nuggets} \
nuggets (can be less), keeping only the most vital ones. Order them in decreasing order of importance. Prefer \
nuggets that provide more interesting information.

Search Query: {query}
Context:
{context}
Search Query: {query}
Initial Nugget List: {nuggets}
Initial Nugget List Length: {count}

Only update the list of atomic nuggets (if needed, else return as is). Do not explain. Always answer in short \
nuggets (not questions). List in the form ["a", "b", ...] and a and b are strings with no mention of ".
Updated Nugget List:"""

SCORE = """Based on the query, label each of the {count} nuggets either a vital or okay based on the following \
criteria. Vital nuggets represent concepts that must be present in a “good” answer; on the other hand, okay nuggets \
contribute worthwhile information about the target but are not essential. Return the list of labels in a Pythonic \
list format (type: List[str]). The list should be in the same order as the input nuggets. Make sure to provide a \
label for each nugget.

Search Query: {query}
Nugget List: {nuggets}

Only return the list of labels (List[str]). Do not explain.
Labels:"""

GRADE_2 = """Based on the query and passage, label each of the {count} nuggets either as support or not_support \
using the following criteria. A nugget that is fully captured in the passage should be labeled as support; \
otherwise, label them as not_support. Return the list of labels in a Pythonic list format (type: List[str]). The \
list should be in the same order as the input nuggets. Make sure to provide a label for each nugget."""

GRADE_3 = """Based on the query and passage, label each of the {count} nuggets either as support, partial_support, \
or not_support using the following criteria. A nugget that is fully captured in the passage should be labeled as \
support. A nugget that is partially captured in the passage should be labeled as partial_support. If the nugget is \
not captured at all, label it as not_support. Return the list of labels in a Pythonic list format (type: \
List[str]). The list should be in the same order as the input nuggets. Make sure to provide a label for each \
nugget."""

ASSIGN = """{instruction}

Search Query: {query}
Passage: {passage}
Nugget List: {nuggets}
Only return the list of labels (List[str]). Do not explain.
Labels:"""


def chat(system: str, user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def create(query: str, passages: list[str], nuggets: list[str], max_nuggets: int) -> list[dict[str, str]]:
    """The creator's prompt over one window of passages (numbered from 1 in each window)."""
    context = "\n".join(f"[{i}] {text}" for i, text in enumerate(passages, 1))
    given = {"max_nuggets": max_nuggets, "query": query, "context": context, "nuggets": str(nuggets)}
    return chat(CREATOR, CREATE.format(**given, count=len(nuggets)))


def score(query: str, nuggets: list[str]) -> list[dict[str, str]]:
    return chat(SCORER, SCORE.format(count=len(nuggets), query=query, nuggets=str(nuggets)))


def assign(query: str, passage: str, nuggets: list[str], grades: int) -> list[dict[str, str]]:
    """The assigner's prompt: support / not_support (grades 2) or with partial_support too (grades 3)."""
    instruction = (GRADE_2 if grades == 2 else GRADE_3).format(count=len(nuggets))
    return chat(ASSIGNER, ASSIGN.format(instruction=instruction, query=query, passage=passage, nuggets=str(nuggets)))
