"""results.json's cost sections: the system's and the judges' cost (`model_cost`, `judge_cost`), the cost per correct
answer (`efficiency`) and their lines in the console, each priced by ragbench._cost.prices."""
