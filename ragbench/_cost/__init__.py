"""What a run costs: model prices and the price table (`prices`), the vendors' list prices shipped with ragbench
(`vendor_prices`, from the data files in price_lists/), the typed shape of a cost as results.json and
run.json hold it (`cost_schema`), each attempt's and the whole run's cost (`run_cost`), `--max-cost`'s cap
(`spending_cap`), and the estimate's figures of a run from the examples that ran (`estimate_figures`, with the
examples' own lengths in the model's tokens: `estimate_tokens`).

It sits below the reports, which price results.json's `model_cost`, `judge_cost` and `efficiency` with it
(ragbench._reports.cost), and the run, which meters and caps its calls with it; above the engines, the scheduler
(whose `SpendGate`, ragbench._values.spend_gate, the cap answers) and the run folder, whose figures it prices.
Not here: the estimate's pilot (ragbench._run.estimate: a run mode given a `Pilot` runs it) and batch bookkeeping
(ragbench._engines.batches: the engines keep it).
"""
