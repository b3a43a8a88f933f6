from rest_framework.routers import SimpleRouter

from engagement.api.views import CommentViewSet, PostCommentsViewSet

router = SimpleRouter(trailing_slash=False)
router.register("comments", CommentViewSet, basename="comments")
router.register(r"social-posts/(?P<id>[^/.]+)/comments", PostCommentsViewSet, basename="post-comments")

urlpatterns = router.urls
