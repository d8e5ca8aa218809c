"""SMART's trajectory format and the agent prompts of its `prompted` mode.

Trajectory strings are those of yueshengbin/SMART @ ad4dcd1 (Apache-2.0): finetune.py's prompt
("<|Instruction|>:\\n{instruction}" + "\\n\\n<|Input|>:\\n{input}" when there is an input), the
"</eoi>\\n\\n" marker its data appends to the input, and the agent blocks of long_data_combine.py
and the released long/short trajectory examples:

  <|Reconstructor|>:\\nSearch(intent; intent)</eor>\\n\\n
  <retrieval>[1] title\\ntext\\n[2] title\\ntext</retrieval>\\n\\n
  <|Locator|>:\\n[Relevant]: [1] title\\nfact\\n[Irrelevant]: [2] Lacking Supporting Facts</eol>\\n\\n
  <|Generator|>:\\nanswer\\n[Cite]: [1]</eog>

The short-trajectory data (one agent per example) writes "<|retrieval|>" and "<|Locator|>\\n"
without the colon; `SHORT` holds those spellings. SMART's TASK_INST (multi_agent/utils.py) gives
the task instructions; the paper's Table 6 words ARC's differently ("Given four answer candidates,
choose the best answer choice."), its Figure 5 shows the utils wording, which is used here.

The prompted mode's reconstructor and locator prompts are derived from the ChatGPT prompts SMART
built its training data with (data_creation/chatgpt_intent_multithreading.py and
chatgpt_fact_multithreading.py; the paper's Tables 9-12). Changes, because at inference there is
no gold answer and nothing parses an explanation: the "Answer:" lines and the word "answer" in the
instructions are dropped, as is "and write an explanation"; typos are kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TypedDict

INSTRUCTION = "<|Instruction|>:\n{instruction}"
INPUT = "\n\n<|Input|>:\n{input}"
END_OF_INSTRUCTION = "</eoi>\n\n"
RECONSTRUCTOR = "<|Reconstructor|>:\n"
GENERATOR = "<|Generator|>:\n"
END_INTENT, END_LOCATOR, END_GENERATOR = "</eor>", "</eol>", "</eog>"


class Spelling(TypedDict):
    """How a trajectory layout writes the retrieval block (its opening and closing) and the Locator's turn."""

    retrieval: tuple[str, str]
    locator: str


LONG: Spelling = {"retrieval": ("<retrieval>", "</retrieval>\n\n"), "locator": "<|Locator|>:\n"}
SHORT: Spelling = {"retrieval": ("<|retrieval|>", "</retrieval>\n\n"), "locator": "<|Locator|>\n"}
SPECIAL_TEXT = ("</eoi>", "</eor>", "</eol>", "</eog>", "</s>", "<retrieval>", "</retrieval>")

SMART_TASK_INSTRUCTIONS = {
    "fever": "Is the following statement correct or not? Say true if it's correct; otherwise say false.",
    "arc_c": "Given some answer candidates, choose the best answer choice.",
    "asqa": (
        "Answer the following question. The question may be ambiguous and have multiple correct answers, "
        "and in that case, you have to provide a long-form answer including all correct answers."
    ),
    "wow": "Given a chat history separated by new lines, generates an informative, knowledgeable and engaging response. ",
}


def instruction_block(instruction: str, task_input: str | None) -> str:
    """The user prompt x of Algorithm 1 in SMART's format, ending with the "</eoi>" marker."""
    text = INSTRUCTION.format(instruction=instruction)
    if task_input:
        text += INPUT.format(input=task_input)
    return text + END_OF_INSTRUCTION


def passages_block(passages: list[tuple[str, str]], spelling: Spelling) -> str:
    """ "<retrieval>[1] title\\ntext\\n[2] ...</retrieval>\\n\\n", numbered 1..k*m."""
    opening, closing = spelling["retrieval"]
    body = "\n".join(f"[{i}] {title}\n{text}" for i, (title, text) in enumerate(passages, 1))
    return opening + body + closing


