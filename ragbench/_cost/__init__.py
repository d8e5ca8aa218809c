"""What a run costs, in one room: model prices and the price table (`prices`), the vendors' list prices shipped with
ragbench (`vendor_prices`, from the data files in price_lists/), traced calls' tokens priced (`token_usage`), the typed shape of a cost as results.json and
run.json hold it (`cost_schema`), each attempt's and the whole run's cost (`run_cost`), `--max-cost`'s cap
(`spending_cap`); results.json's cost sections, each a tally filled sample by sample (`call_cost`: `model_cost` and
`judge_cost`; `efficiency`; `budget`: `budget` and `repeated_work`), their lines (`cost_lines`, `efficiency_lines`)
and `ragbench compare`'s cost table (`cost_table`); the estimate's pilot (`pilot`), its figures of a run from the
examples that ran (`estimate_figures`, with the examples' own lengths in the model's tokens: `estimate_tokens`) and
the estimate with its lines and JSON (`run_estimate`).

Other rooms call it and keep no cost logic: the run meters, caps and assembles with it, and runs the pilot
(ragbench._run.estimate.pilot_run: a run mode given a `Pilot` runs it); the reports, the command line and the viewer
show its lines and tables. It sits below them, above the engines, the scheduler (whose `SpendGate`,
ragbench._scheduler.spend_gate, the cap answers) and the run folder, whose figures it prices; the engines read the
vendors' usage counts (ragbench._engines.hosted.usage_counts) and keep their batch bookkeeping
(ragbench._engines.batches).
"""
