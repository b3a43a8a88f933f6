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


ALL_PERMISSIONS: tuple[str, ...] = (
    Permission.POSTS_READ,
    Permission.POSTS_DRAFT,
    Permission.POSTS_SCHEDULE,
    Permission.POSTS_PUBLISH,
    Permission.ACCOUNTS_READ,
    Permission.ACCOUNTS_MANAGE,
    Permission.MEDIA_UPLOAD,
    Permission.WEBHOOKS_READ,
    Permission.WEBHOOKS_MANAGE,
    Permission.ANALYTICS_READ,
    Permission.AI_GENERATE,
)


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
        }
    ),
    Role.VIEWER: frozenset(
        {Permission.POSTS_READ, Permission.ACCOUNTS_READ, Permission.ANALYTICS_READ, Permission.WEBHOOKS_READ}
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
