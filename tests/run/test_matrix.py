"""The system x task matrix: every built-in system on every kind of built-in task, offline, with known numbers.

Tasks on which systems behave alike are grouped from the registry (tests/support/matrix_groups.py: the reader of
the records, the prompting, whether the examples carry documents, the metrics and their options; 48 of
the YAML tasks share FlashRAG's prompt style). Every system runs on each group's representative, and
each other task of a group runs once, with vanilla: a dropped cell (system, task) stands for the kept cell
(system, its representative). A representative cell's id names the tasks it stands for after "+"; another
task's cell names its representative after "~" (python tests/support/matrix_groups.py prints the groups). The
expected values below are kept for every cell, so that any member of a group can be its representative.

Each cell runs on small upstream-format data (tests/support/matrix_fixtures.py) with a scripted model that gives
the gold answer to the first example and a wrong one (sharing no word with the gold) to the second, a
scripted NLI judge that entails unless the premise is the wrong answer, and a CRAG judge that finds every
non-exact answer wrong. On the open-domain tasks, whose examples carry no documents, the systems that
search get a bm25 index of a small corpus (built once per session); on the multi-hop distractor tasks
those that search again with queries of their own (LLatrieval, SMART) get example_bm25 over each
example's paragraphs. The metric values each cell must report are worked out by hand below from the
fixture records; a cell the registry or the system refuses fails unless INTENDED_REFUSALS lists it."""

from __future__ import annotations

import sys

import pytest

from conftest import plugins_read_once
from ragbench.api import ConfigError
from ragbench.testing import run_eval
from support.helpers import samples
from support.matrix_fixtures import FLASHRAG_TASK_FILES, OUTSIDE, TASK_DATA, build_corpus_index, cell_config
from support.matrix_groups import builtin, task_groups

REGISTRY = plugins_read_once()
SYSTEMS = builtin(REGISTRY, "systems")
TASKS = builtin(REGISTRY, "tasks")
GROUPS = task_groups(REGISTRY, TASKS)  # representative -> the other tasks of its group
ONCE = "vanilla"  # the system that runs each task that is not a representative

# (system, task) -> the reason the cell is refused before the run (a substring of the one-line error).
# REPLUG mixes every passage prompt's next-token logits, which only the hf engine gives.
INTENDED_REFUSALS: dict[tuple[str, str], str] = {
    **{("replug", task): "which the scripted engine cannot give" for task in TASKS},
    # CRAG-MM's query-rewrite agent sends that benchmark's prompts and cut
    **{("crag_mm_rewrite", task): "runs on the CRAG-MM tasks" for task in TASKS if not task.startswith("crag_mm")},
    # `traced` scores a trace file an application exported (`ragbench score --traces`, tests/apps/test_trace_files.py
    # runs it on the tasks); without one named it is refused in one line
    **{("traced", task): "system traced needs --system-arg path=" for task in TASKS},
}
# ViDoRe's corpus is its pages (images): a system that retrieves is refused a text retriever (the cells' bm25 over the
# Varn corpus), which would find no page; a cell refused for a reason of its own says both, a line each (the page
# retrievers run in tests/tasks/beir/test_beir_vidore*.py). selfrag and smart retrieve as their options say.
PAGE_REFUSALS: dict[tuple[str, str], str] = {
    (system, "vidore"): "its corpus is the dataset's pages"
    for system in SYSTEMS
    if REGISTRY.load("systems", system).declares.retrieves or system in ("selfrag", "smart")
}

HALF = {"match": 0.5, "selfrag_match": 0.5, "match_normalized": 0.5, "em": 0.5, "f1": 0.5}
CRAG = {
    "accuracy": 0.5,
    "hallucination": 0.5,
    "missing": 0.0,
    "score": 0.0,  # score = accuracy - hallucination
    "exact_accuracy": 0.5,  # the gold answer matches exactly; the wrong one goes to the judge, which says no
    "score_h": None,
    "human_accuracy": None,  # crag_human's human grade on the judge's scales: none without a predictions file
    "human_score": None,
}  # human labels only come with predictions files
# CRAG-MM, both egocentric: the right answer an exact match, the wrong one judged wrong (a hallucination):
# truthfulness (2 * 1 + 0) / 2 - 1 = 0; two one-turn conversations 1 and -1, or one of two turns 1/2 - 1/2: 0
CRAG_MM = {
    "accuracy": 0.5,
    "exact_match": 0.5,
    "missing": 0.0,
    "hallucination": 0.5,
    "truthfulness": 0.0,
    "truthfulness_score": 0.0,
    "multi_turn_score": 0.0,
    "ego_truthfulness_score": 0.0,
    "ego_multi_turn_score": 0.0,
}
# ASQA, first record right: its first long answer, "[1]" before each '.': 17 words; 2 of its 3 qa_pairs
# (Mawsynram, Lloró; not Cherrapunji/Sohra) are in it; ROUGE-Lsum 100 against that long answer. Punkt ends a
# sentence at the question's "?'" so the output has 3 sentences, 2 citing [1] (entailed): recall 2/3,
# precision 2/2. Second record "zzz": 1 word, no answer, ROUGE 0, no citation (recall 0, precision 0).
# citation_f1 is the F1 of the mean recall and precision: 2 * 33.3 * 50 / 83.3 = 40.
ASQA = {
    "length": 9.0,
    "str_em": 100 / 3,
    "str_hit": 0.0,
    "rougeLsum": 50.0,
    "rougeLsum_bootstrap_mid": 50.0,
    "citation_rec": 100 / 3,
    "citation_prec": 50.0,
    "citation_f1": 40.0,
}
# QAMPARI, first right: its 7 answers, each cited: 15 words, 7 predictions all gold (P = R = F1 = 100, top-5
# as well), 7 statements entailed by [1]; second "zzz": 1 word, 1 wrong prediction, no citation.
QAMPARI = {
    "length": 8.0,
    "qampari_prec": 50.0,
    "qampari_rec": 50.0,
    "qampari_rec_top5": 50.0,
    "qampari_f1": 50.0,
    "qampari_f1_top5": 50.0,
    "num_preds": 4.0,
    "citation_rec": 50.0,
    "citation_prec": 50.0,
    "citation_f1": 50.0,
}
# ELI5, first right: its 3 claims, each cited: 11 + 9 + 4 = 24 words, equal to the reference answer (ROUGE
# 100), every claim entailed; second "zzz": 1 word, no claim entailed (the NLI judge's "0"), no citation.
ELI5 = {
    "length": 12.5,
    "rougeLsum": 50.0,
    "rougeLsum_bootstrap_mid": 50.0,
    "claims_nli": 50.0,
    "citation_rec": 50.0,
    "citation_prec": 50.0,
    "citation_f1": 50.0,
}
# OmniEval, first right "5年" (jieba: 5 / 年): Rouge-1/2/L F 2PR/(P+R+1e-8) as rouge-chinese computes it, char
# F1 1, EM 1/2 (averaged over the two answer forms "5年", "五年"); second "zzz": 0 everywhere. No documents are
# shown on these records, so MAP/MRR have nothing to score.
ROUGE_HALF = 2 / (2 + 1e-8) / 2  # equal texts' F as rouge-chinese and the rouge package compute it, halved
OMNIEVAL = {
    "rouge_1": ROUGE_HALF,
    "rouge_2": ROUGE_HALF,
    "rouge_l": ROUGE_HALF,
    "f1": 0.5,
    "em": 0.25,
    "map": None,
    "mrr": None,
}

