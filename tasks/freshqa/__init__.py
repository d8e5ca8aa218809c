"""FreshQA (Vu et al., 2023, "FreshLLMs: Refreshing Large Language Models with Search Engine Augmentation";
freshllms/freshqa): its questions of fast-, slow- and never-changing facts and false premises as the YAML
task `freshqa` over the spreadsheet's CSV (style.py: one split, the non-empty answers), open domain (no
passages of its own: closed book, or a retriever over a corpus the user gives), scored by FreshEval
(fresheval.py, the notebooks' few-shot judge, relaxed or strict). docs/benchmarks/freshqa.md says where to get the file."""
