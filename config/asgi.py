"""The application the web process serves: Django's WSGI application behind the buffering front
(core.front). ``gunicorn config.asgi -k core.front.FrontWorker``."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from core.front import build_application

application = build_application(get_wsgi_application())