def parse_intents(text: str) -> list[str]:
    """The intents inside "Search( ... )" (to the last ")"), split at ";" and newlines; without a
    Search( ... ) the whole text is taken. Empty pieces are dropped."""
    text = strip_special(text)
    start = text.find("Search(")
    if start >= 0:
        inner = text[start + len("Search(") :]
        end = inner.rfind(")")
        text = inner[:end] if end >= 0 else inner
    return [piece.strip() for piece in re.split(r"[;\n]", text) if piece.strip()]


class LocatedRecord(TypedDict):
    """A located fact as the trace records it."""

    number: int
    relevant: bool
    title: str
    fact: str


@dataclass
class LocatedFact:
    number: int  # the passage's 1-based position in the retrieval block
    relevant: bool
    title: str
    fact: str

    def to_dict(self) -> LocatedRecord:
        return {"number": self.number, "relevant": self.relevant, "title": self.title, "fact": self.fact}


_LOCATOR_LINE = re.compile(r"\[(Relevant|Irrelevant)\]:?\s*\[(\d+)\]")


def parse_locator(text: str) -> list[LocatedFact]:
    """Locator lines "[Relevant]: [i] title\\nfact ..." (the fact runs to the next rating) and
    "[Irrelevant]: [i] Lacking Supporting Facts"; the colon after the rating is optional."""
    text = strip_special(text)
    marks = list(_LOCATOR_LINE.finditer(text))
    facts = []
    for mark, following in zip(marks, [*marks[1:], None]):
        body = text[mark.end() : following.start() if following else len(text)]
        title, _, fact = body.strip(" ").partition("\n")
        facts.append(LocatedFact(int(mark.group(2)), mark.group(1) == "Relevant", title.strip(), fact.strip()))
    return facts


def locator_block(facts: list[LocatedFact]) -> str:
    """Facts written back in the Locator's own format (the prompted mode's trace)."""
    return "\n".join(
        f"[Relevant]: [{f.number}] {f.title}\n{f.fact}"
        if f.relevant
        else f"[Irrelevant]: [{f.number}] Lacking Supporting Facts"
        for f in facts
    )


_CITED = re.compile(r"\[(\d+)\]")


def split_citations(text: str) -> tuple[str, list[int]]:
    """The Generator's answer and the passage numbers after "[Cite]:" (answer-level citations);
    scoring needs the answer alone, or "[Cite]" would match a gold "C" (spec D.3)."""
    text = strip_special(text)
    answer, marker, cited = text.partition("[Cite]")
    numbers = [int(n) for n in _CITED.findall(cited)] if marker else []
    return answer.strip(), list(dict.fromkeys(numbers))


def strip_special(text: str) -> str:
    for token in SPECIAL_TEXT:
        text = text.replace(token, "")
    return text


def postprocess_answers_closed(output: str, task: str, choices: str | None = None) -> str:
    """SMART utils.postprocess_answers_closed, bugs kept: with choices "A B C D" the last listed
    letter found anywhere in the output wins; for fever "REFUTES" stays "REFUTES", "no" and
    "incorrect" become "no"; "True"/"False" in any case are lowercased."""
    final = None
    if choices is not None:
        for choice in choices.split(" "):
            if choice in output:
                final = choice
    if task == "fever" and output in ("REFUTES", "SUPPORTS"):
        final = "true" if output == "SUPPORTS" else "REFUTES"
    if task == "fever" and output.lower() in ("yes", "no"):
        final = "true" if output == "yes" else "no"
    if task == "fever" and output in ("correct", "incorrect"):
        final = "true" if output == "correct" else "no"
    if task == "fever" and output.lower() in ("true", "false"):
        final = output.lower()
    return output if final is None else final


# --- prompted mode -----------------------------------------------------------------------------

