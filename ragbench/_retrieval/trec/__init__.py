"""TREC's formats and measures: run files of rankings, and trec_eval's measures through pytrec_eval."""
