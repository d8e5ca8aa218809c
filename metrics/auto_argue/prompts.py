"""The judge's three yes/no questions, written for ragbench from the paper's description of Auto-ARGUE's judgments
(is the sentence attested by the cited document; does the sentence give a nugget's answer; does an uncited
sentence need a citation): the package's own few-shot prompts could not be read here, so these are not its
prompts and replies to them are not its judgments."""

ATTESTED = (
    "Document:\n{document}\n\nSentence:\n{sentence}\n\n"
    "Is everything the sentence states attested by the document? Answer YES or NO."
)
ANSWERS = (
    "Question: {question}\nAnswer: {answer}\n\nSentence:\n{sentence}\n\n"
    "Does the sentence give this answer to the question? Answer YES or NO."
)
NEEDS_CITATION = (
    "Report request: {request}\n\nSentence of the report:\n{sentence}\n\n"
    "Does the sentence state a fact that needs a citation to a source? Answer YES or NO."
)