# chatgpt_intent_multithreading.py PROMPT_DICT["NQ"] (Table 10), without "and write an explanation"
INTENT_QUESTION = (
    "Given a question, provide knowledge search intent to help better retrieve the answer from external document "
    "on the web (e.g., Wikipedia). Split the intent with ';'.\n "
    "##\nQuestion: Which magazine was started first Arthur's Magazine or First for Women?\n\n"
    "Search Intent: Arthur's Magazine publication year; First for Women publication year\n\n"
    "##\nQuestion: What is the legal age of marriage, without parental consent or other authorization, in Nebraska?\n\n"
    "Search Intent:  legal age of marriage in Nebraska without parental consent\n\n"
    "##\nQuestion: Californian rock band Lit recorded A Place in the Sun in 1995, but what's their best known song?\n\n"
    "Search Intent: Californian rock band Lit's most famous and popular songs\n\n"
    "##\nQuestion: {input}\n\n"
    "Search Intent:"
)

# PROMPT_DICT["multi"], for multiple-choice tasks (unchanged: it asks for no explanation)
INTENT_CHOICE = (
    "Given a multiple choice question, your task is to rewrite it into a better search query for a retrieval engine "
    "to answer the given question from some web document (e.g., Wikipedia), and state the most central search topic "
    "in the question. The rewrite process can not carry your own preferences for option answers.\n\n "
    "##\nQuestion: A student standing near a campfire feels warmer as the fire grows. Which process most likely "
    "transfers heat from the campfire to the student?\nA: conduction\nB: convection\nC: radiation\nD: transformation\n\n"
    "Search Intent: How does heat transfer from a campfire to a person standing nearby\n\n"
    "##\nQuestion: Stars are\nA: warm lights that float\nB: made out of nitrate\nC: great balls of gas burning "
    "billions of miles away\nD: lights in the sky\n\n"
    "Search Intent: What are stars made of \n\n"
    "##\nQuestion: The density of a red clay brick block is about 2000 kg/m^3. the density of air is 1 kg/m^3. which "
    "of the following has the least mass?\nA: 2 m^3 of brick\nB: 4 m^3 of brick\nC: 6000 m^3 of air\nD: 10,000 m^3 of air\n\n"
    "Search Intent: How to calculate the mass of an object given its density \n\n"
    "##\nQuestion: {input}\n\n"
    "Search Intent:"
)

# chatgpt_fact_multithreading.py PROMPT_DICT["nq"] (Table 9's wording), without the answer
LOCATE_QUESTION = (
    "Given a question and external knowledge passage, your job is to determine whether the passage is relevant to "
    "the question and can provide useful information for obtaining the answer. "
    "If the passage meets this requirement, respond with [Relevant] and extract a useful spans from the passage as "
    "supporting fact to answer the question."
    "The extracted spans consist of complete sentences to make the extracted span understandable standalone. "
    "If the passage does not help answer the question, return [Irrelevant].\n\n"
    "###\nQuestion: when did k9 first appear in doctor who ?\n\n"
    'Passage: K9 is a robot dog acquired by "Doctor Who"s title character in the 1977 serial "The Invisible '
    'Enemy". The first two incarnations of the character travelled alongside the Fourth Doctor (portrayed by Tom '
    "Baker) until 1981. In these stories, K9 proved useful for the powerful laser weapon concealed in his nose, his "
    "encyclopaedic knowledge and his vast computer intelligence. By 1981, each of the two models of K9 which "
    "travelled alongside the Doctor had been left with one of the Doctor's female companions. The character "
    "subsequently transitioned into spin-off territory. Producers hoped K9's popularity with children would launch "
    "the series \n\n"
    "Rating: [Relevant]\n\n"
    'Extracted span: K9 is a robot dog acquired by "Doctor Who"\'s title character in the 1977 serial "The '
    'Invisible Enemy".\n\n'
    "###\nQuestion: when did k9 first appear in doctor who ?\n\n"
    "Passage: Jaeger in the year 5000. K9 subsequently travelled with the Fourth Doctor (Tom Baker) and Leela "
    '(Louise Jameson) as a companion of the Doctor in his adventures in time and space until "The Invasion of '
    "Time\" (1978). In this serial, K9 decides to remain on the Doctor's home planet of Gallifrey with Leela. "
    'Immediately afterwards, "Doctor Who" would introduce a second incarnation of K9, played by the same prop; the '
    'last scene of "The Invasion of Time" shows the Doctor unpacking a box labeled "K9 Mk II". Although the '
    'first incarnation of K9 does not appear again in televised "Doctor\n\n'
    "Rating: [Irrelevant]\n\n"
    "Extracted span: None.\n"
    "###\nQuestion: {input}\n\n"
    "Passage: {text}\n\n"
    "Rating:"
)

