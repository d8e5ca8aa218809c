"""A run's models: its engines loaded after the pre-flight, the judges' and the NLI model's handles, each model told by
its files, and the processes engines started ended with the run."""