# The open-domain and multi-hop QA sets (tasks/open_qa), on their samples (tests/data/open_qa): the first
# record's gold ("Ansgar Pell", "a pell", "Trask") and "zzz": 1/2 for every answer metric (HotpotQA's F1
# too: its yes/no rule gives "zzz" against the gold "yes" the 0 token F1 gives).
QA_HALF = {"em": 0.5, "f1": 0.5, "cover_em": 0.5}  # SQuAD F1: NQ-open, TriviaQA, WebQuestions, MuSiQue
HOTPOT_F1_HALF = {"em": 0.5, "hotpot_f1": 0.5, "cover_em": 0.5}  # HotpotQA, 2Wiki, the FlashRAG forms
SUPPORT_KEYS = ("support_recall", "support_precision", "support_f1", "support_em")


def support(*records: tuple[float, float, float, float]) -> dict[str, float]:
    """Supporting-passage values of a cell: the mean over its records of each one's (recall, precision, F1,
    EM), worked out by hand from the passages the system showed and the record's supporting ones."""
    return dict(zip(SUPPORT_KEYS, (sum(values) / len(records) for values in zip(*records))))


# Per record (recall, precision, F1, EM): nothing shown; one passage shown, one of the 2 supporting ones;
# the 2 supporting ones shown, nothing else.
NONE, HALF_OF_ONE, SAME = (0, 0, 0, 0), (1 / 2, 1, 2 / 3, 0), (1, 1, 1, 1)


def all_of(k: int) -> tuple[float, float, float, float]:
    """Both supporting passages among k shown: precision 2/k, F1 2 * (2/k) / (1 + 2/k) = 4 / (k + 2)."""
    return 1, 2 / k, 4 / (k + 2), 0


