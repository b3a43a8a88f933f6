from typing import Any

from tests.e2e.harness import drop_databases, e2e, webhook_receiver  # noqa: F401 (fixtures for every e2e module)


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    """The stacks' databases, dropped together once every test of the session has run."""
    drop_databases()
