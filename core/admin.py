"""What the admin keeps of django-oauth-toolkit: applications (staff register OAuth clients) and
access and refresh tokens (staff revoke a member's sign-in). Authorization codes live for seconds
and ID tokens are not issued (no OpenID Connect), so their pages are dropped. The site itself and
its section order are in core/admin_site.py; the staff dashboard is linked from its index
(templates/admin/index.html)."""

from django.contrib import admin
from oauth2_provider.models import get_grant_model, get_id_token_model

admin.site.unregister(get_grant_model())
admin.site.unregister(get_id_token_model())
