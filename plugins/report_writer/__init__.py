"""The report-writing systems: `report_rag` (search the question, write a cited report) and `plan_search_write`
(plan sub-questions, search each, write a cited report), with a report's word limit enforced and counted."""
