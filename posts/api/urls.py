from django.urls import path
from rest_framework.routers import SimpleRouter

from posts.api.platforms import PlatformListView
from posts.api.recurring import RecurringPostViewSet
from posts.api.views import PostViewSet

router = SimpleRouter(trailing_slash=False)
router.register("social-posts", PostViewSet, basename="social-posts")
router.register("recurring-posts", RecurringPostViewSet, basename="recurring-posts")

urlpatterns = [path("platforms", PlatformListView.as_view()), *router.urls]
