"""RefChecker's two prompts as RAGChecker sends them (amazon-science/RefChecker 0.2.17, which RAGChecker 0.1.9
runs with its defaults: triplet claims, joint checking): `LLM_TRIPLET_EXTRACTION_PROMPT_Q` of
refchecker/extractor/extractor_prompts.py and `JOINT_CHECKING_PROMPT_Q` of refchecker/checker/checker_prompts.py.
Byte for byte (their trailing spaces included, hence the explicit string pieces); tests/test_ragchecker_prompts.py
compares them with prompts rendered by upstream's own code."""

EXTRACTION_PROMPT = (
    "Given a question and a candidate answer to the question, please extract a KG from the candidate answer "
    'condition on the question and represent the KG with triples formatted with ("subject", "predicate", '
    '"object"), each triplet in a line.\n'
    "Please note that this is an EXTRACTION task, so DO NOT care about whether the content of the candidate "
    "answer is factual or not, just extract the triplets from it. Importantly, ensure that the extracted KG "
    "does not contain overlapping or redundant information. Each piece of information should be represented "
    "in the KG only once, and you should avoid creating triplets that are simply the inverse of another "
    'triplet. For example, if you extract the triplet ("John", "owns", "Car"), do not also include ("Car", '
    '"owned by", "John") as it represents the same information in reverse.\n'
    "\n"
    "Clarification on redundancy: First, Do not create triplets that reverse the subject and object to state "
    "the same fact. Next, Ensure each fact is represented uniquely in the simplest form, and avoid creating "
    "multiple triplets that convey the same information.\n"
    "\n"
    "Here are some in-context examples:\n"
    "\n"
    "### Question:\n"
    "Given these paragraphs about the Tesla bot, what is its alias?\n"
    "\n"
    "### Candidate Answer:\n"
    "Optimus (or Tesla Bot) is a robotic humanoid under development by Tesla, Inc. It was announced at the "
    "company's Artificial Intelligence (AI) Day event on August 19, 2021.\n"
    "\n"
    "### KG:\n"
    '("Optimus", "is", "robotic humanoid")\n'
    '("Optimus", "under development by", "Tesla, Inc.")\n'
    '("Optimus", "also known as", "Tesla Bot")\n'
    '("Tesla, Inc.", "announced", "Optimus")\n'
    '("Announcement of Optimus", "occurred at", "Artificial Intelligence (AI) Day event")\n'
    '("Artificial Intelligence (AI) Day event", "held on", "August 19, 2021")\n'
    '("Artificial Intelligence (AI) Day event", "organized by", "Tesla, Inc.")\n'
    "\n"
    "### Question:\n"
    "here is some text about Andre Weiss, how many years was Andre at University of Dijon in Paris?\n"
    "\n"
    "### Candidate Answer:\n"
    "11 years\n"
    "\n"
    "### KG:\n"
    '("Andre Weiss at University of Dijon in Paris", "duration", "11 years")\n'
    "\n"
    "\n"
    "Now generate the KG for the following candidate answer based on the provided question:\n"
    "\n"
    "### Question:\n"
    "{q}\n"
    "\n"
    "### Candidate Answer:\n"
    "{a}\n"
    "\n"
    "### KG:\n"
)

JOINT_CHECKING_PROMPT = (
    "I have a list of claims that made by a language model to a question, please help me for checking "
    "whether the claims can be entailed according to the provided reference which is related to the "
    "question. \n"
    "The reference is a list of passages, and each of the claims is represented as a triplet formatted with "
    '("subject", "predicate", "object").\n'
    "\n"
    "If the claim is supported by ANY passage in the reference, answer 'Entailment'. \n"
    "If NO passage in the reference entail the claim, and the claim is contradicted with some passage in the "
    "reference, answer 'Contradiction'.\n"
    "If NO passage entail or contradict with claim, or DOES NOT contain information to verify the claim, "
    "answer 'Neutral'. \n"
    "\n"
    "Please DO NOT use your own knowledge for the judgement, just compare the reference and the claim to get "
    "the answer.\n"
    "\n"
    "### Question:\n"
    "[QUESTION]\n"
    "\n"
    "### Reference:\n"
    "[REFERENCE]\n"
    "\n"
    "### Claims:\n"
    "[CLAIMS]\n"
    "\n"
    "\n"
    "Your answer should always be only a list of labels, each of the labels is a single word in "
    "['Entailment', 'Neutral', 'Contradiction'], for example, you should output a list like follows:\n"
    "\n"
    "Entailment\n"
    "Neutral\n"
    "Contradiction\n"
    "Neutral\n"
    "\n"
    "\n"
    "DO NOT add explanations or you own reasoning to the output, only output the label list.\n"
)
