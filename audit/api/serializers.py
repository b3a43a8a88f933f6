from __future__ import annotations

from rest_framework import serializers

from audit.models import ActorType
from core import serializers as strict
from core.fields import InstantField

ACTIONS = (
    "api_key.create",
    "api_key.update",
    "api_key.revoke",
    "workspace.create",
    "workspace.update",
    "workspace.delete",
    "workspace.restore",
    "workspace.purge",
    "webhook.create",
    "webhook.update",
    "webhook.delete",
    "webhook.rotate_secret",
    "plan.update",
    "organization.plan_change",
    "post.delete",
    "account.disconnect",
    "post.unpublish",
)


class AuditEventListQuery(strict.QuerySerializer):
    after = serializers.RegexField(
        r"^[A-Za-z0-9_-]{1,200}$",
        required=False,
        help_text="A `nextCursor` from an earlier page, passed back as it is: the (older) events after it.",
        error_messages={"invalid": "must be a nextCursor returned by GET /audit-events"},
    )
    limit = serializers.IntegerField(min_value=1, max_value=100, default=20, help_text="Events per page (1 to 100).")
    workspaceId = serializers.CharField(max_length=40, required=False, help_text="Only events of this workspace.")
    actorId = serializers.CharField(
        max_length=60, required=False, help_text="Only events of this actor (a key id, a user id, a command)."
    )
    action = serializers.ListField(
        child=serializers.CharField(max_length=60),
        required=False,
        help_text="Only these actions (repeat the parameter for several), e.g. `workspace.delete`.",
    )
    since = InstantField(required=False, help_text="Only events at or after this instant.")
    until = InstantField(required=False, help_text="Only events before this instant.")


class AuditActorOutput(serializers.Serializer):
    type = serializers.ChoiceField(
        choices=list(ActorType.values),
        help_text="api_key, oauth (a member's sign-in), staff (a staff user in the admin) or system (a command "
        "line or a scheduled job).",
    )
    id = serializers.CharField(help_text="The key's id, the user's id, or the command's name.")
    name = serializers.CharField(help_text="A readable name: the key's name and public part, the user name.")


class AuditTargetOutput(serializers.Serializer):
    type = serializers.CharField(help_text="api_key, workspace, webhook, plan, organization, post, social_account.")
    id = serializers.CharField(help_text="Its id.")


class AuditEventOutput(serializers.Serializer):
    id = serializers.CharField(help_text="The event's id.")
    createdAt = serializers.DateTimeField(help_text="When the change was made (it committed with this record).")
    action = serializers.CharField(help_text="What was done, `<target>.<verb>`, e.g. `api_key.create`.")
    actor = AuditActorOutput(help_text="Who did it.")
    workspaceId = serializers.CharField(allow_null=True, help_text="The workspace concerned, if any.")
    target = AuditTargetOutput(help_text="What was changed.")
    changes = serializers.DictField(help_text="The values set (never a secret).")
    requestId = serializers.CharField(allow_null=True, help_text="The X-Request-Id of the request that made it.")
    sourceAddress = serializers.CharField(allow_null=True, help_text="The address the request came from.")


class AuditEventListOutput(serializers.Serializer):
    events = AuditEventOutput(many=True, help_text="Newest first.")
    nextCursor = serializers.CharField(
        allow_null=True, help_text="Pass back as `after` for the next (older) page; null when there is none."
    )
    hasMore = serializers.BooleanField(help_text="true while older events follow this page.")
