from rest_framework.routers import SimpleRouter

from posts.api.views import PostViewSet

router = SimpleRouter(trailing_slash=False)
router.register("social-posts", PostViewSet, basename="social-posts")

urlpatterns = router.urls
