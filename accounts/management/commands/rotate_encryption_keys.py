"""Re-encrypt every encrypted column with the first key of FERNET_KEYS.

Rotation: put the new key first in FERNET_KEYS (keep the old ones after it), deploy, run this
command, then drop the old keys. Every model field of type ``EncryptedTextField`` in every app is
covered (platform tokens, PKCE verifiers, webhook secrets…). Rows are rewritten in batches, each
batch locked and updated in its own transaction; running it twice is harmless.
"""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.core.management.base import BaseCommand
from django.db import connection, transaction

from core.crypto import EncryptedTextField, rotate

BATCH = 500


class Command(BaseCommand):
    help = "Re-encrypt every encrypted column with the primary (first) key of FERNET_KEYS."

    def handle(self, *args: Any, **options: Any) -> None:
        total = 0
        for model in apps.get_models():
            columns = [str(f.column) for f in model._meta.concrete_fields if isinstance(f, EncryptedTextField)]
            if not columns or model._meta.proxy or not model._meta.managed or model._meta.pk is None:
                continue
            count = self._rotate_table(model._meta.db_table, str(model._meta.pk.column), columns)
            total += count
            self.stdout.write(f"{model._meta.label}: {count} row(s) re-encrypted")
        self.stdout.write(self.style.SUCCESS(f"Done: {total} row(s) re-encrypted"))

    def _rotate_table(self, table: str, pk: str, columns: list[str]) -> int:
        qn = connection.ops.quote_name
        select_cols = ", ".join(qn(c) for c in columns)
        assignments = ", ".join(f"{qn(c)} = %s" for c in columns)
        count = 0
        last: Any = None
        while True:
            with transaction.atomic(), connection.cursor() as cursor:
                where = f"WHERE {qn(pk)} > %s " if last is not None else ""
                cursor.execute(
                    # Names from the encrypted fields' models, quoted; every value is a parameter.
                    f"SELECT {qn(pk)}, {select_cols} FROM {qn(table)} {where}"  # noqa: S608 (model names)
                    f"ORDER BY {qn(pk)} LIMIT {BATCH} FOR UPDATE",
                    [last] if last is not None else [],
                )
                rows = cursor.fetchall()
                for row in rows:
                    values = [rotate(v) if v else v for v in row[1:]]
                    cursor.execute(
                        f"UPDATE {qn(table)} SET {assignments} WHERE {qn(pk)} = %s",  # noqa: S608 (model names)
                        [*values, row[0]],
                    )
                count += len(rows)
            if len(rows) < BATCH:
                return count
            last = rows[-1][0]
