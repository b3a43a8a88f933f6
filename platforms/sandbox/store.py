"""State of the simulators, kept in Redis so every web process (and the benchmark's separate
sandbox process) sees the same world, and it survives restarts of the embedded Redis.

Keys: ``sandbox:<slug>:<kind>:<id>`` hold JSON documents; ``sandbox:<slug>:<kind>`` is the set
of ids of that kind; ``sandbox:<slug>:requests`` is the log of every received call."""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

from core.redis import get_redis


class SandboxStore:
    def __init__(self, slug: str) -> None:
        self.slug = slug
        self.redis = get_redis()

    def _key(self, *parts: str) -> str:
        return ":".join(["sandbox", self.slug, *parts])

    def new_id(self, prefix: str = "") -> str:
        number = self.redis.incr(self._key("seq"))
        return f"{prefix}{int(time.time())}{number:06d}"

    def put(self, kind: str, item_id: str, doc: dict[str, Any]) -> dict[str, Any]:
        pipe = self.redis.pipeline()
        pipe.set(self._key(kind, item_id), json.dumps(doc))
        pipe.zadd(self._key(kind), {item_id: time.time()}, nx=True)
        pipe.execute()
        return doc

    def create_once(self, kind: str, item_id: str, doc: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """Store ``doc`` unless ``item_id`` exists; return (stored doc, created?). Atomic."""
        if self.redis.set(self._key(kind, item_id), json.dumps(doc), nx=True):
            self.redis.zadd(self._key(kind), {item_id: time.time()}, nx=True)
            return doc, True
        existing = self.get(kind, item_id)
        assert existing is not None
        return existing, False

    def get(self, kind: str, item_id: str) -> dict[str, Any] | None:
        raw = self.redis.get(self._key(kind, item_id))
        return json.loads(raw) if raw else None

    def update(self, kind: str, item_id: str, **changes: Any) -> dict[str, Any] | None:
        doc = self.get(kind, item_id)
        if doc is None:
            return None
        doc.update(changes)
        self.redis.set(self._key(kind, item_id), json.dumps(doc))
        return doc

    def delete(self, kind: str, item_id: str) -> bool:
        pipe = self.redis.pipeline()
        pipe.delete(self._key(kind, item_id))
        pipe.zrem(self._key(kind), item_id)
        return bool(pipe.execute()[0])

    def ids(self, kind: str) -> list[str]:
        return [i.decode() if isinstance(i, bytes) else str(i) for i in self.redis.zrange(self._key(kind), 0, -1)]

    def count(self, kind: str) -> int:
        """How many items of ``kind`` there are (one ZCARD: a count never reads the ids)."""
        return int(self.redis.zcard(self._key(kind)))

    def all(self, kind: str) -> list[dict[str, Any]]:
        ids = self.ids(kind)
        if not ids:
            return []
        raws = self.redis.mget([self._key(kind, i) for i in ids])
        return [json.loads(r) for r in raws if r]

    def get_many(self, kind: str, item_ids: list[str]) -> list[dict[str, Any] | None]:
        """The documents of ``item_ids`` in order (None where there is none), in one read."""
        if not item_ids:
            return []
        return [json.loads(r) if r else None for r in self.redis.mget([self._key(kind, i) for i in item_ids])]

    def all_of_kinds(self, kinds: list[str]) -> dict[str, list[dict[str, Any]]]:
        """:meth:`all` of several kinds at once, in two reads whatever their number (one when every
        kind is empty)."""
        pipe = self.redis.pipeline()
        for kind in kinds:
            pipe.zrange(self._key(kind), 0, -1)
        ids = {
            kind: [i.decode() if isinstance(i, bytes) else str(i) for i in found]
            for kind, found in zip(kinds, pipe.execute(), strict=True)
        }
        keys = [self._key(kind, i) for kind in kinds for i in ids[kind]]
        raws = iter(self.redis.mget(keys) if keys else [])
        return {kind: [json.loads(r) for r in [next(raws) for _ in ids[kind]] if r] for kind in kinds}

    # tokens -------------------------------------------------------------------------
    def issue_token(self, account_id: str, *, kind: str = "access", ttl: int | None = None, **data: Any) -> str:
        token = f"sbx-{self.slug}-{kind}-{secrets.token_urlsafe(18)}"
        payload = {"account_id": account_id, "kind": kind, **data}
        self.redis.set(self._key("token", token), json.dumps(payload), ex=ttl)
        return token

    def token(self, token: str) -> dict[str, Any] | None:
        raw = self.redis.get(self._key("token", token))
        return json.loads(raw) if raw else None

    def revoke_token(self, token: str) -> None:
        self.redis.delete(self._key("token", token))

    # bytes kept for a while (the chunks of an upload until it completes) ----------------------
    def put_bytes(self, kind: str, item_id: str, data: bytes, *, ttl: int) -> None:
        self.redis.set(self._key(kind, item_id), data, ex=ttl)

    def pop_bytes(self, kind: str, item_ids: list[str]) -> list[bytes | None]:
        """The bytes kept under these ids, in order (None where there are none), forgotten."""
        if not item_ids:
            return []
        keys = [self._key(kind, i) for i in item_ids]
        pipe = self.redis.pipeline()
        pipe.mget(keys)
        pipe.delete(*keys)
        return list(pipe.execute()[0])

    # the request log: what the simulator received, for duplicate counting -------------------
    def log_request(self, method: str, path: str, summary: dict[str, Any]) -> None:
        entry = {"at": time.time(), "method": method, "path": path, **summary}
        self.redis.rpush(self._key("requests"), json.dumps(entry))

    def requests(self) -> list[dict[str, Any]]:
        return [json.loads(r) for r in self.redis.lrange(self._key("requests"), 0, -1)]

    def clear_requests(self) -> None:
        self.redis.delete(self._key("requests"))

    # scenario switches ---------------------------------------------------------------
    def first_time(self, key: str) -> bool:
        """True the first time ``key`` is seen (for ``#sandbox-flaky``)."""
        return bool(self.redis.set(self._key("seen", key), "1", nx=True, ex=86400))

    def set_revoked(self, account_id: str, revoked: bool) -> None:
        if revoked:
            self.redis.sadd(self._key("revoked"), account_id)
        else:
            self.redis.srem(self._key("revoked"), account_id)

    def is_revoked(self, account_id: str) -> bool:
        return bool(self.redis.sismember(self._key("revoked"), account_id))
