"""What a run cost: model prices, the system's and the judges' cost, the cost per correct answer (`efficiency`) and
their lines in the console."""