# The records (supporting passages starred; paragraphs in the file's order):
#   HotpotQA   1 "Which village was the founder of Olm born in?"   Olm*, Varn, Ansgar Pell*, Kiribati Sound
#              2 "Are Olm and Evermouth both on the island of Varn?"   Olm*, Evermouth*, Trask, Kiribati Sound
#   2Wiki      1 "Where was the founder of Olm born?"   Olm*, Ansgar Pell*, Evermouth, Varn
#              2 "Which town was founded earlier, Olm or Evermouth?"   Trask, Olm*, Evermouth*, Kiribati Sound
#   MuSiQue    1 "Where was the person who founded Olm born?"
#                0 Varn, 1 Olm*, 2 Kiribati Sound, 3 Ansgar Pell*, 4 Trask
#              2 "When was the capital of Varn founded?"   0 Evermouth*, 1 Trask, 2 Varn*, 3 Olm, 4 Ansgar Pell
#   The corpus tasks search the 6-passage Varn corpus (bm25, Lucene stopwords, Porter stems: "founder" is
#   not "found"); hotpotqa_fullwiki's records are HotpotQA's, musique_flashrag's are MuSiQue's (by title).
#   A search returns only the passages that hold a word of its query, 4 of the 6 for each question:
#     HotpotQA 1 (which, village, founder, olm, born): Olm*, Ansgar Pell*, Trask, Kiribati Sound
#              2 (olm, evermouth, both, island, varn): Olm*, Varn, Evermouth*, Kiribati Sound
#     MuSiQue  1 (where, person, who, found, olm, born): Olm*, Ansgar Pell*, Evermouth, Kiribati Sound
#              2 (when, capital, varn, found): Olm, Varn*, Evermouth*, Kiribati Sound
# Nothing shown (closed_book; recorded on the corpus tasks, whose examples have no document to record)
# scores 0. vanilla shows top_n of the task (10 HotpotQA and 2Wiki: all 4 paragraphs; 20 MuSiQue: all 5;
# fullwiki 10 and musique_flashrag 5: the 4 passages the search returns, both supporting ones among them).
NOTHING_SHOWN = support(NONE, NONE)
EXPECTED_OPEN_QA: dict[str, dict[str, float | None]] = {
    "nq_open": QA_HALF,
    "triviaqa": QA_HALF,
    "webquestions": QA_HALF,
    "nq_open_flashrag": HOTPOT_F1_HALF,
    "triviaqa_flashrag": HOTPOT_F1_HALF,
    "webquestions_flashrag": HOTPOT_F1_HALF,
    **{
        task: {**HOTPOT_F1_HALF, **NOTHING_SHOWN}
        for task in (
            "hotpotqa_distractor",
            "hotpotqa_distractor_flashrag",
            "hotpotqa_fullwiki",
            "2wikimultihopqa",
            "2wikimultihopqa_flashrag",
            "musique_flashrag",
        )
    },
    "musique": {**QA_HALF, **NOTHING_SHOWN},
    # its shipped corpus is not searched here (retriever none: cell_config): nothing shown
    "fictional_multihop": {"em": 0.5, "f1": 0.5, **NOTHING_SHOWN},
}
# The rest of FlashRAG's collection (tasks/flashrag), two records each (tests/data/flashrag): the first's gold (its
# first answer; a multiple-choice set's right choice's text; "yes" on BoolQ and StrategyQA, "SUPPORTS" on FEVER;
# CuratedTREC's first gold is a pattern matching itself) and "zzz": 1/2 for every answer metric. ROUGE: the first
# gold has two words or more (a one-word text has no bigram, rouge-2 0; DomainRAG's, in Chinese, three jieba words),
# the rouge package's (DomainRAG: rouge-chinese's) F of equal texts.
FLASHRAG_ROUGE = {"rouge_1": ROUGE_HALF, "rouge_2": ROUGE_HALF, "rouge_l": ROUGE_HALF}
FLASHRAG_QA = {**HOTPOT_F1_HALF, "precision": 0.5, "recall": 0.5}
FLASHRAG_LONG = (
    "msmarco_qa_flashrag",
    "narrativeqa_flashrag",
    "wikiqa_flashrag",
    "asqa_flashrag",
    "eli5_flashrag",
    "wikipassageqa_flashrag",
    "wikiasp_flashrag",
    "wow_flashrag",
    "domainrag_flashrag",
)
EXPECTED_FLASHRAG = {
    task: {**FLASHRAG_QA, **(FLASHRAG_ROUGE if task in FLASHRAG_LONG else {})} for task in FLASHRAG_TASK_FILES
}
HOTPOT = ("hotpotqa_distractor", "hotpotqa_distractor_flashrag")
SEARCHING_TOP_5 = (
    "r1_searcher",
    "search_r1",
    "autorefine",
    "simple_deep_searcher",
    "corag",
    "rearag",
    "rqrag",
    "search_agent",
)
# The report systems show the question's top 20 (plan_search_write: its scripted plan is the question, searched top 5):
# every paragraph of a distractor example and the 4 corpus passages, both supporting ones among them
REPORT_SYSTEMS = ("report_rag", "plan_search_write")
TWOWIKI = ("2wikimultihopqa", "2wikimultihopqa_flashrag")
FLASHRAG_ITERATIVE = ("iter_retgen", "ircot", "ircot_fixed", "self_ask", "self_ask_fixed", "flare")
FLASHRAG_SEARCH_ONCE = ("sure", "sure_fixed", "skr", "adaptive_rag")  # skr, adaptive_rag: their retrieving route
FLASHRAG_TOP_5 = FLASHRAG_ITERATIVE + FLASHRAG_SEARCH_ONCE
TOP_PASSAGE = ("selfrag", "flashrag_mm")  # each shows the first passage its search of the question finds
# recorded and the applications (OUTSIDE: outputs made outside ragbench) show the first paragraph, which the distractor
# tasks' search finds
FIRST_PASSAGE = (*OUTSIDE, *TOP_PASSAGE)
SUPPORT_OVERRIDES: dict[tuple[str, str], dict[str, float]] = {
    **{("vanilla", task): support(all_of(4), all_of(4)) for task in HOTPOT + TWOWIKI},
    ("vanilla", "musique"): support(all_of(5), all_of(5)),
    **{("vanilla", task): support(all_of(4), all_of(4)) for task in ("hotpotqa_fullwiki", "musique_flashrag")},
    # FlashRAG's iterative methods, and those that search the question once (SuRe; SKR and Adaptive-RAG on their
    # retrieving route), show FlashRAG's top 5 (IRCoT its pool of them): every paragraph of a 4-paragraph
    # distractor example (HotpotQA, 2Wiki) or of a 5-paragraph MuSiQue one, the 4 passages a search of the
    # question returns on fullwiki and musique_flashrag; the supporting pair is among them in both records (flare:
    # its one search, the question)
    **{
        (system, task): support(all_of(4), all_of(4))
        for system in FLASHRAG_TOP_5
        for task in HOTPOT + TWOWIKI + ("hotpotqa_fullwiki", "musique_flashrag")
    },
    **{(system, "musique"): support(all_of(5), all_of(5)) for system in FLASHRAG_TOP_5},
    # Iter-RetGen shows its last round's search, the question and the round before's answer: on musique_flashrag the
    # first record's "Trask" adds the Trask passage to the question's 4, so it shows 5 (the second's "zzz" adds none)
    ("iter_retgen", "musique_flashrag"): support(all_of(5), all_of(4)),
    # recorded: the predictions file records each example's first paragraph (HotpotQA Olm, Olm; 2Wiki Olm,
    # Trask; MuSiQue 0 Varn, 0 Evermouth). selfrag answers from each passage and keeps the best answer: the
    # scripted model's answers score alike, so the first passage retrieved - the same paragraph on the
    # distractor tasks; on the corpus, the question's top passage (fullwiki: Ansgar Pell - "village",
    # "born" - and Evermouth - two "evermouth", "varn", "island"; musique_flashrag: Olm - "founded", two
    # "olm" - and Evermouth - "capital", "varn", "founded").
    # flashrag_mm shows its search of the question's top 1 (no picture to search by), the same passage.
    **{(system, task): support(HALF_OF_ONE, HALF_OF_ONE) for system in FIRST_PASSAGE for task in HOTPOT},
    **{(system, task): support(HALF_OF_ONE, NONE) for system in FIRST_PASSAGE for task in TWOWIKI},
    **{(system, "musique"): support(NONE, HALF_OF_ONE) for system in FIRST_PASSAGE},
    **{
        (system, task): support(HALF_OF_ONE, HALF_OF_ONE)
        for system in TOP_PASSAGE
        for task in ("hotpotqa_fullwiki", "musique_flashrag")
    },
    # llatrieval shows its selection: the scripted selector keeps documents 1 and 2 of the first window, and
    # every later window starts with that selection, so it shows the question's top 2 (example_bm25 on the
    # distractor tasks, the corpus on the others). Each is the supporting pair, but fullwiki's second,
    # where "island" and two "varn" put Varn before Olm (two "olm", one "varn"): {Evermouth, Varn}.
    #   HotpotQA 1 Ansgar Pell ("village", "born"), Olm (two "olm"; Kiribati Sound has one); 2 Evermouth,
    #   Olm. 2Wiki 1 Olm, Ansgar Pell ("born"); 2 Olm ("town", "founded", two "olm"), Evermouth ("founded",
    #   two "evermouth"). MuSiQue 1 Olm, Ansgar Pell ("born", in 1 of 5 paragraphs, outranks Kiribati
    #   Sound's "olm", in 2); 2 Evermouth ("capital", "varn", "founded"), Varn ("capital", two "varn").
    **{("llatrieval", task): support(SAME, SAME) for task in HOTPOT + TWOWIKI + ("musique", "musique_flashrag")},
    ("llatrieval", "hotpotqa_fullwiki"): support(SAME, (1 / 2, 1 / 2, 1 / 2, 0)),
    # smart shows the top 3 per search intent. On the distractor tasks (example_bm25, ties in the file's
    # order) its intent is the scripted answer: "Trask" (only Ansgar Pell has it, then the first two others),
    # "zzz" (no passage has it: the first three). HotpotQA 1 {Ansgar Pell, Olm, Varn}, 2 {Olm, Evermouth,
    # Trask}; 2Wiki 1 {Ansgar Pell, Olm, Evermouth}, 2 {Trask, Olm, Evermouth}: each 2 of 2 among 3. MuSiQue
    # 1 {4 Trask (two "trask"), 3 Ansgar Pell, 0 Varn}: 1 of 2 among 3, F1 2 * (1/3 * 1/2) / (5/6) = 2/5;
    # 2 {0, 1, 2}: 2 of 2 among 3. On the corpus tasks its intent is the question (matrix_fixtures.
    # reconstructor_rules): fullwiki 1 {Ansgar Pell, Olm, Trask}, 2 {Evermouth, Varn, Olm}; musique_flashrag
    # 1 {Olm, Ansgar Pell, Evermouth}, 2 {Evermouth, Varn, Olm}: each 2 of 2 among 3.
    **{
        ("smart", task): support(all_of(3), all_of(3))
        for task in HOTPOT + TWOWIKI + ("hotpotqa_fullwiki", "musique_flashrag")
    },
    ("smart", "musique"): support((1 / 2, 1 / 3, 2 / 5, 0), all_of(3)),
    # The systems that search as they reason search the question (matrix_fixtures.searching_rules), top 5
    # (CoRAG four times, the same five; support counts a set; RQ-RAG shows its chosen path's one search,
    # matrix_fixtures.rqrag_rules) or, o2_searcher and search_r1_own, top 3. Top 5 shows every
    # paragraph of the distractor tasks (4; MuSiQue 5) and the 4 corpus passages the search returns, both
    # supporting ones among them (they are in the top 3). The question's top 3 hold both supporting ones: on the
    # distractor tasks llatrieval's top 2 (above) are the pair; on the corpus tasks they are smart's three.
    **{
        (system, task): support(all_of(4), all_of(4))
        for system in SEARCHING_TOP_5 + REPORT_SYSTEMS
        for task in HOTPOT + TWOWIKI + ("hotpotqa_fullwiki", "musique_flashrag")
    },
    **{(system, "musique"): support(all_of(5), all_of(5)) for system in SEARCHING_TOP_5 + REPORT_SYSTEMS},
    **{
        (system, task): support(all_of(3), all_of(3))
        for system in ("o2_searcher", "search_r1_own")
        for task in HOTPOT + TWOWIKI + ("musique", "hotpotqa_fullwiki", "musique_flashrag")
    },
}

