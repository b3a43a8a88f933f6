from rest_framework.routers import SimpleRouter

from analytics.api.views import AnalyticsViewSet

router = SimpleRouter(trailing_slash=False)
router.register("analytics", AnalyticsViewSet, basename="analytics")

urlpatterns = router.urls
