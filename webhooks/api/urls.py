from rest_framework.routers import SimpleRouter

from webhooks.api.views import EventViewSet, WebhookViewSet

router = SimpleRouter(trailing_slash=False)
router.register("webhooks", WebhookViewSet, basename="webhook")
router.register("events", EventViewSet, basename="event")

urlpatterns = router.urls
