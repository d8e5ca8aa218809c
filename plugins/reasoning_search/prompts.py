"""FlashRAG's prompts and tags of its reasoning-search pipelines, verbatim (they are data): flashrag/pipeline/
reasoning_pipeline.py at commit 1ee5249. FlashRAG formats the user prompts with `str.format` ({question},
SimpleDeepSearcher's {MAX_SEARCH_LIMIT}; "{{YOUR_ANSWER}}" becomes "{YOUR_ANSWER}")."""

# ReasoningPipeline (R1-Searcher), reasoning_pipeline.py:20-30
R1_SEARCHER_USER = (
    "The User asks a question, and the Assistant solves it.\n"
    "The Assistant first thinks about the reasoning process in the mind and then provides the User with the final answer.\n"
    "The output format of reasoning process and final answer are enclosed within <think> </think> and <answer> </answer> tags, "
    'respectively, i.e., "<think> reasoning process here </think>\\n\\n<answer> final answer here </answer>".\n'
    "During the thinking process, the Assistant can perform searching for uncertain knowledge if necessary with the format of "
    '"<|begin_of_query|> search query (only keywords) here <|end_of_query|>". **A query must involve only a single triple**.\n'
    "Then, the system will provide the Assistant with helpful information with the format of "
    '"<|begin_of_documents|> ...search results... <|end_of_documents|>".\n\n'
    "User:{question}\n"
    "Assistant: <think>"
)

# SimpleDeepSearcherPipeline, reasoning_pipeline.py:154-168
SIMPLE_DEEP_SEARCHER_USER = (
    "You are a reasoning assistant with the ability to perform web searches to help "
    "you answer the user's question accurately. You have special tools:\n\n"
    "- To perform a search: write <|begin_search_query|> your query here <|end_search_query|>.\n"
    "Then, the system will search and analyze relevant web pages, then provide you with helpful information in the format <|begin_search_result|> ...search results... <|end_search_result|>.\n\n"
    "Whenever you encounter a topic, fact, or piece of information you are uncertain about or need further details on, please perform a search to gather more accurate, up-to-date, or specific information. You can repeat the search process multiple times if necessary. The maximum number of search attempts is limited to {MAX_SEARCH_LIMIT}.\n\n"
    "Once you have all the information you need, continue your reasoning.\n\n"
    "Remember:\n"
    "- Use <|begin_search_query|> to request a web search and end with <|end_search_query|>.\n"
    "- When done searching, continue your reasoning.\n"
    "- Do not generate <|begin_search_result|> and <|end_search_result|> tags yourself.\n\n"
    "Please answer the following question. You should think step by step to solve it.\n\n"
    "Provide your final answer in the format \\boxed{{YOUR_ANSWER}}.\n\n"
    "Question:\n{question}\n\n"
)

# SearchR1Pipeline, reasoning_pipeline.py:271-278
SEARCH_R1_USER = (
    "Answer the given question. "
    "You must conduct reasoning inside <think> and </think> first every time you get new information. "
    "After reasoning, if you find you lack some knowledge, you can call a search engine by <search> query </search> and it will return the top searched results between <information> and </information>. "
    "You can search as many times as your want. "
    "If you find no further external knowledge needed, you can directly provide the answer inside <answer> and </answer>, without detailed illustrations. For example, <answer> Beijing </answer>. Question: {question}\n"
)

# AutoRefinePipeline, reasoning_pipeline.py:318-327
AUTOREFINE_USER = (
    "You are a helpful assistant who is good at answering questions with multi-turn search engine calling. "
    "To answer questions, you must first reason through the available information using <think> and </think>. "
    "If you identify missing knowledge, you may issue a search request using <search> query </search> at any time. "
    "The retrieval system will provide you with the three most relevant documents enclosed in<documents> and </documents>. "
    "After each search, you need to summarize and refine the existing documents in <refine> and </refine>. You may send multiple search requests if needed. "
    "Once you have sufficient information, provide a concise final answer using <answer> and </answer>.\n"
    "<user> Question: {question} </user>"
)

# O2SearcherPipeline, reasoning_pipeline.py:357-369
O2_SEARCHER_SYSTEM = (
    "As a expert researcher, provide comprehensive key findings for open-ended queries and precise answers to other specific questions. "
    "Each time you receive new information, you MUST first engage in reasoning within the <think> and </think> tags. "
    "After reasoning, if you realize that you lack certain knowledge, you can invoke a SEARCH action with distinct queries (one to five) using the <search>\n<query>QUERY</query>\n<query>QUERY</query>\n</search> format to obtain relevant learnings, "
    "which will be presented between the <learnings> and </learnings> tags.\n "
    "You are allowed to perform searches as many times as necessary. If you determine that no additional external knowledge is required, you can directly present the output within the <answer> and </answer> tags."
)
O2_SEARCHER_USER = """Initial query:{question}"""
O2_SEARCHER_ERROR = """The response you attempted before is invalid. If you plan to execute actions like SEARCH, you need to enclose the SEARCH queries within the <search> and </search> tags. Furthermore, the required queries for the SEARCH action should be placed between the <query> and </query> tags. Moreover, if you wish to present the final output for the initial query, you must wrap the result within the <answer> and </answer> tags.
"""
O2_SEARCHER_LEARNINGS = """Search learnings: <learnings>{learning_str}</learnings>.
"""

# Tags and stop lists, from each pipeline's __init__ (reasoning_pipeline.py:33-71, 170-194, 280-303, 329-353)
R1_SEARCHER_STOP = ("<|im_end|>", "<|endoftext|>", "</answer>", "<|end_of_query|>")
SIMPLE_DEEP_SEARCHER_STOP = ("<|im_end|>", "<|endoftext|>", "<|end_search_query|>")
SEARCH_R1_STOP = (
    "</search>",
    " </search>",
    "</search>\n",
    " </search>\n",
    "</search>\n\n",
    " </search>\n\n",
    "</answer>",
    "</answer>\n",
    "</answer>\n\n",
    "<|endoftext|>",
    "<|im_end|>",
)
# The passages of one search: `_retrieved_docs_to_string` (reasoning_pipeline.py:74-84, 305-313)
R1_SEARCHER_DOC = "({idx})Title: {title} Text: {text}\n"
SEARCH_R1_DOC = "Doc {idx}(Title: {title}) {text}\n"
O2_SEARCHER_STOP = (
    "</search>\n",
    "</search>",
    "</search>\n\n",
    "</answer>",
    "</answer>\n",
    "</answer>\n\n",
    "></search",
)
