from django.urls import path
from rest_framework.routers import SimpleRouter

from accounts.api.views import ConnectBrandingView, ConnectLinkViewSet, SocialAccountViewSet

router = SimpleRouter(trailing_slash=False)
router.register("social-accounts", SocialAccountViewSet, basename="social-accounts")
router.register("connect-links", ConnectLinkViewSet, basename="connect-links")

urlpatterns = [path("connect-branding", ConnectBrandingView.as_view()), *router.urls]
