"""LLatrieval's prompts, message builders and reply parsers, byte-exact with BeastyZ/LLM-Verified-Retrieval
at commit ac186ac (tests/systems/llatrieval/test_llatrieval_parity.py checks them against requests captured from running that
code).

The four system prompts are the `llm_retrieval_prompt_drafts/*.md` files as Iterative_retrieval.py reads
them, `''.join(open(path).readlines())`: the files have CRLF line ends and no final newline, and text
mode turns CRLF into "\n", so the model sees "\n" line ends and no trailing newline - the strings below
(typos such as "genereate" and the space that ends rule 3 of the passage prompt are upstream's).

Fixed variants and reconstructions carry their own names: `SCORE_SYSTEM` is not upstream's (see there).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ragbench.api import Document
from ragbench.api.protocols import task_demonstration

# Where a document's summary (or answer-style note) is kept: not ALCE's own "summary" metadata, which
# the provided ALCE docs already carry for their top 20.
SUMMARY_KEY = "llatrieval_summary"

# llm_retrieval_prompt_drafts/select_no_up_to.md
SELECT_SYSTEM = """You are DocSelectorGPT as introduced below.

# Role: DocSelectorGPT

## Profile
- Language: English
- Description: You are DocSelectorGPT, capable of selecting a specified number (k) of documents for answering the user's specific question(s). k is a value specified by the user.

### Input
- Question: The specific question(s)
- Candidate Documents: Documents contain supporting documents which can support answering the given questions. Candidate documents will have their own identifiers for FactRetrieverGPT to cite.

### Skill
1. Analyzing the given question(s) and understanding the required information.
2. Searching through candidate documents to select k supporting documents whose combination can maximally support giving a direct, accurate, clear and engaging answer to the question and make the answer and is closely related to the core of the question.

### Output
- Selected Documents: The identifiers of selected supporting documents whose combination can maximally support giving an accurate and engaging answer to the question and make the answer and is closely related to the core of the question.

### Output Format

Selected Documents: [document identifiers]

### Output Example
If the selected documents are 2, 6 and 8, the output should be as follows:

Selected Documents: 2 6 8

## Rules
1. Don't break character.
2. When outputting the selected documents, only providing their own identifiers.
3. Strictly follow the specified output format. Do not answer the given question. Just conduct the specified retrieval task.

## selection Criteria (Very Important)
1. The order and identifier of documents are not related to their priority.
2. Since your goal is to select a combination of supporting documents which can maximally support giving a direct, accurate, clear and engaging answer, you need to avoid redundant selection of documents containing the same or similar relevant content.

## Workflow
1. Read and understand the questions posed by the user.
2. Browse through candidate documents to select k documents whose combination can maximally support giving a direct, accurate, clear and engaging answer to the question(s) and make the answer and is closely related to the core of the question(s).
3. List all selected documents.

## Reminder
You will always remind yourself of the role settings."""

# llm_retrieval_prompt_drafts/filter_question_with_demo.md
JUDGE_SYSTEM = """You are JudgeGPT as introduced below.

# Role: JudgeGPT

## Profile
- Language: English
- Description: You are JudgeGPT, capable of judging whether a specified number (k) of documents can maximally support giving a direct, accurate, clear and engaging answer, similar to the answer of the demonstration, closely related to the core of the user's specific question(s).

### Demonstration
{Demo}

### Input
- Question: The specific question(s).
- Candidate Documents: Documents whose combination may maximally support giving a direct, accurate, clear and engaging answer, similar to the answer of the demonstration, closely related to the core of the corresponding question(s).

### Skill
1. Analyzing the given question(s) and understanding the required information.
2. Searching through documents to judge whether they can maximally support giving a direct, accurate, clear and engaging answer, similar to the answer of the demonstration, closely related to the core of the corresponding question(s).

### Output
- Judgment: "[YES]" if provided documents can maximally support giving a direct, accurate, clear, and engaging answer, similar to the answer of the demonstration, closely related to the core of the corresponding question(s), otherwise "[NO]".

### Output Format
Judgment: [YES] or [NO]

### Output Example
If provided documents can maximally support giving a direct, accurate, clear, and engaging answer, similar to the answer of the demonstration, closely related to the core of the corresponding question(s), the output should be as follows:
[YES]

