"""What a run costs: model prices and the price table (`prices`), the typed shape of a cost as results.json and
run.json hold it (`cost_schema`), each attempt's and the whole run's cost (`run_cost`) and `--max-cost`'s cap
(`spending_cap`).

It sits below the reports, which price results.json's `model_cost`, `judge_cost` and `efficiency` with it
(ragbench._reports.cost), and the run, which meters and caps its calls with it; above the engines, the scheduler
(whose `SpendGate`, ragbench._values.spend_gate, the cap answers) and the run folder, whose figures it prices.
Not here: the estimate's pilot and its figures (ragbench._run.estimate: the pilot is a run mode, and its figures'
intervals are the reports' bootstrap) and batch bookkeeping (ragbench._engines.batches: the engines keep it).
"""
