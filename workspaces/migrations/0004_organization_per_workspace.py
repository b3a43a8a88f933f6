from django.db import migrations


def give_every_workspace_an_organization(apps, schema_editor):
    """Each existing workspace becomes the only workspace of an organization of its own name
    (workspace names are unique, so these are too). Run again, it changes nothing."""
    Organization = apps.get_model("workspaces", "Organization")
    Workspace = apps.get_model("workspaces", "Workspace")
    for workspace in Workspace.objects.filter(organization__isnull=True).order_by("created_at", "id"):
        organization, _ = Organization.objects.get_or_create(name=workspace.name)
        Workspace.objects.filter(pk=workspace.pk).update(organization=organization)


class Migration(migrations.Migration):
    dependencies = [("workspaces", "0003_organizations")]

    operations = [
        migrations.RunPython(give_every_workspace_an_organization, migrations.RunPython.noop, elidable=False),
    ]
