"""hopbench's tests, a package: test modules import as `tests.<folder>.<module>` and share
helpers by plain imports (`from tests.helpers.scripted_llm_server import ScriptedServer`),
never by editing sys.path (tests/test_test_imports.py checks it)."""
