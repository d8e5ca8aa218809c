"""An example third-party ragbench plugin (see README.md).

Kept empty on purpose: ragbench imports `ragbench_plugin_example.plugin` (and therefore this
file) on every `ragbench list`, so nothing heavy may be imported here.
"""

__version__ = "0.1.0"
