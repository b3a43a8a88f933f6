from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from audit.actors import system_actor
from workspaces.management.key_options import add_limit_arguments, limits_from
from workspaces.models import Organization, Workspace
from workspaces.roles import Role
from workspaces.services import AmbiguousWorkspaceName, api_key_create, workspace_get_or_create, workspace_named


class Command(BaseCommand):
    help = "Create an API key; the key is printed as the last line (it is shown only once)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--workspace",
            required=True,
            help="workspace name or id (a name two organizations use needs --organization)",
        )
        parser.add_argument("--role", required=True, choices=Role.values)
        parser.add_argument("--name", default=None, help="key name (default: '<role> key')")
        parser.add_argument("--create-workspace", action="store_true", help="create the workspace if missing")
        parser.add_argument(
            "--organization",
            default=None,
            help="the existing organization the workspace is in, or a created one joins (default for a created one: "
            "a new organization of the workspace's name)",
        )
        add_limit_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        # Refuse bad numbers before anything is written (no workspace created for a failed call).
        rate_limit, expires_at = limits_from(options)
        name = options["workspace"]
        organization = None
        if options["organization"] is not None:
            organization = Organization.objects.filter(name=options["organization"]).first()
            if organization is None:
                raise CommandError(f"no organization named {options['organization']!r}")
        found: Workspace | None
        try:
            if options["create_workspace"]:
                found = workspace_get_or_create(
                    name=name, organization=organization, actor=system_actor("manage.py create_api_key")
                )
            else:
                found = workspace_named(name, organization=organization)
        except AmbiguousWorkspaceName as exc:
            raise CommandError(str(exc)) from exc
        if found is None:
            where = f" in organization {organization.name!r}" if organization is not None else ""
            raise CommandError(f"no workspace named {name!r}{where} (add --create-workspace to create it)")
        workspace = found
        issued = api_key_create(
            workspace=workspace,
            name=options["name"] or f"{options['role']} key",
            role=options["role"],
            expires_at=expires_at,
            rate_limit=rate_limit,
            actor=system_actor("manage.py create_api_key"),
        )
        self.stdout.write(f"workspace: {workspace.name} ({workspace.id}), role: {options['role']}")
        self.stdout.write(issued.plaintext)
