from django.urls import path
from rest_framework.routers import SimpleRouter

from posts.api.platforms import PlatformListView
from posts.api.queues import AccountQueueNextView, AccountQueueView
from posts.api.recurring import RecurringPostViewSet
from posts.api.views import PostViewSet

router = SimpleRouter(trailing_slash=False)
router.register("social-posts", PostViewSet, basename="social-posts")
router.register("recurring-posts", RecurringPostViewSet, basename="recurring-posts")

urlpatterns = [
    path("platforms", PlatformListView.as_view()),
    path("social-accounts/<str:id>/queue", AccountQueueView.as_view()),
    path("social-accounts/<str:id>/queue/next", AccountQueueNextView.as_view()),
    *router.urls,
]