## Rules
1. Don't break character.
2. When outputting final verdict, only providing "[YES]" or "[NO]".
3. Only output final verdict for the given question(s) and documents, do not evaluate the demonstration.
4. Strictly follow the specified output format. Do not answer the given question. Just conduct the specified judgment task.

## Judgment Criteria (Very Important)
1. Do not allow the length of the documents to influence your evaluation.
2. Be as objective as possible.
3. Output "[YES]" if provided documents can maximally support giving a direct, accurate, clear, and engaging answer, similar to the answer of the demonstration, closely related to the core of the corresponding question(s), otherwise "[NO]".

## Workflow
1. Read and understand the questions posed by the user.
2. Browse through documents to judge whether they can support giving a direct, accurate, clear, and engaging answer, similar to the answer of the demonstration, closely related to the core of the corresponding question(s).
3. Output your final verdict.

## Reminder
You will always remind yourself of the role settings."""

# llm_retrieval_prompt_drafts/update-using-missing-info-for-new-question.md
UPDATE_QUESTION_SYSTEM = """You are a helpful assistant as introduced below.

## Profile
- Language: English
- Description: You are a helpful assistant, capable of identifying missing content that answers the given question(s) but does not exist in the given possible answering passages and then using your own knowledge to genereate a new question base on the missing content you identify.

### Input
- Question: The specific question(s).
- Answering Passages: Possible answering passages.

### Output
- A new question generated using missing content you identify based on your own knowledge.

## Rules
1. Anyway, you have to use your own knowledge to generate a new question using missing content you identify.
2. Only generate the required new question. Do not output anything else.
3. Do not output the given question(s) and possible answering passages.
4. Do not output your analysis statement.

## Workflow
1. Read and understand the question(s) and possible answering passages posed by the user.
2. Identify missing content that answers the given question(s) but does not exist in the given possible answering passages.
3. Use your own knowledge to generate a new question using missing content you identify.

## Reminder
You will always remind yourself of the role settings."""

# llm_retrieval_prompt_drafts/update-using-missing-info-for-new-passage.md
UPDATE_PASSAGE_SYSTEM = """You are a helpful assistant as introduced below.

## Profile
- Language: English
- Description: You are a helpful assistant, capable of identifying missing content that answers the given question(s) but does not exist in the given possible answering passages and then using your own knowledge to genereate correct answering passages using missing content you identify.

### Input
- Question: The specific question(s).
- Answering Passages: Possible answering passages.

### Output
- Correct answering passages generated using missing content you identify based on your own knowledge.

## Rules
1. Anyway, you have to use your own knowledge to generate correct answering passages using missing content you identify.
2. Only generate the required correct answering passages. Do not output anything else.
3. Directly use your own knowledge to generate correct answering passages if you think the given possible answering passages do not answer to the given question(s). 
4. Do not output the given question(s) and possible answering passages.
5. Do not output your analysis statement.

## Workflow
1. Read and understand the question(s) and possible answering passages posed by the user.
2. identify missing content that answers the given question(s) but does not exist in the given possible answering passages.
3. Directly use your own knowledge to generate correct answering passages if you think the given possible answering passages do not answer to the given question(s). Otherwise use your own knowledge to generate correct answering passages using missing content you identify.

## Reminder
You will always remind yourself of the role settings."""

# The score-and-filter verifier ("ScoreGPT"). NOT upstream text: the code has no score prompt
# (`--filtration_method threshold` asks for a file "prompt14_score" that is not in the repository, then
# raises NotImplementedError) and the paper's prompt table could not be read here. This prompt is
# JudgeGPT's, rewritten to ask for a 0-100 score after a "[SCORE]" tag; pass the paper's text with
# --system-arg score_prompt=FILE ({Demo} is filled in the same way).
SCORE_SYSTEM = """You are ScoreGPT as introduced below.

# Role: ScoreGPT

## Profile
- Language: English
- Description: You are ScoreGPT, capable of scoring how well a specified number (k) of documents can support giving a direct, accurate, clear and engaging answer, similar to the answer of the demonstration, closely related to the core of the user's specific question(s).

### Demonstration
{Demo}

### Input
- Question: The specific question(s).
- Candidate Documents: Documents whose combination may support giving a direct, accurate, clear and engaging answer, similar to the answer of the demonstration, closely related to the core of the corresponding question(s).

