from django.apps import AppConfig


class PlatformsConfig(AppConfig):
    name = "platforms"
    default_auto_field = "django.db.models.BigAutoField"
