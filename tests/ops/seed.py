"""Data for the staff dashboard's tests: posts in every state, entries published and failed on
several platforms, an unauthorized account, a disabled webhook and its backlog."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.db.models import Q
from django.utils import timezone

from accounts.models import AccountStatus, SocialAccount
from posts.models import Post, PostStatus, PostTarget, TargetStatus
from tests.factories.posts import PostFactory, PostTargetFactory, account
from tests.factories.webhooks import WebhookFactory
from webhooks.models import Delivery, DeliveryStatus, Event, Webhook
from workspaces.models import Workspace


@dataclass(frozen=True)
class Seeded:
    workspace: Workspace


def _finished_post(workspace: Workspace, status: str, days_ago: int, now: dt.datetime) -> Post:
    finished = now - dt.timedelta(days=days_ago, minutes=5)
    post = PostFactory(workspace=workspace, status=status)
    Post.objects.filter(pk=post.pk).update(finished_at=finished)
    return post


def seed(workspace: Workspace, *, scale: int = 1) -> Seeded:
    """``scale`` multiplies every row, so a query-count test can compare two sizes."""
    now = timezone.now()
    for _ in range(scale):
        for status in (PostStatus.DRAFT, PostStatus.SCHEDULED, PostStatus.PENDING):
            PostFactory(
                workspace=workspace,
                status=status,
                scheduled_at=now + dt.timedelta(hours=1) if status == PostStatus.SCHEDULED else None,
            )
        # One due SCHEDULED post the dispatcher has not claimed: the scheduler is 90 s late.
        PostFactory(workspace=workspace, status=PostStatus.SCHEDULED, scheduled_at=now - dt.timedelta(seconds=90))
        for days_ago, status in ((0, PostStatus.COMPLETED), (0, PostStatus.FAILED), (2, PostStatus.PARTIAL_FAILURE)):
            _finished_post(workspace, status, days_ago, now)
        # Created 10 days ago: in the 30-day window, not in the 24-hour one.
        old = PostFactory(workspace=workspace, status=PostStatus.COMPLETED)
        Post.objects.filter(pk=old.pk).update(created_at=now - dt.timedelta(days=10))

        done = PostFactory(workspace=workspace, status=PostStatus.PARTIAL_FAILURE)
        for platform in ("MASTODON", "BLUESKY"):
            PostTargetFactory(
                post=done,
                platform=platform,
                status=TargetStatus.PUBLISHED,
                platform_post_id="remote-1",
                published_at=now - dt.timedelta(hours=1),
            )
        for platform, code in (
            ("TELEGRAM", "rate_limited"),
            ("TELEGRAM", "invalid_media"),
            ("BLUESKY", "unauthorized"),
        ):
            PostTargetFactory(
                post=PostFactory(workspace=workspace, status=PostStatus.FAILED),
                platform=platform,
                status=TargetStatus.FAILED,
                error_code=code,
                error_message="refused",
            )
        PostTargetFactory(
            post=PostFactory(workspace=workspace, status=PostStatus.PENDING),
            platform="MASTODON",
            status=TargetStatus.PENDING,
            next_attempt_at=now - dt.timedelta(seconds=30),
        )
        account(workspace, "LINKEDIN", status=AccountStatus.UNAUTHORIZED, unauthorized_reason="token revoked")
        disabled = WebhookFactory(workspace=workspace, active=False, disabled_at=now - dt.timedelta(hours=3))
        live = WebhookFactory(workspace=workspace)
        event = Event.objects.create(workspace=workspace, name="post.published", payload="{}", created_at=now)
        for webhook, due_in in ((live, -60), (live, 600), (disabled, -5)):
            Delivery.objects.create(
                webhook=webhook,
                event=event,
                status=DeliveryStatus.PENDING,
                next_attempt_at=now + dt.timedelta(seconds=due_in),
            )
        Delivery.objects.create(webhook=live, event=event, status=DeliveryStatus.SUCCEEDED)
    return Seeded(workspace=workspace)


def expected_figures(workspace_id: str | None = None) -> dict[str, int]:
    """The dashboard's figures computed here independently, straight from the tables."""
    now = timezone.now()
    posts = Post.objects.all()
    targets = PostTarget.objects.all()
    if workspace_id:
        posts, targets = posts.filter(workspace_id=workspace_id), targets.filter(post__workspace_id=workspace_id)
    figures: dict[str, int] = {}
    for label, since in (("24h", now - dt.timedelta(hours=24)), ("30d", now - dt.timedelta(days=30))):
        for status in PostStatus.values:
            figures[f"posts-{label}-{status}"] = posts.filter(created_at__gte=since, status=status).count()
    day_ago = now - dt.timedelta(hours=24)
    recent = targets.filter(
        Q(status=TargetStatus.PUBLISHED, published_at__gte=day_ago)
        | Q(status=TargetStatus.FAILED, updated_at__gte=day_ago)
    )
    for platform in set(recent.values_list("platform", flat=True)):
        figures[f"published-{platform}"] = recent.filter(platform=platform, status=TargetStatus.PUBLISHED).count()
        figures[f"failed-{platform}"] = recent.filter(platform=platform, status=TargetStatus.FAILED).count()
    figures["due-posts"] = posts.filter(status=PostStatus.SCHEDULED, scheduled_at__lte=now).count()
    figures["due-entries"] = targets.filter(status=TargetStatus.PENDING, next_attempt_at__lte=now).count()
    account_rows = SocialAccount.objects.filter(status=AccountStatus.UNAUTHORIZED)
    webhooks = Webhook.objects.filter(active=False)
    deliveries = Delivery.objects.filter(status=DeliveryStatus.PENDING)
    if workspace_id:
        account_rows = account_rows.filter(workspace_id=workspace_id)
        webhooks = webhooks.filter(workspace_id=workspace_id)
        deliveries = deliveries.filter(webhook__workspace_id=workspace_id)
    figures["unauthorized-accounts"] = account_rows.count()
    figures["disabled-webhooks"] = webhooks.count()
    figures["pending-deliveries"] = deliveries.count()
    figures["due-deliveries"] = deliveries.filter(next_attempt_at__lte=now).count()
    return figures
