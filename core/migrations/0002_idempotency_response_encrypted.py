"""Stored idempotent responses move from a plain ``jsonb`` column to an encrypted JSON text column:
the rows already stored are sealed here, so none keeps a token in the clear and each still replays."""

import json
from typing import Any

from django.db import migrations

import core.crypto


def seal_stored_responses(apps: Any, schema_editor: Any) -> None:
    record_model = apps.get_model("core", "IdempotencyRecord")
    for record in record_model.objects.filter(response_body__isnull=False).only("pk", "response_body").iterator():
        # ``update`` goes through the encrypted field's get_prep_value: the text is stored sealed.
        record_model.objects.filter(pk=record.pk).update(response_json=json.dumps(record.response_body))


def unseal_stored_responses(apps: Any, schema_editor: Any) -> None:
    record_model = apps.get_model("core", "IdempotencyRecord")
    for record in record_model.objects.filter(response_json__isnull=False).only("pk", "response_json").iterator():
        record_model.objects.filter(pk=record.pk).update(response_body=json.loads(record.response_json))


class Migration(migrations.Migration):
    dependencies = [("core", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="idempotencyrecord",
            name="response_json",
            field=core.crypto.EncryptedTextField(null=True),
        ),
        migrations.RunPython(seal_stored_responses, unseal_stored_responses),
        migrations.RemoveField(model_name="idempotencyrecord", name="response_body"),
    ]
