"""MIRAGE (Xiong et al., ACL Findings 2024, Teddy-XiongGZ/MIRAGE): its five medical multiple-choice sets
(MMLU-Med, MedQA-US, MedMCQA, PubMedQA*, BioASQ-Y/N) as YAML tasks reading one benchmark.json, prompted as
the MedRAG toolkit prompts (style.py), open domain (MedRAG retrieves from PubMed, StatPearls, textbooks and
Wikipedia), scored by src/evaluate.py's accuracy (metrics.py). docs/benchmarks/mirage.md says where to get the file."""
