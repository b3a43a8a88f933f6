from tests.e2e.harness import e2e, webhook_receiver  # noqa: F401 (fixtures for every e2e module)
