"""Where media bytes live: ``STORAGE=local`` (files under MEDIA_ROOT, upload URLs signed by this
service and accepted by its own PUT endpoint) or ``STORAGE=s3`` (any S3-compatible store; upload
URLs presigned by boto3). Both sit behind :class:`MediaStorage`, so nothing else in the app knows
which one is configured."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import math
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Protocol
from urllib.parse import quote, urlencode

from django.conf import settings
from django.core.files.base import File
from django.core.files.storage import FileSystemStorage, Storage
from django.utils import timezone
from django.utils.crypto import salted_hmac

UPLOAD_URL_TTL = dt.timedelta(hours=1)
_SIGNING_SALT = "media.local-upload"


class MediaStorage(Protocol):
    def upload_url(self, *, key: str, content_type: str, expires_at: dt.datetime) -> str: ...

    def public_url(self, key: str) -> str: ...

    def exists(self, key: str) -> bool: ...

    def size(self, key: str) -> int: ...

    def open(self, key: str) -> IO[bytes]: ...

    def save(self, key: str, content: IO[bytes], *, content_type: str) -> None: ...

    def delete(self, key: str) -> None: ...

    def keys_written_before(self, moment: dt.datetime) -> Iterator[str]:
        """Every stored object last written before ``moment`` (for the orphan sweep)."""
        ...


def local_upload_signature(*, key: str, expires: int, content_type: str) -> str:
    """HMAC (keyed by SECRET_KEY) binding the method, the key, the expiry and the Content-Type."""
    message = f"PUT\n{key}\n{expires}\n{content_type}"
    return salted_hmac(_SIGNING_SALT, message, algorithm="sha256").hexdigest()


def local_upload_signature_valid(*, key: str, expires: int, content_type: str, signature: str) -> bool:
    expected = local_upload_signature(key=key, expires=expires, content_type=content_type)
    # Bytes: compare_digest refuses str with non-ASCII characters (a client can send any).
    return hmac.compare_digest(expected.encode(), signature.encode("utf-8", "surrogateescape"))


class LocalMediaStorage:
    """Files under MEDIA_ROOT, served at ``<PUBLIC_BASE_URL>/media/<key>``."""

    def __init__(self, *, root: str, public_base_url: str) -> None:
        self.files: Storage = FileSystemStorage(location=root)
        self.public_base_url = public_base_url.rstrip("/")

    def upload_url(self, *, key: str, content_type: str, expires_at: dt.datetime) -> str:
        expires = int(expires_at.timestamp())
        query = urlencode(
            {
                "expires": expires,
                "contentType": content_type,
                "signature": local_upload_signature(key=key, expires=expires, content_type=content_type),
            }
        )
        return f"{self.public_base_url}/uploads/{quote(key)}?{query}"

    def public_url(self, key: str) -> str:
        return f"{self.public_base_url}/media/{quote(key)}"

    def exists(self, key: str) -> bool:
        return self.files.exists(key)

    def size(self, key: str) -> int:
        return self.files.size(key)

    def open(self, key: str) -> IO[bytes]:
        return self.files.open(key, "rb")

    def save(self, key: str, content: IO[bytes], *, content_type: str) -> None:
        # Keys are unique and random; an object already there is a retried write of the same key.
        if self.files.exists(key):
            self.files.delete(key)
        self.files.save(key, File(content))

    def delete(self, key: str) -> None:
        self.files.delete(key)

    def keys_written_before(self, moment: dt.datetime) -> Iterator[str]:
        root = Path(self.files.path(""))
        if not root.is_dir():
            return
        cutoff = moment.timestamp()
        for path in root.rglob("*"):
            if path.is_file() and path.stat().st_mtime < cutoff:
                yield path.relative_to(root).as_posix()


class S3MediaStorage:
    """django-storages' S3 storage for reads, writes and deletes; boto3 presigns the PUT with
    the Content-Type among the signed headers, so S3 refuses any other type."""

    def __init__(
        self,
        *,
        bucket: str,
        region: str,
        endpoint_url: str | None,
        access_key: str,
        secret_key: str,
        public_base_url: str,
    ) -> None:
        from storages.backends.s3 import S3Storage  # noqa: PLC0415 -- boto3 loads only when STORAGE=s3

        options: dict[str, Any] = {
            "bucket_name": bucket,
            "region_name": region,
            "endpoint_url": endpoint_url,
            "querystring_auth": False,
            "file_overwrite": True,
            "signature_version": "s3v4",
        }
        if access_key:
            options["access_key"] = access_key
            options["secret_key"] = secret_key
        self.files = S3Storage(**options)
        self.bucket = bucket
        self.public_base_url = public_base_url.rstrip("/")

    @property
    def _client(self) -> Any:
        return self.files.connection.meta.client

    def upload_url(self, *, key: str, content_type: str, expires_at: dt.datetime) -> str:
        client = self._client  # built lazily (slow the first time): measure the expiry after
        expires_in = max(1, math.ceil((expires_at - timezone.now()).total_seconds()))
        url: str = client.generate_presigned_url(
            "put_object",
            Params={"Bucket": self.bucket, "Key": key, "ContentType": content_type},
            ExpiresIn=expires_in,
            HttpMethod="PUT",
        )
        return url

    def public_url(self, key: str) -> str:
        if self.public_base_url:
            return f"{self.public_base_url}/{quote(key)}"
        url: str = self.files.url(key)
        return url

    def exists(self, key: str) -> bool:
        return bool(self.files.exists(key))

    def size(self, key: str) -> int:
        return int(self.files.size(key))

    def open(self, key: str) -> IO[bytes]:
        return self.files.open(key, "rb")  # type: ignore[no-any-return]

    def save(self, key: str, content: IO[bytes], *, content_type: str) -> None:
        self._client.upload_fileobj(content, self.bucket, key, ExtraArgs={"ContentType": content_type})

    def delete(self, key: str) -> None:
        self.files.delete(key)

    def keys_written_before(self, moment: dt.datetime) -> Iterator[str]:
        for page in self._client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket):
            for item in page.get("Contents", []):
                if item["LastModified"] < moment:
                    yield item["Key"]


_cache: dict[tuple[Any, ...], MediaStorage] = {}


def get_media_storage() -> MediaStorage:
    """The configured backend (built once per distinct configuration)."""
    if settings.STORAGE == "s3":
        config: tuple[Any, ...] = (
            "s3",
            settings.S3_BUCKET,
            settings.S3_REGION,
            settings.S3_ENDPOINT_URL,
            settings.AWS_ACCESS_KEY_ID,
            hashlib.sha256(settings.AWS_SECRET_ACCESS_KEY.encode()).hexdigest(),
            settings.S3_PUBLIC_BASE_URL,
        )
        if config not in _cache:
            _cache[config] = S3MediaStorage(
                bucket=settings.S3_BUCKET,
                region=settings.S3_REGION,
                endpoint_url=settings.S3_ENDPOINT_URL,
                access_key=settings.AWS_ACCESS_KEY_ID,
                secret_key=settings.AWS_SECRET_ACCESS_KEY,
                public_base_url=settings.S3_PUBLIC_BASE_URL,
            )
        return _cache[config]
    if settings.STORAGE != "local":
        raise ValueError(f"STORAGE must be 'local' or 's3', not {settings.STORAGE!r}")
    return LocalMediaStorage(root=str(settings.MEDIA_ROOT), public_base_url=settings.PUBLIC_BASE_URL)
