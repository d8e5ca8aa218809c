"""A run's configuration: what the command line (or ragbench.testing's keywords) asked it to do. Its options
in groups, one module each, every option declared once on its group's field (`run_option`: its flag, help,
identity and the commands that offer it); each group read by the part of the run that uses it and checking its own
options (`problems()`): what it runs (`what`, planning), its models (`models`, the engines), its retrieval
(`retrieval`), its judging (`judging`), where it writes (`output`) and what it may take (`limits`,
`option_bounds`); `RunConfig` composes them and names the run (`run_config`).
Here, below every room that reads a run's configuration (the call replay and the pipeline components among them),
it imports only the values (ragbench._values)."""
