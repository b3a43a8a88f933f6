"""What every scenario gets: the running stack, HTTP helpers against it, in-process helpers on the
same database (keys, SQL), the simulators' request logs, and the memory samples."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import requests
from django.db import connection

from bench.stack import BenchStack


@dataclass
class Bench:
    stack: BenchStack
    quick: bool = False
    memory: list[dict[str, Any]] = field(default_factory=list)
    shared: dict[str, Any] = field(default_factory=dict)
    session: requests.Session = field(default_factory=requests.Session)

    # database, in this process --------------------------------------------------------
    def sql(self, query: str, params: Any = None) -> list[tuple[Any, ...]]:
        with connection.cursor() as cursor:
            cursor.execute(query, params)
            return list(cursor.fetchall()) if cursor.description else []

    def api_key(self, workspace_id: str, *, role: str = "admin") -> str:
        from workspaces.models import Workspace
        from workspaces.services import api_key_create

        workspace = Workspace.objects.get(id=workspace_id)
        issued = api_key_create(workspace=workspace, name=f"bench {role}", role=role, rate_limit=100_000_000)
        return issued.plaintext

    def workspace(self, name: str) -> tuple[str, str]:
        """A new workspace and an admin key for it."""
        from workspaces.services import workspace_get_or_create

        workspace = workspace_get_or_create(name=name)
        return str(workspace.id), self.api_key(str(workspace.id))

    # HTTP to the service -----------------------------------------------------------------
    def api(self, method: str, path: str, key: str, **kwargs: Any) -> requests.Response:
        headers = {"Authorization": f"Bearer {key}", **kwargs.pop("headers", {})}
        kwargs.setdefault("timeout", 60)
        return self.session.request(method, f"{self.stack.web_url}/api/v1{path}", headers=headers, **kwargs)

    def connect_account(self, key: str, platform: str) -> str:
        """Connect a simulated account through the real connect-link flow; return its id."""
        before = set(self._account_ids(key))
        link = self.api("POST", "/connect-links", key, json={})
        link.raise_for_status()
        response = self.session.get(f"{link.json()['url']}/{platform}", timeout=120, allow_redirects=True)
        response.raise_for_status()
        new = [a for a in self._account_ids(key) if a not in before]
        if not new:
            raise RuntimeError(f"connecting {platform} created no account")
        return new[0]

    def _account_ids(self, key: str) -> list[str]:
        response = self.api("GET", "/social-accounts", key)
        response.raise_for_status()
        body = response.json()
        items = body["accounts"] if isinstance(body, dict) else body
        return [str(a["id"]) for a in items]

    # the simulators ----------------------------------------------------------------------
    def sandbox_requests(self, slug: str) -> list[dict[str, Any]]:
        response = self.session.get(f"{self.stack.sandbox_url}/sandbox/_control/{slug}/requests", timeout=120)
        response.raise_for_status()
        return list(response.json()["requests"])

    def clear_sandbox_requests(self, slug: str) -> None:
        self.session.delete(f"{self.stack.sandbox_url}/sandbox/_control/{slug}/requests", timeout=60)

    # memory ------------------------------------------------------------------------------
    def record_memory(self, after: str) -> None:
        sample: dict[str, Any] = {"after": after, "at": time.time()}
        for name in ("web", "worker", "beat", "sandbox"):
            sizes = self.stack.rss_mb(name)
            sample[name] = [round(s, 1) for s in sizes]
        self.memory.append(sample)


def duplicates_in(log: list[dict[str, Any]]) -> tuple[int, int]:
    """(publish calls that created something, duplicates): two accepted, non-repeat publish calls
    carrying the same text (each benchmark post's text is unique) are one duplicate."""
    created: dict[str, int] = {}
    for entry in log:
        if not entry.get("publish") or int(entry.get("status", 0)) >= 300 or entry.get("repeat"):
            continue
        text = str(entry.get("text") or "")
        created[text] = created.get(text, 0) + 1
    return sum(created.values()), sum(n - 1 for n in created.values() if n > 1)
