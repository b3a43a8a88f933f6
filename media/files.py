"""What may be uploaded (CONTRACT.md §7) and how storage keys are made."""

from __future__ import annotations

import re
import secrets
import unicodedata

from media.models import MediaKind

# mime type → (kind, extension used when the file name has none)
ALLOWED_MIME_TYPES: dict[str, tuple[str, str]] = {
    "image/jpeg": (MediaKind.IMAGE, "jpg"),
    "image/png": (MediaKind.IMAGE, "png"),
    "image/webp": (MediaKind.IMAGE, "webp"),
    "video/mp4": (MediaKind.VIDEO, "mp4"),
    "video/quicktime": (MediaKind.VIDEO, "mov"),
    "application/pdf": (MediaKind.DOCUMENT, "pdf"),
    "application/vnd.ms-powerpoint": (MediaKind.DOCUMENT, "ppt"),
    "application/msword": (MediaKind.DOCUMENT, "doc"),
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": (MediaKind.DOCUMENT, "pptx"),
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": (MediaKind.DOCUMENT, "docx"),
}

MAX_FILE_NAME_LENGTH = 255
_STEM_LIMIT = 100
_EXTENSION_LIMIT = 10
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_EXTENSION = re.compile(r"^[A-Za-z0-9]{1,10}$")


def kind_of(mime_type: str) -> str:
    return ALLOWED_MIME_TYPES[mime_type][0]


def sanitize_file_name(file_name: str, mime_type: str) -> str:
    """A storage- and URL-safe name that keeps the file's extension (lower-cased); a name with
    no usable extension gets the one of its mime type."""
    base = file_name.replace("\\", "/").rsplit("/", 1)[-1]
    stem, dot, extension = base.rpartition(".")
    if not dot or not _EXTENSION.match(extension) or not stem.strip(". "):
        stem, extension = base, ALLOWED_MIME_TYPES[mime_type][1]
    stem = unicodedata.normalize("NFKD", stem).encode("ascii", "ignore").decode("ascii")
    stem = _UNSAFE.sub("-", stem).strip(".-_")[:_STEM_LIMIT].strip(".-_") or "file"
    return f"{stem}.{extension.lower()[:_EXTENSION_LIMIT]}"


def new_key(*, workspace_id: str, file_name: str) -> str:
    """``<workspace id>/<128 random bits as 32 hex>/<sanitized file name>``."""
    return f"{workspace_id}/{secrets.token_hex(16)}/{file_name}"


def preview_key_of(key: str) -> str:
    """The preview sits next to its original and can never collide with an original's key."""
    return f"{key}.preview.webp"