# KILT (tasks/kilt), on two records in KILT's format (matrix_fixtures.KILT_RECORDS) whose outputs each name one
# page, Olm (90001) then Varn (90002), over the KILT corpus sample: the right answer, then "zzz" (FEVER: the other
# label), give 1/2 for accuracy, EM, F1 and ROUGE-L (the rouge package's F, 2PR/(P+R+1e-8)). Each question's
# top passage is its gold page's (Olm: "founded", "fishing", "town", "olm"; Varn: "capital", "varn", where Olm
# has only "varn"; FEVER's claims alike), and every system that searches shows it first: R-precision 1 (one
# gold page), recall@5 1, so the KILT-scores keep the first record's downstream 1: 1/2. SMART's closed-answer
# rules, written for PubHealth's true/false, would make FEVER's "SUPPORTS" "true": not applied here. Nothing shown (closed_book; recorded, whose predictions file
# records the examples' own documents: none) is R-precision 0, and every KILT-score 0.
KILT_DOWNSTREAM = {"accuracy": 0.5, "em": 0.5, "f1": 0.5, "rougel": ROUGE_HALF}
KILT = {
    **KILT_DOWNSTREAM,
    "rprec": 1.0,
    "recall_at_5": 1.0,
    **{f"kilt_{key}": value for key, value in KILT_DOWNSTREAM.items()},
}
KILT_NOTHING_SHOWN = {"rprec": 0.0, "recall_at_5": 0.0, **{f"kilt_{key}": 0.0 for key in KILT_DOWNSTREAM}}
KILT_TASKS = [task for task in TASKS if task.startswith("kilt_")]
# MultiHop-RAG (tasks/multihop_rag), on two queries in its format (matrix_fixtures.multihop_rag), each with two
# evidence facts in two of the three articles of its corpus sample, one chunk per article: the right answer
# ("Ansgar Pell" shares a word with the gold), then "zzz" (no word of "No"): accuracy 1/2. Each query's two
# evidence articles are the only ones bm25 scores above 0, so every system that searches shows them first, at
# ranks 1 and 2: both facts found, Hits@4 and Hits@10 1, MRR@10 1/1, MAP@10 (1/1 + 1/2) / 2 facts = 3/4.
# Nothing shown (closed_book; recorded, whose predictions file records the examples' own documents: none):
# every retrieval value 0 (neither is a null query, so both are scored). Self-RAG's short form shows only the
# passage whose answer it keeps, the top one: one fact of two at rank 1, MAP@10 (1/1) / 2 = 1/2, the rest as above.
MULTIHOP_RAG = {"accuracy": 0.5, "hits_at_4": 1.0, "hits_at_10": 1.0, "map_at_10": 0.75, "mrr_at_10": 1.0}
MULTIHOP_RAG_NOTHING_SHOWN = {"hits_at_4": 0.0, "hits_at_10": 0.0, "map_at_10": 0.0, "mrr_at_10": 0.0}

