from django.apps import AppConfig


class EngagementConfig(AppConfig):
    name = "engagement"
    default_auto_field = "django.db.models.BigAutoField"
