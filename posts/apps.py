from django.apps import AppConfig

from core import health


class PostsConfig(AppConfig):
    name = "posts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # /readyz and /metrics report the scheduler's lag; core asks this app for the figure.
        from posts.selectors import oldest_due_scheduled_at  # noqa: PLC0415 -- models load only once apps are ready

        health.register_oldest_due_post(oldest_due_scheduled_at)
