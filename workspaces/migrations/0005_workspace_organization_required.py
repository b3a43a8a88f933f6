import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("workspaces", "0004_organization_per_workspace")]

    operations = [
        migrations.AlterField(
            model_name="workspace",
            name="organization",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="workspaces", to="workspaces.organization"
            ),
        ),
    ]
