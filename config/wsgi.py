"""Django's WSGI application. The web process serves it behind the buffering front
(config.asgi, core.front), which frames every body with the length received."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

application = get_wsgi_application()
