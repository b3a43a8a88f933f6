from django.apps import AppConfig


class PostsConfig(AppConfig):
    name = "posts"
    default_auto_field = "django.db.models.BigAutoField"