# BEIR (tasks/beir), on its folder tests/data/beir (five documents; q1 and q2 in qrels/test.tsv, q3 only in dev: left
# out). bm25 over its corpus.jsonl ranks for q1 ("Who founded the fishing town of Olm?") d1 (founded, fishing, town,
# Olm) then d5 (Olm), and for q2 ("What is the capital of Varn?") d2 (capital, Varn) first; every other document
# shares at most "Varn" with q2, nothing with q1, and none is relevant. Graded gains, log2(rank + 1) discounts:
# q1 (d1: 1, d5: 2) shows d1, d5: nDCG@1 1/2 (ideal: d5's 2), nDCG@3+ (1 + 2/log2 3) / (2 + 1/log2 3) = 0.85972,
# MAP@1 (1/1) / 2 relevant, MAP@3+ (1/1 + 2/2) / 2 = 1, Recall@1 1/2, Recall@3+ 1, P@k 2/k (P@1 1), MRR 1.
# q2 (d2: 1, d4: 0) shows d2 first: 1 everywhere, P@k 1/k. Means below. Nothing shown (closed_book; recorded, whose
# predictions file records the examples' own documents: none): every value 0. Self-RAG's short form shows only
# the top passage: q1's d1 alone, nDCG@3+ 1 / (2 + 1/log2 3) = 0.38009, MAP 1/2, Recall 1/2, P@k 1/k.
LOG2_3 = 1.584962500721156
# TREC RAG (tasks/trec_rag), over bm25 of its two segmented shards (tests/data/trec_rag, seven segments): each topic's
# judged segments rank first, best grade first (2027497: #2 grade 3, #10 grade 2, #1 grade 1; 300986: the money
# laundering segment, grade 2; 2025's 464 and 31 one relevant segment each, first): nDCG@20 and recall@100 are 1.
# Self-RAG's short form shows the top segment alone: 2027497's grade 3 of the ideal 3, 2, 1: nDCG
# 3 / (3 + 2/log2 3 + 1/2), recall 1/3; every other topic has one relevant segment, shown first.
TREC_RAG = {"ndcg_cut_20": 1.0, "ndcg_cut_100": 1.0, "recall_100": 1.0}
# llatrieval shows the two segments its scripted selector keeps (above): 2027497's grades 3 and 2, not its 1.
# (nDCG@100 is nDCG@20 here: every topic has fewer than 20 judged segments)
TREC_RAG24_TOP_TWO_NDCG = ((3 + 2 / LOG2_3) / (3 + 2 / LOG2_3 + 0.5) + 1) / 2
TREC_RAG24_TOP_TWO = {
    "ndcg_cut_20": TREC_RAG24_TOP_TWO_NDCG,
    "ndcg_cut_100": TREC_RAG24_TOP_TWO_NDCG,
    "recall_100": (2 / 3 + 1) / 2,
}
TREC_RAG24_TOP_ONLY_NDCG = (3 / (3 + 2 / LOG2_3 + 0.5) + 1) / 2
TREC_RAG24_TOP_ONLY = {
    "ndcg_cut_20": TREC_RAG24_TOP_ONLY_NDCG,
    "ndcg_cut_100": TREC_RAG24_TOP_ONLY_NDCG,
    "recall_100": (1 / 3 + 1) / 2,
}
BEIR_Q1_NDCG = (1 + 2 / LOG2_3) / (2 + 1 / LOG2_3)
BEIR = {
    **{f"ndcg_at_{k}": (BEIR_Q1_NDCG + 1) / 2 for k in (3, 5, 10)},
    "ndcg_at_1": 0.75,
    **{f"map_at_{k}": 1.0 for k in (3, 5, 10)},
    "map_at_1": 0.75,
    **{f"recall_at_{k}": 1.0 for k in (3, 5, 10)},
    "recall_at_1": 0.75,
    **{f"p_at_{k}": (2 / k + 1 / k) / 2 for k in (3, 5, 10)},
    "p_at_1": 1.0,
    **{f"mrr_at_{k}": 1.0 for k in (1, 3, 5, 10)},
}
BEIR_TOP_ONLY = {
    **{f"ndcg_at_{k}": (1 / (2 + 1 / LOG2_3) + 1) / 2 for k in (3, 5, 10)},
    **{f"map_at_{k}": 0.75 for k in (3, 5, 10)},
    **{f"recall_at_{k}": 0.75 for k in (3, 5, 10)},
    **{f"p_at_{k}": 1 / k for k in (3, 5, 10)},
}

# RGB (tasks/rgb), on two records per set in its format (matrix_fixtures.RGB_RECORDS), noise_rate 0: every answer
# item of the first record (an alias list's first alias), then "zzz": accuracy 1/2 (items all found, then none),
# no output holds "insufficient information" (rejected 0), and at noise_rate 0 all_rate is the accuracy. On the
# counterfactual sets the first output opens with the system message's factual-error sentence: error_detection
# 1/2, and error_correction, over that one output, 1 (its item is in it).
RGB = {"accuracy": 0.5, "rejected": 0.0, "all_rate": 0.5}
RGB_FACT = {**RGB, "error_detection": 0.5, "error_correction": 1.0}
RGB_TASKS = [task for task in TASKS if task.startswith("rgb_")]

# MIRAGE (tasks/mirage), on two records per set in benchmark.json's format (matrix_fixtures.mirage): the first
# record's gold letter, which evaluate.py's locate_answer reads as a lone letter, then "zzz", in which it finds no
# option and answers A, never the second record's gold (C, D, B, B, C): accuracy 1/2 on every set, whatever the
# documents shown (the metric reads only the output).
MIRAGE_TASKS = [task for task in TASKS if task.startswith("mirage_")]

# FreshQA (tasks/freshqa), on its CSV's two title rows, header and first two test rows (matrix_fixtures.freshqa):
# "Ansgar Pell" (its gold), then "zzz"; the scripted FreshEval judge credits every response but "zzz" (its reply
# read by extract_ratings: "evaluation: correct", then "Thus, the response is not credited."): fresheval 1/2,
# whatever the documents shown (the judge sees the question, the answers and the response only).

