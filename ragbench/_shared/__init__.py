"""Code that plugins share and no single benchmark owns: answer normalisation and matching, citation
markers, English sentence splitting, the prompt formats of instruction-tuned models, and the generic
reader system that `closed_book` and `vanilla` subclass (tasks declared as YAML files have their own package,
ragbench._yaml_tasks). A task, system or metric that needs one of
these imports it from here, never from another plugin's folder.
"""
