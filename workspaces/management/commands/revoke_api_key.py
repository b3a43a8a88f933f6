from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from audit.actors import system_actor
from core.errors import NotFound
from workspaces.services import api_key_revoke


class Command(BaseCommand):
    help = "Revoke an API key, given the whole key or its public part (cpk_<lookup>)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("key")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            api_key = api_key_revoke(key_or_public_part=options["key"], actor=system_actor("manage.py revoke_api_key"))
        except NotFound:
            raise CommandError("no such API key")
        revoked_at = api_key.revoked_at.isoformat() if api_key.revoked_at else "now"
        self.stdout.write(f"revoked {api_key.public_part} ({api_key.name}) at {revoked_at}")
