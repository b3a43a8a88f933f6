"""The admin site's names; the staff dashboard is linked from its index (templates/admin/index.html)."""

from django.contrib import admin

admin.site.site_header = "Crosspost staff"
admin.site.site_title = "Crosspost staff"
admin.site.index_title = "Workspaces, accounts, posts and deliveries"
