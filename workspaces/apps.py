from django.apps import AppConfig


class WorkspacesConfig(AppConfig):
    name = "workspaces"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from workspaces import key_cache  # noqa: PLC0415 -- models load only once apps are ready

        key_cache.watch_writes()