# PROMPT_DICT["fever"], for claims (label tasks), without the answer
LOCATE_CLAIM = (
    "Given a fact-checking question and external passage, your job is to determine if the passage is relevant to "
    "the question and can provides fact spans to obtan the answer. "
    "If the passage meets this requirement, respond with [Relevant] and extract a useful span from the passage as "
    "supporting fact to answer the question."
    "The extracted spans consist of complete sentences to make the extracted span understandable standalone. "
    "If the passage does not help answer the question, return [Irrelevant].\n\n"
    "###\nQuestion: Paul Newman won an Academy Award.\n\n"
    "Passage: Actress category. Best Actor winner Paul Newman was the fourth actor to have been nominated for "
    "portraying the same character in two different films, having previously earned a nomination for his role as "
    '"Fast Eddie" Felson in 1961\'s "The Hustler". By virtue of his victory in the Best Actor category, Newman and '
    'wife Joanne Woodward, who won Best Actress for her performance in 1957\'s "The Three Faces of Eve", became the '
    'second married couple to win acting Oscars. "" and "Down and Out in America"s joint win in the Best '
    "Documentary Feature category marked the fourth occurrence of a tie\n\n"
    "Rating: [Relevant]\n\n"
    "Extracted span: By virtue of his victory in the Best Actor category, Newman and wife Joanne Woodward, who won "
    'Best Actress for her performance in 1957\'s "The Three Faces of Eve", became the second married couple to win '
    "acting Oscars. \n\n"
    "###\nQuestion: The Catalyst is by an American bluegrass band.\n\n"
    "Passage:The Catalyst Fire is the second studio album by Australian progressive rock band Dead Letter Circus. It "
    "featured new band members Tom Skerlj and Clint Vincent after founding member and guitarist Rob Maric left the "
    "band at the end of 2012. In 2011, Tom Skerlj was added to the band as a second guitarist and keyboardist and the "
    "band began working on writing new material, hinting that they would follow a similar process to the preceding "
    "album in that completion of the songwriting would occur while the band was recording the album; \"We don't "
    "ever write whole\n\n"
    "Rating: [Irrelevant]\n\n"
    "Extracted span: None.\n\n"
    "###\nQuestion: {input}\n\n"
    "Passage: {text}\n\n"
    "Rating:"
)


def intent_prompt(task_input: str, answer_format: str) -> str:
    template = INTENT_CHOICE if answer_format == "choice" else INTENT_QUESTION
    return template.format(input=task_input)


def locate_prompt(task_input: str, passage: str, answer_format: str) -> str:
    template = LOCATE_CLAIM if answer_format == "label" else LOCATE_QUESTION
    return template.format(input=task_input, text=passage)


def parse_intent_reply(text: str) -> list[str]:
    """The first non-empty line of a prompted reconstructor's reply, split at ";"."""
    for line in text.strip().splitlines():
        line = re.sub(r"^\s*Search Intent:\s*", "", line).strip()
        if line:
            return [piece.strip() for piece in line.split(";") if piece.strip()]
    return []


_SPAN = re.compile(r"Extracted span:\s*(.*)", re.S)


def parse_rating(text: str) -> tuple[bool, str]:
    """A prompted locator's reply: relevant iff "[Relevant]" comes before any "[Irrelevant]"; the
    fact is the text after "Extracted span:" up to a blank line ("None" counts as no span)."""
    relevant_at, irrelevant_at = text.find("[Relevant]"), text.find("[Irrelevant]")
    relevant = relevant_at >= 0 and (irrelevant_at < 0 or relevant_at < irrelevant_at)
    match = _SPAN.search(text)
    span = match.group(1).split("\n\n")[0].split("###")[0].strip() if match else ""
    return relevant, "" if span.rstrip(".").strip().lower() == "none" else span
