from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from posts.recurrence.services import series_media_fit_backfill


class Command(BaseCommand):
    help = (
        "Give recurring series started before their template kept mediaFit the mediaFit their first post's "
        "entries had, so every later occurrence fits too. Idempotent: run it again and nothing more changes."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        changed = series_media_fit_backfill()
        self.stdout.write(f"{changed} recurring series given their mediaFit")
