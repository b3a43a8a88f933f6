"""Roles and permissions exactly as CONTRACT.md §2. The one place they are written."""

from __future__ import annotations

from django.db import models


class Permission:
    POSTS_READ = "posts.read"
    POSTS_DRAFT = "posts.draft"
    POSTS_SCHEDULE = "posts.schedule"
    POSTS_PUBLISH = "posts.publish"
    ACCOUNTS_READ = "accounts.read"
    ACCOUNTS_MANAGE = "accounts.manage"
    MEDIA_UPLOAD = "media.upload"
    WEBHOOKS_READ = "webhooks.read"
    WEBHOOKS_MANAGE = "webhooks.manage"
    ANALYTICS_READ = "analytics.read"
    AI_GENERATE = "ai.generate"
    # The inbox (issue 33): read the comments under the accounts' posts, reply to them as the
    # account, and hide, show again, delete or like them.
    COMMENTS_READ = "comments.read"
    COMMENTS_REPLY = "comments.reply"
    COMMENTS_MODERATE = "comments.moderate"
    # The organization permission of the same name, held by a workspace's admins for their own
    # workspace (GET /usage answers its usage only).
    USAGE_READ = "usage.read"


def _declared(holder: type) -> tuple[str, ...]:
    """The values of a class's upper-case attributes, in the order they are written there."""
    return tuple(value for name, value in vars(holder).items() if name.isupper())


# The canonical order: as declared above.
ALL_PERMISSIONS: tuple[str, ...] = _declared(Permission)


class OrganizationPermission:
    """What an organization key may do in its organization itself (on top of its role, which is
    what it may do inside a workspace)."""

    WORKSPACES_MANAGE = "workspaces.manage"
    KEYS_MANAGE = "keys.manage"
    USAGE_READ = "usage.read"
    AUDIT_READ = "audit.read"


ORGANIZATION_PERMISSIONS: tuple[str, ...] = _declared(OrganizationPermission)


class Role(models.TextChoices):
    ADMIN = "admin", "Admin"
    EDITOR = "editor", "Editor"
    CONTRIBUTOR = "contributor", "Contributor"
    VIEWER = "viewer", "Viewer"


ROLE_PERMISSIONS: dict[str, frozenset[str]] = {
    Role.ADMIN: frozenset(ALL_PERMISSIONS),
    Role.EDITOR: frozenset(
        {
            Permission.POSTS_READ,
            Permission.POSTS_DRAFT,
            Permission.POSTS_SCHEDULE,
            Permission.POSTS_PUBLISH,
            Permission.MEDIA_UPLOAD,
            Permission.ACCOUNTS_READ,
            Permission.ANALYTICS_READ,
            Permission.WEBHOOKS_READ,
            Permission.WEBHOOKS_MANAGE,
            Permission.AI_GENERATE,
            Permission.COMMENTS_READ,
            Permission.COMMENTS_REPLY,
            Permission.COMMENTS_MODERATE,
        }
    ),
    Role.CONTRIBUTOR: frozenset(
        {
            Permission.POSTS_READ,
            Permission.POSTS_DRAFT,
            Permission.MEDIA_UPLOAD,
            Permission.ACCOUNTS_READ,
            Permission.ANALYTICS_READ,
            Permission.AI_GENERATE,
            Permission.COMMENTS_READ,
        }
    ),
    Role.VIEWER: frozenset(
        {
            Permission.POSTS_READ,
            Permission.ACCOUNTS_READ,
            Permission.ANALYTICS_READ,
            Permission.WEBHOOKS_READ,
            Permission.COMMENTS_READ,
        }
    ),
}


def permissions_of(role: str) -> list[str]:
    """The role's permissions in the canonical order."""
    granted = ROLE_PERMISSIONS[role]
    return [p for p in ALL_PERMISSIONS if p in granted]


def capability_flags(role: str) -> dict[str, bool]:
    granted = ROLE_PERMISSIONS[role]
    return {
        "draft": Permission.POSTS_DRAFT in granted,
        "schedule": Permission.POSTS_SCHEDULE in granted,
        "publish": Permission.POSTS_PUBLISH in granted,
    }


# What each permission lets a caller do, grouped by the thing it acts on (for /me ``summary``).
_ABILITIES: dict[str, tuple[str, str]] = {
    Permission.POSTS_READ: ("posts", "read"),
    Permission.POSTS_DRAFT: ("posts", "draft"),
    Permission.POSTS_SCHEDULE: ("posts", "schedule"),
    Permission.POSTS_PUBLISH: ("posts", "publish"),
    Permission.ACCOUNTS_READ: ("social accounts", "read"),
    Permission.ACCOUNTS_MANAGE: ("social accounts", "manage"),
    Permission.MEDIA_UPLOAD: ("media", "upload"),
    Permission.WEBHOOKS_READ: ("webhooks", "read"),
    Permission.WEBHOOKS_MANAGE: ("webhooks", "manage"),
    Permission.ANALYTICS_READ: ("analytics", "read"),
    Permission.AI_GENERATE: ("AI images", "generate"),
    Permission.COMMENTS_READ: ("comments", "read"),
    Permission.COMMENTS_REPLY: ("comments", "reply to"),
    Permission.COMMENTS_MODERATE: ("comments", "moderate"),
    Permission.USAGE_READ: ("plan usage", "read"),
}


def _and(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def permissions_summary(
    role: str, *, token_type: str, workspace_name: str | None, organization_name: str | None = None
) -> str:
    """One sentence saying what a caller with ``role`` may do, built from its permissions, e.g.
    "In the workspace Acme, this Viewer API key may read posts; read social accounts; read
    webhooks; read analytics." Without a workspace (an organization key that named none), "In
    each workspace of the organization …"."""
    verbs: dict[str, list[str]] = {}
    for permission in permissions_of(role):
        thing, verb = _ABILITIES[permission]
        verbs.setdefault(thing, []).append(verb)
    caller = "API key" if token_type == "api_token" else "OAuth token"
    abilities = "; ".join(f"{_and(words)} {thing}" for thing, words in verbs.items())
    where = (
        f"In the workspace {workspace_name}"
        if workspace_name is not None
        else f"In each workspace of the organization {organization_name}"
    )
    return f"{where}, this {Role(role).label} {caller} may {abilities}."
