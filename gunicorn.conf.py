# gunicorn reads ./gunicorn.conf.py by default: the settings live in config/gunicorn.py.
from config.gunicorn import (
    accesslog,
    child_exit,
    control_socket,
    control_socket_disable,
    errorlog,
    logconfig_dict,
    on_starting,
    worker_class,
    wsgi_app,
)

__all__ = [
    "accesslog",
    "child_exit",
    "control_socket",
    "control_socket_disable",
    "errorlog",
    "logconfig_dict",
    "on_starting",
    "worker_class",
    "wsgi_app",
]
