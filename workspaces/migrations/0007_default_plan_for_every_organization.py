from typing import Any

from django.db import migrations

from core.ids import new_id


def give_every_organization_the_default_plan(apps: Any, schema_editor: Any) -> None:
    """Organizations made before plans keep doing what they did: the default plan has no limits."""
    Plan = apps.get_model("workspaces", "Plan")
    Organization = apps.get_model("workspaces", "Organization")
    plan = Plan.objects.filter(name="Default").first()
    if plan is None:
        plan = Plan.objects.create(id=new_id("plan"), name="Default")
    Organization.objects.filter(plan__isnull=True).update(plan=plan)


class Migration(migrations.Migration):
    dependencies = [("workspaces", "0006_plans_deletions_and_workspace_fields")]

    operations = [migrations.RunPython(give_every_organization_the_default_plan, migrations.RunPython.noop)]
