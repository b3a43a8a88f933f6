from rest_framework.routers import SimpleRouter

from webhooks.api.views import WebhookViewSet

router = SimpleRouter(trailing_slash=False)
router.register("webhooks", WebhookViewSet, basename="webhook")

urlpatterns = router.urls
