"""The judge's yes/no questions, each asked few-shot: two worked examples (one YES, one NO) as earlier turns of the
chat, then the question itself. Written for ragbench from what Auto-ARGUE's paper and README say its judge decides
(the paper: a few-shot prompted judge; the README: whether each cited document supports the sentence, which nugget
it answers, whether an uncited sentence is a negative assertion a nugget confirms, needs a citation, and is the
first occurrence of its statement). The package's own prompts could not be read here: these are not its wording or
its examples, and replies to them are not its judgments."""

from __future__ import annotations

from dataclasses import dataclass

SYSTEM = (
    "You check one sentence of a generated report at a time, as an assessor would. Answer each question with "
    "YES or NO alone."
)


@dataclass(frozen=True)
class Judgment:
    """One yes/no question: its template (`{field}`s filled per call) and its worked examples (fields, verdict)."""

    template: str
    examples: tuple[tuple[dict[str, str], str], ...]

    def messages(self, **fields: str) -> list[dict[str, str]]:
        """The chat: the instruction, each example as a user turn and its verdict, then the question asked."""
        chat = [{"role": "system", "content": SYSTEM}]
        for shown, verdict in self.examples:
            chat += [
                {"role": "user", "content": self.template.format(**shown)},
                {"role": "assistant", "content": verdict},
            ]
        return [*chat, {"role": "user", "content": self.template.format(**fields)}]


ATTESTED = Judgment(
    "Document:\n{document}\n\nSentence:\n{sentence}\n\n"
    "Is everything the sentence states attested by the document? Answer YES or NO.",
    (
        (
            {
                "document": "Ferry timetable\nFrom May the harbour ferry sails every 40 minutes between 7am and 9pm.",
                "sentence": "In summer the harbour ferry leaves every 40 minutes during the day.",
            },
            "YES",
        ),
        (
            {
                "document": "Bakery notice\nThe rye loaf is baked on Tuesdays and Fridays.",
                "sentence": "The bakery's rye loaf has won two regional prizes.",
            },
            "NO",
        ),
    ),
)
ANSWERS = Judgment(
    "Question: {question}\nAnswer: {answer}\n\nSentence:\n{sentence}\n\n"
    "Does the sentence give this answer to the question? Answer YES or NO.",
    (
        (
            {
                "question": "When did the bridge reopen?",
                "answer": "March 2021",
                "sentence": "After two years of repairs the bridge carried traffic again from March 2021.",
            },
            "YES",
        ),
        (
            {
                "question": "Who funded the repairs?",
                "answer": "the county council",
                "sentence": "The repairs cost more than first planned.",
            },
            "NO",
        ),
    ),
)
NEGATIVE = Judgment(
    "Sentence to classify:\n{sentence}\n\n"
    "Is this a negative assertion: does it say that something is not known, was not found, or has no evidence "
    "for it? Answer YES or NO.",
    (
        ({"sentence": "No study has yet measured how far the comet's tail reaches."}, "YES"),
        ({"sentence": "Rainfall in the valley doubled between 2010 and 2020."}, "NO"),
    ),
)
CONFIRMED = Judgment(
    "Known facts (questions and their accepted answers):\n{nuggets}\n\nNegative assertion:\n{sentence}\n\n"
    "Does one of the known facts confirm the negative assertion? Answer YES or NO.",
    (
        (
            {
                "nuggets": "1. Is the cause of the outage known? Answers: the cause has not been identified",
                "sentence": "Nobody has yet found out what caused the outage.",
            },
            "YES",
        ),
        (
            {
                "nuggets": "1. How many staff left in 2023? Answers: 14",
                "sentence": "There is no record of staff leaving in 2023.",
            },
            "NO",
        ),
    ),
)
NEEDS_CITATION = Judgment(
    "Report request: {request}\n\nSentence of the report:\n{sentence}\n\n"
    "Does the sentence state a fact that needs a citation to a source? Answer YES or NO.",
    (
        (
            {
                "request": "What happened to bee colonies in the region last winter?",
                "sentence": "Beekeepers lost about a third of their colonies over the winter.",
            },
            "YES",
        ),
        (
            {
                "request": "What happened to bee colonies in the region last winter?",
                "sentence": "This report looks at colony losses and what beekeepers think caused them.",
            },
            "NO",
        ),
    ),
)
REPEATED = Judgment(
    "Earlier sentences of the report:\n{earlier}\n\nNew sentence:\n{sentence}\n\n"
    "Does an earlier sentence already state what the new sentence states? Answer YES or NO.",
    (
        (
            {
                "earlier": "The library lent 52,000 books last year.\nIts opening hours grew in spring.",
                "sentence": "Last year 52,000 books were borrowed from the library.",
            },
            "YES",
        ),
        (
            {
                "earlier": "The library lent 52,000 books last year.",
                "sentence": "Two new branches opened in the north of the city.",
            },
            "NO",
        ),
    ),
)