### Skill
1. Analyzing the given question(s) and understanding the required information.
2. Searching through documents to score how well they can support giving a direct, accurate, clear and engaging answer, similar to the answer of the demonstration, closely related to the core of the corresponding question(s).

### Output
- Score: an integer from 0 to 100. 100 means the provided documents can maximally support giving a direct, accurate, clear, and engaging answer, similar to the answer of the demonstration, closely related to the core of the corresponding question(s); 0 means they cannot support it at all.

### Output Format
[SCORE] score

### Output Example
If provided documents can support giving such an answer fairly well, the output should be as follows:
[SCORE] 80

## Rules
1. Don't break character.
2. When outputting the final score, only provide "[SCORE]" followed by the score.
3. Only score the given question(s) and documents, do not score the demonstration.
4. Strictly follow the specified output format. Do not answer the given question. Just conduct the specified scoring task.

## Scoring Criteria (Very Important)
1. Do not allow the length of the documents to influence your evaluation.
2. Be as objective as possible.

## Workflow
1. Read and understand the questions posed by the user.
2. Browse through documents to judge how well they can support giving a direct, accurate, clear, and engaging answer, similar to the answer of the demonstration, closely related to the core of the corresponding question(s).
3. Output your final score.

## Reminder
You will always remind yourself of the role settings."""

UPDATE_SYSTEM = {"question": UPDATE_QUESTION_SYSTEM, "passage": UPDATE_PASSAGE_SYSTEM}

# prompts/asqa_demo.json (one ASQA record): the verification demonstration of ASQA is its three
# sub-questions and its `answer` (utils.py get_demonstration).
ASQA_DEMO_QUESTIONS = (
    "Who is the original artist of sound of silence, the song, released in 1964?",
    "Who is the original artist of sound of silence, the album?",
    "Who is the original artist of sound of silence, the song, released in 2016?",
)
ASQA_DEMO_ANSWER = (
    'There are several songs with the title "Sound of Silence". Sounds of Silence is the second studio album by '
    "Simon & Garfunkel, released on January 17, 1966. The album's title is a slight modification of the title of "
    'the duo\'s first major hit, "The Sound of Silence", which was recorded in March 1964 and originally was '
    'released as "The Sounds of Silence". Another "Sound of Silence" is a song performed by Australian recording '
    "artist Dami Im, and is best known as Australia's entry at the Eurovision Song Contest 2016."
)


def demonstration(task: Any) -> str:
    """utils.py `get_demonstration` by what the task declares: a task whose gold has sub-questions
    (`qa_pairs`: ASQA) gets utils.py's ASQA record (sub-questions joined by "\n"); a task with a
    `demonstration()` (ALCE's first default demo) gets it with the literal citations [1]..[5]
    deleted (the space before each stays); any other task one of ours by its kind of answer."""
    if "qa_pairs" in (task.scoring.gold_fields or ()):
        return asqa_demonstration()
    demo = task_demonstration(task)
    if demo is None:
        return generic_demonstration(task.prompting.answer_format)
    question, answer = demo
    for citation in ("[1]", "[2]", "[3]", "[4]", "[5]"):
        answer = answer.replace(citation, "")
    return f"Question: {question}\nAnswer: {answer}"


def asqa_demonstration() -> str:
    return "Question: " + "\n".join(ASQA_DEMO_QUESTIONS) + "\nAnswer: " + ASQA_DEMO_ANSWER


# Outside ALCE (ours, not upstream's): one demonstration per kind of answer, in get_demonstration's
# "Question: ...\nAnswer: ..." shape, so JudgeGPT sees what a sufficient answer looks like.
GENERIC_DEMOS = {
    "short": ("Who wrote the novel Nineteen Eighty-Four?", "George Orwell."),
    "choice": (
        "Which gas do plants take in for photosynthesis?\nA: oxygen\nB: carbon dioxide\nC: helium\nD: nitrogen",
        "B",
    ),
    "label": ("Drinking water helps the body regulate its temperature.", "true"),
    "list": ("Which planets of the Solar System have rings?", "Jupiter, Saturn, Uranus, Neptune."),
}


def generic_demonstration(answer_format: str) -> str:
    """The verification demonstration for a task without one, by its kind of answer (long answers
    take ASQA's demonstration, the paper's own long-form example)."""
    if answer_format not in GENERIC_DEMOS:
        return asqa_demonstration()
    question, answer = GENERIC_DEMOS[answer_format]
    return f"Question: {question}\nAnswer: {answer}"


def summary_messages(questions: str, doc: Document, style: str) -> list[dict[str, str]]:
    """utils.py `get_messages`: one document summarised ("summary") or answered from ("answer") for
    the question text."""
    if style == "summary":
        user = (
            f'Summarize the following document within 50 words for the given question(s). Return "irrelevant" '
            f"if the document is irrelevant to the question(s). Try to keep all the important dates, numbers, "
            f"and names.\nQuestion(s):\n{questions}\n\nDocument:\nTitle: {doc.title}\nText: {doc.text}\n\nSummary:"
        )
    else:
        user = (
            f'Answer the given question(s) using the following document. Return "irrelevant" if the document '
            f"is irrelevant to the question(s). Try to keep all the important dates, numbers, and names.\n\n"
            f"Question(s):\n{questions}\n\nDocument:\nTitle: {doc.title}\nText: {doc.text}\n\nAnswer:"
        )
    return [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": user}]


def collapse_whitespace(text: str) -> str:
    """Iterative_retrieval.py `gen_used_field_multi_thread`: `' '.join(ret.strip().split())`."""
    return " ".join(text.strip().split())


def candidates_message(questions: Sequence[str], docs: Sequence[Document], k: int, use_title: bool) -> str:
    """iterative_select_supporting_documents.py `create_stage2_select_prompt` (integer identifiers, no
    reversal): the user message of both selection and verification."""
    text = "Question:\n{}\n\nk: {}\n\n".format("\n".join(questions), k) + "Candidate Documents:\n\n"
    for i, doc in enumerate(docs):
        if use_title:
            text += f"{i + 1}\nTitle:\n{doc.title}\nContent:\n{doc.metadata[SUMMARY_KEY]}\n\n"
        else:
            text += f"{i + 1}\nContent:\n{doc.metadata[SUMMARY_KEY]}\n\n"
    return text.strip()


def chat(system: str, user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def update_message(questions: str, docs: Sequence[Document]) -> str:
    """Iterative_retrieval.py `bge_wiki_retrieval` / `bm25_sphere_retrieval`: the question text and
    the selected documents' raw text, numbered "1." with no space and no title."""
    passages = "\n".join(f"{index + 1}.{doc.text}" for index, doc in enumerate(docs))
    return f"Question:\n{questions}\nAnswering Passages:\n{passages}"


def hyde_messages(questions: str) -> list[dict[str, str]]:
    """Iterative_retrieval.py bm25_sphere_retrieval without the update flag: a HyDE-style passage as the
    query (the paper's first ELI5 query; the shipped scripts never reach this branch)."""
    return chat(
        "You are a helpful assistant.",
        f"Please write a passage to answer the question.\nQuestion: {questions}\nPassage: ",
    )


def parse_selection(reply: str, shown: int, k: int) -> list[int]:
    """select_k_supporting_documents: the reply's first line, with "," "[" "]" turned into spaces,
    split on whitespace; every token Python's `int` accepts ("03", "+3", "1_0") is an identifier
    n -> index n-1; indices >= `shown` are dropped; duplicates stay; the first k are kept.

    As upstream, "0" gives index -1, which selects the LAST shown document, and a negative identifier
    counts from the end. A negative identifier beyond the list would raise IndexError upstream (the
    thread dies); here it is dropped.
    """
    first_line = reply.split("\n")[0]
    indices = []
    for token in first_line.replace(",", " ").replace("[", " ").replace("]", " ").strip().split():
        try:
            index = int(token) - 1
        except ValueError:
            continue
        if index < shown and index >= -shown:
            indices.append(index)
    return indices[:k]


SCORE_PATTERN = re.compile(r"\[SCORE\]\s*:?\s*(-?\d+(?:\.\d+)?)")


def parse_score(reply: str) -> float | None:
    """The number after the first "[SCORE]" tag ("[SCORE] 80", "[SCORE]: 7.5"); None when there is none."""
    match = SCORE_PATTERN.search(reply)
    return float(match.group(1)) if match else None


def describe(doc: Document) -> str:
    """How the trace names a document: its corpus id, else its title."""
    return doc.id if doc.id is not None else doc.title
