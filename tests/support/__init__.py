"""What the tests share: builders, fakes of vendors' servers, fixtures and the paths of the repository
(`support.paths`). Every test module imports them the one way, `from support.helpers import cli` (tests/ is on
sys.path: pytest puts the folder of tests/conftest.py there), wherever in tests/ it lies."""
