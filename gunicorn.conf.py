# gunicorn reads ./gunicorn.conf.py by default: the settings live in config/gunicorn.py.
from config.gunicorn import (
    RedactingAccessLogger,
    access_log_format,
    accesslog,
    child_exit,
    errorlog,
    logger_class,
    on_starting,
)

__all__ = [
    "RedactingAccessLogger",
    "access_log_format",
    "accesslog",
    "child_exit",
    "errorlog",
    "logger_class",
    "on_starting",
]
