from django.urls import path

from audit.api.views import AuditEventListView

urlpatterns = [path("audit-events", AuditEventListView.as_view())]
