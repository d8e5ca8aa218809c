"""Package discovery only (everything else is in pyproject.toml).

`tasks/`, `plugins/` and `metrics/` install as `ragbench.tasks`, `ragbench.plugins` and
`ragbench.metrics` (package-dir in pyproject.toml); their sub-packages are found here so a new
benchmark folder needs no packaging edit.
"""

from setuptools import find_packages, setup

MAPPED = ("tasks", "plugins", "metrics")

packages = find_packages(include=["ragbench", "ragbench.*"])
for folder in MAPPED:
    packages += [f"ragbench.{name}" for name in find_packages(include=[folder, f"{folder}.*"])]

setup(packages=packages)