# RAGChecker's benchmark (tasks/ragchecker), on two Varn queries in its queries-file layout (matrix_fixtures.ragchecker),
# with the judge's rules of matrix_fixtures.STEP_RULES: every answer and gold answer but "zzz" gives one claim, and
# every check is entailed except against "zzz". First query answered with its gold: every claim correct, recalled and
# found in the chunks (precision, recall, F1, claim recall, context precision and utilization, faithfulness 1; the
# noise, hallucination and self-knowledge shares 0). Second, "zzz": no claim of its own (precision, F1, faithfulness 0),
# its gold claim not in it (recall 0, utilization 0) but in the chunks (claim recall, context precision 1).
RAGCHECKER = {
    "precision": 0.5,
    "recall": 0.5,
    "f1": 0.5,
    "claim_recall": 1.0,
    "context_precision": 1.0,
    "context_utilization": 0.5,
    "noise_sensitivity_in_relevant": 0.0,
    "noise_sensitivity_in_irrelevant": 0.0,
    "hallucination": 0.0,
    "self_knowledge": 0.0,
    "faithfulness": 0.5,
}
# Shown no chunk (closed book, a predictions file whose docs are none): every chunk metric 0, as RAGChecker has it.
RAGCHECKER_NOTHING_SHOWN = {
    "claim_recall": 0.0,
    "context_precision": 0.0,
    "context_utilization": 0.0,
    "faithfulness": 0.0,
}
# BrowseComp-Plus (tasks/browsecomp_plus), on its sample checkout (tests/data/browsecomp_plus/sample): queries 11
# (evidence 101, 102, 103; gold 103) and 12 (evidence 204, 205; gold 205), over the sample's 8-document corpus. The
# judge (matrix_fixtures.STEP_RULES) finds every response but "zzz" correct, each with confidence 80: accuracy 1/2,
# confidence 80, calibration error 0 (under 100 confidences, as evaluate_run.py). Only search_agent calls
# BrowseComp-Plus's tools, once each (its script searches the question, then asks get_document): 0 calls elsewhere. bm25 ranks for 11 102, 101, 103 (the rest score 0) and for 12 204, 205: the question's top 3
# or 5 (the searching systems; smart's intent is the question) hold every evidence and gold document: recall 1.
# Nothing shown (closed_book, recorded): 0. The top passage alone (vanilla's top_n 1, Self-RAG's short form, flashrag_mm): 102
# (1 of 3 evidence, not gold) and 204 (1 of 2, not gold): evidence (1/3 + 1/2) / 2, gold 0. llatrieval's top 2:
# {102, 101} (2 of 3, not gold) and {204, 205} (both, gold): evidence (2/3 + 1) / 2, gold 1/2.
BROWSECOMP_PLUS = {
    "accuracy": 0.5,
    "confidence": 80.0,
    "calibration_error": 0.0,
    "evidence_recall": 1.0,
    "gold_recall": 1.0,
    "search_calls": 0.0,
    "get_document_calls": 0.0,
}
BROWSECOMP_PLUS_OVERRIDES: dict[tuple[str, str], dict[str, float | None]] = {
    **{
        (system, "browsecomp_plus"): {"evidence_recall": 0.0, "gold_recall": 0.0}
        for system in ("closed_book", *OUTSIDE)
    },
    **{
        (system, "browsecomp_plus"): {"evidence_recall": 5 / 12, "gold_recall": 0.0}
        for system in ("vanilla", *TOP_PASSAGE)
    },
    ("llatrieval", "browsecomp_plus"): {"evidence_recall": 5 / 6, "gold_recall": 0.5},
    ("search_agent", "browsecomp_plus"): {"search_calls": 1.0, "get_document_calls": 1.0},
}
# DeepResearch Bench (tasks/deep_research_bench), on two research tasks of its layout asking of Varn
# (matrix_fixtures.deep_research_bench): a report that is the reference report, then WRONG_REPORT ("zzz" 40 times).
# The scripted RACE judge (matrix_fixtures.RACE_RULES) cleans the first to RACE_CLEANED, the second to itself (both
# over 100 characters: judged), then scores the first 8 against the reference's 8 on every criterion (each weighted
# share 8 / (8 + 8) = 1/2, overall too) and the second 0 against 8 (share 0): 1/4 for the overall score and every
# dimension, whatever the documents shown (the judge sees the task, the report and the reference only) and whatever a
# system makes of the report (the cleaner answers any report but the wrong one alike; IRCoT and FLARE keep the
# reference's first sentence, 152 characters, still a report RACE judges).
DEEP_RESEARCH_BENCH = {
    key: 0.25
    for key in ("race", "race_comprehensiveness", "race_insight", "race_instruction_following", "race_readability")
}
# DRAGUN (tasks/dragun), on its sample's two topics (tests/data/dragun): the scripted AutoJudge
# (matrix_fixtures.dragun_rules) judges every rubric answer supported by any report but the wrong one, which it
# judges supports none: supportive 1 and 0, contradictory 0 and 0, whatever the documents shown (the judge sees the
# article, the rubric, the examples and the report only) and whatever a system keeps of the report.
DRAGUN = {"dragun_supportive": 0.5, "dragun_contradictory": 0.0}
# DRAGUN's Task 1 (tasks/dragun/questions.py): the article's title as the one question, then "zzz": the scripted
# AutoJudge finds neither compound and the title very-similar to every rubric question, "zzz" very-different: 1, 0
DRAGUN_QUESTIONS = {"dragun_question_score": 0.5}
# ARGUE (tasks/argue), on two requests asking of Varn (matrix_fixtures.argue_report): the report is the request's
# problem statement, one uncited sentence, which the scripted judge (matrix_fixtures.ARGUE_RULES) says needs a
# citation: sentence support 0 of 1, no nugget asked of (no citation), so coverage 0 and every F1 0; no citation, so
# no citation support or relevance, whatever the documents shown.
ARGUE = {
    **dict.fromkeys(("argue_sentence_support", "argue_nugget_coverage", "argue_nugget_coverage_weighted"), 0.0),
    **dict.fromkeys(("argue_f1", "argue_f1_weighted"), 0.0),
    **dict.fromkeys(("argue_citation_support", "argue_citation_relevance"), None),
}
EXPECTED: dict[str, dict[str, float | None]] = {
    "popqa": HALF,
    "pubhealth": {"match": 0.5, "selfrag_match": 0.5, "label_accuracy": 0.5},  # "false" twice; golds false, true
    "arc_challenge": {"match": 0.5, "selfrag_match": 0.5, "choice_accuracy": 0.5},  # "B" (gold) then "D"
    "squad": {"match": 0.5, "match_normalized": 0.5},  # "Paris" (gold) then "zzz"
    "demo": {k: HALF[k] for k in ("match", "match_normalized", "em", "f1")},  # "Paris" (gold) then "zzz"
    "asqa": ASQA,
    "alce_asqa": ASQA,
    "alce_qampari": QAMPARI,
    "alce_eli5": ELI5,
    "crag_t1": CRAG,
    "crag_t2": CRAG,
    "crag_t3": CRAG,
    "crag_mm_single": CRAG_MM,
    "crag_mm_multi": CRAG_MM,
    "omnieval_auto": OMNIEVAL,
    "omnieval_human": OMNIEVAL,
    **EXPECTED_OPEN_QA,
    **EXPECTED_FLASHRAG,
    **dict.fromkeys(KILT_TASKS, KILT),
    "multihop_rag": MULTIHOP_RAG,
    "beir": BEIR,
    # ViDoRe (tasks/beir/vidore.py) on its V1 sample, by the systems that retrieve nothing: no page shown, every figure
    # 0, no confidence of a ranking, so no nAUC (the page retrievers' values are pinned in tests/tasks/beir/)
    "vidore": {
        **{f"{key}_at_{k}": 0.0 for key in ("ndcg", "map", "recall", "p", "mrr") for k in (1, 3, 5, 10, 20, 50, 100)},
        **{f"confidence_{name}": None for name in ("max", "std", "diff1")},
        **{f"naucs_at_{k}_{name}": None for k in (1, 3, 5, 10, 20, 50, 100) for name in ("max", "std", "diff1")},
    },
    "trec_rag24": TREC_RAG,
    "trec_rag25": TREC_RAG,
    **{task: RGB_FACT if task.endswith("_fact") else RGB for task in RGB_TASKS},
    **dict.fromkeys(MIRAGE_TASKS, {"mirage_accuracy": 0.5}),
    "freshqa": {"fresheval": 0.5},
    "ragchecker": RAGCHECKER,
    "browsecomp_plus": BROWSECOMP_PLUS,
    # FRAMES (tasks/frames), on its test.tsv sample's first two rows (Varn questions): "Ansgar Pell" (its gold), then
    # "zzz"; the auto-rater (matrix_fixtures.STEP_RULES) decides TRUE for every answer but "zzz": 1/2, every reply
    # parsed, whatever the documents shown (the judge sees the question, the answer and the ground truth only)
    "frames": {"llm_judge": 0.5, "llm_judge_unparsed": 0.0},
    "deep_research_bench": DEEP_RESEARCH_BENCH,
    "dragun_report": DRAGUN,
    "dragun_questions": DRAGUN_QUESTIONS,
    "argue_report": ARGUE,
}
NO_CITATIONS = {"citation_rec": 0.0, "citation_prec": 0.0, "citation_f1": 0.0}
# Self-RAG writes "<segment>." and the system makes it "<segment> [1].": only the last of the right answer's
# sentences is cited (ASQA: 1 of 3, ELI5: 1 of 3; the one citation entailed) and the wrong answer "zzz [1]." is
# cited and entailed by its passage: recall (1/3 + 1) / 2, precision (1 + 1) / 2, F1 2 * 66.7 * 100 / 166.7 = 80.
SELF_CITED = {"citation_rec": 200 / 3, "citation_prec": 100.0, "citation_f1": 80.0}
# IRCoT's answer is its last thought, cut at the first "."; FLARE keeps one sentence a round and the scripted model
# answers once: of a right long answer both keep the first sentence. ASQA: "The answer to 'Which is the most rainy
# place on earth?' is Mawsynram [1].", 13 of the 17 words (length (13 + 1) / 2), 1 of 3 qa_pairs (str_em 1/3 / 2),
# ROUGE-Lsum 2 * 13 / (13 + 17) = 86.7 (halved); Punkt splits it at "?'" into 2 sentences, the second cited and
# entailed: recall 1/2, precision 1 (halved: 25, 50), F1 2 * 25 * 50 / 75. ELI5: its first claim, 11 words (length
# (11 + 1) / 2), ROUGE-Lsum 2 * 11 / (11 + 25) (the reference's 24 words are 25 tokens: "Bloomberg's"), halved;
# every claim is still entailed and its one sentence cited (the values of ELI5).
ONE_SENTENCE = ("ircot", "ircot_fixed", "flare")
ASQA_FIRST_SENTENCE = {
    "length": 7.0,
    "str_em": 50 / 3,
    "rougeLsum": 130 / 3,
    "rougeLsum_bootstrap_mid": 130 / 3,
    "citation_rec": 25.0,
    "citation_f1": 100 / 3,
}
ELI5_FIRST_SENTENCE = {"length": 6.0, "rougeLsum": 275 / 9, "rougeLsum_bootstrap_mid": 275 / 9}
# SuRe's answer is candidate (a) with its commas removed (parse_candidates): on QAMPARI, whose list answers are split
# at "," (eval.py's list items, predictions and cited statements alike), the right answer's 7 items become one
# prediction, no gold answer: P = R = F1 = 0 (top-5 too), 1 prediction each (num_preds 1). Its one statement cites
# [1] and is entailed: recall and precision 1 for the first record, as the 7 were; the words and "zzz" are as above.
# (ASQA's and ELI5's metrics read words and Punkt sentences, not commas: their values are those of every system.)
SURE_QAMPARI = {
    **{key: 0.0 for key in ("qampari_prec", "qampari_rec", "qampari_rec_top5", "qampari_f1", "qampari_f1_top5")},
    "num_preds": 1.0,
}
OVERRIDES: dict[tuple[str, str], dict[str, float | None]] = {
    # closed book shows no documents: every "[1]" points at nothing (ALCE scores it 0)
    **{("closed_book", task): NO_CITATIONS for task in ("asqa", "alce_asqa", "alce_qampari", "alce_eli5")},
    **{("selfrag", task): SELF_CITED for task in ("asqa", "alce_asqa", "alce_eli5")},
    **SUPPORT_OVERRIDES,
    **BROWSECOMP_PLUS_OVERRIDES,
    **{(system, task): KILT_NOTHING_SHOWN for system in ("closed_book", *OUTSIDE) for task in KILT_TASKS},
    **{(system, "multihop_rag"): MULTIHOP_RAG_NOTHING_SHOWN for system in ("closed_book", *OUTSIDE)},
    **{(system, "multihop_rag"): {"map_at_10": 0.5} for system in TOP_PASSAGE},
    **{(system, "beir"): dict.fromkeys(BEIR, 0.0) for system in ("closed_book", *OUTSIDE)},
    **{(system, "beir"): BEIR_TOP_ONLY for system in TOP_PASSAGE},
    **{
        (system, task): dict.fromkeys(TREC_RAG, 0.0)
        for system in ("closed_book", *OUTSIDE)
        for task in ("trec_rag24", "trec_rag25")
    },
    **{(system, "trec_rag24"): TREC_RAG24_TOP_ONLY for system in TOP_PASSAGE},
    ("llatrieval", "trec_rag24"): TREC_RAG24_TOP_TWO,
    **{(system, "ragchecker"): RAGCHECKER_NOTHING_SHOWN for system in ("closed_book", *OUTSIDE)},
    # on rgb_en_fact the first sentence is RGB's detection sentence, without the answer after it
    **{(system, "rgb_en_fact"): {"accuracy": 0.0, "all_rate": 0.0, "error_correction": 0.0} for system in ONE_SENTENCE},
    **{(system, task): ASQA_FIRST_SENTENCE for system in ONE_SENTENCE for task in ("asqa", "alce_asqa")},
    **{(system, "alce_eli5"): ELI5_FIRST_SENTENCE for system in ONE_SENTENCE},
    **{(system, "alce_qampari"): SURE_QAMPARI for system in ("sure", "sure_fixed")},
}


