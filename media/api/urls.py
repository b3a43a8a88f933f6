from rest_framework.routers import SimpleRouter

from media.api.captions import AiCaptionViewSet
from media.api.views import AiImageViewSet, MediaFileViewSet, UploadUrlViewSet

router = SimpleRouter(trailing_slash=False)
router.register("upload-urls", UploadUrlViewSet, basename="upload-urls")
router.register("media-files", MediaFileViewSet, basename="media-files")
router.register("ai/images", AiImageViewSet, basename="ai-images")
router.register("ai/captions", AiCaptionViewSet, basename="ai-captions")

urlpatterns = router.urls
