from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from audit.actors import system_actor
from workspaces.management.key_options import add_limit_arguments, limits_from
from workspaces.models import Organization
from workspaces.roles import ORGANIZATION_PERMISSIONS, Role
from workspaces.services import organization_get_or_create, organization_key_create


class Command(BaseCommand):
    help = (
        "Create an organization key (cpo_…): it acts in any workspace of the organization named by "
        "X-Workspace-Id, with --role there, and holds the given organization permissions. The key is "
        "printed as the last line (it is shown only once)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--organization", required=True, help="organization name")
        parser.add_argument("--role", required=True, choices=Role.values, help="its role in each workspace")
        parser.add_argument(
            "--permission",
            action="append",
            default=[],
            choices=ORGANIZATION_PERMISSIONS,
            help="an organization permission (repeat for several)",
        )
        parser.add_argument("--name", default=None, help="key name (default: 'organization <role> key')")
        parser.add_argument("--create-organization", action="store_true", help="create the organization if missing")
        add_limit_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        rate_limit, expires_at = limits_from(options)
        name = options["organization"]
        found: Organization | None
        if options["create_organization"]:
            found = organization_get_or_create(name=name)
        else:
            found = Organization.objects.filter(name=name).first()
        if found is None:
            raise CommandError(f"no organization named {name!r} (add --create-organization to create it)")
        issued = organization_key_create(
            organization=found,
            name=options["name"] or f"organization {options['role']} key",
            role=options["role"],
            permissions=options["permission"],
            expires_at=expires_at,
            rate_limit=rate_limit,
            actor=system_actor("manage.py create_organization_key"),
        )
        granted = ", ".join(issued.api_key.organization_permissions) or "none"
        self.stdout.write(f"organization: {found.name} ({found.id}), role: {options['role']}, permissions: {granted}")
        self.stdout.write(issued.plaintext)