# The records whose searches find nothing (by index in the task's file): a bm25 search returns only the passages that
# hold a word of its query, and these questions (and the scripted answers some systems search again: a MIRAGE letter,
# DomainRAG's Chinese gold, "zzz") hold none of their corpus's words, so the system answers shown no passage (every
# system meets one on DomainRAG and on MIRAGE's representative; none of their metrics reads documents). DomainRAG's
# Chinese questions are each one regex token, in no passage of the English Varn corpus; MIRAGE's, against the 4
# passages of tests/data/mirage/medcorp.jsonl (Cobalamin, Scurvy, Facial Nerve, Cholera): MedMCQA's first (bone,
# forearm, thumb, side), PubMedQA's both (walking, blood pressure, hypertension; insulin, sleep), BioASQ's first
# (hemoglobin, oxygen, red blood cells) and MMLU's both (heart chamber, aorta; organelle, ATP); MedQA's two, MedMCQA's
# second ("nerve", "taste") and BioASQ's second ("cholera", "caused") find theirs.
NOTHING_FOUND: dict[str, set[int]] = {
    "domainrag_flashrag": {0, 1},
    "mirage_medmcqa": {0},
    "mirage_pubmedqa": {0, 1},
    "mirage_bioasq": {0},
    "mirage_mmlu": {0, 1},
}


