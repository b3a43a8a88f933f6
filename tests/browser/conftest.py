"""The browser tests share the accounts tests' fixtures (live site, no enqueue to a broker)."""

from tests.accounts.conftest import enqueued, site

__all__ = ["enqueued", "site"]