def expected(system: str, task: str) -> dict[str, float | None]:
    return {**EXPECTED[task], **OVERRIDES.get((system, task), {})}


def test_every_builtin_task_has_matrix_data_and_expected_values():
    missing = sorted(set(TASKS) - set(TASK_DATA))
    assert not missing, f"add a data builder for {missing} to TASK_DATA in tests/support/matrix_fixtures.py"
    missing = sorted(set(TASKS) - set(EXPECTED))
    assert not missing, f"add the expected metric values of {missing} to EXPECTED in tests/run/test_matrix.py"


@pytest.fixture(scope="session")
def corpus_index(tmp_path_factory):
    """The bm25 index the open-domain cells search, built once."""
    return build_corpus_index(tmp_path_factory.mktemp("matrix") / "index")


def kept_cells() -> list:
    """Every system on each representative, then vanilla on every other task, with the ids the module
    docstring describes. A system's cells are together: pytest-xdist hands each worker a run of the collection, and
    the first cell of a framework system in a worker imports its framework (LangChain, LlamaIndex, Haystack, DSPy:
    1.5-5 s of CPU each): together, its cells fall to one or two workers, not to each."""
    kept = [
        pytest.param(system, task, id=f"{system}-{'+'.join([task, *others])}")
        for system in SYSTEMS
        for task, others in GROUPS.items()
    ]
    return kept + [
        pytest.param(ONCE, task, id=f"{ONCE}-{task}~{representative}")
        for representative, others in GROUPS.items()
        for task in others
    ]


KEPT = kept_cells()


def test_each_dropped_cell_is_stood_for_by_a_kept_cell_and_every_task_runs():
    kept = {tuple(cell.values) for cell in KEPT}
    representative = {task: rep for rep, others in GROUPS.items() for task in [rep, *others]}
    assert set(representative) == set(TASKS) and {task for _, task in kept} == set(TASKS)
    assert all((system, representative[task]) in kept for system in SYSTEMS for task in TASKS)
    assert {system for system, _ in kept} == set(SYSTEMS)


@pytest.mark.parametrize(("system", "task"), KEPT)
def test_cell_scores_the_scripted_answers_as_worked_out(
    system, task, tmp_path, corpus_index, shared_registry, monkeypatch
):
    if system != ONCE:  # a run's worker processes do its task's work (CRAG's pages), the same for every system:
        monkeypatch.setenv("RAGBENCH_WORKERS", "0")  # vanilla's cell of each task starts them, the others use a thread
        # and its report's plots (CRAG's slice bars, OmniEval's heat maps; ~0.3 s a PNG, four a CRAG cell): the
        # same code for every system, drawn in vanilla's cell; the others' reports are made without them, as where
        monkeypatch.setitem(sys.modules, "matplotlib", None)  # matplotlib is not installed (report.md says so)
    config = cell_config(task, system, tmp_path, corpus_index=corpus_index)
    options = {key: value for key, value in config.items() if key != "tasks"}
    reasons = [r for r in (INTENDED_REFUSALS.get((system, task)), PAGE_REFUSALS.get((system, task))) if r is not None]
    if reasons:
        with pytest.raises(ConfigError) as refused:
            run_eval(config["tasks"], registry=shared_registry, page_cache=None, **options)
        said = str(refused.value).splitlines()  # one line a problem
        assert len(said) == len(reasons) and all(any(r in line for line in said) for r in reasons), said
        assert not (tmp_path / "run").exists()
        return
    results = run_eval(config["tasks"], registry=shared_registry, page_cache=None, **options).results
    assert results["complete"], results.get("failures")
    counts = results["counts"][task]
    assert counts["scored"] == counts["records"] == 2
    details = results["details"][task]
    assert not any(entry.get("n_errors") for entry in details.values()), details
    got = {key: entry["value"] for key, entry in details.items()}
    want = expected(system, task)
    assert set(got) == set(want), f"metric keys changed: got {sorted(got)}, expected {sorted(want)}"
    assert got == {key: pytest.approx(value, abs=1e-9) if value is not None else None for key, value in want.items()}
    if config.get("retriever") not in (None, "none"):  # every example searched what the cell gave it, and showed some
        for record in samples(tmp_path / "run", task):  # unless its searches found nothing (none shown, no padding)
            searches = [step for step in record["trace"] if step["kind"] == "retrieval"]
            assert {step["request"]["retriever"] for step in searches} == {config.get("retriever")}, record["id"]
            if record["index"] in NOTHING_FOUND.get(task, ()):
                assert not any(step["response"]["ids"] for step in searches), record["id"]
                assert "docs" not in record["prediction"], record["id"]
            else:
                assert record["prediction"]["docs"], record["id"]
        if task in NOTHING_FOUND:  # counted, with a warning: a search that found nothing bought nothing
            assert results["repeated_work"][task]["empty_results"] >= len(NOTHING_FOUND[task])
