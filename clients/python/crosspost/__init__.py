"""Crosspost for Python: an SDK (:class:`Client`, :class:`AsyncClient`), webhook verification,
the ``crosspost`` command and an MCP server (``crosspost mcp``)."""

__version__ = "1.0.0"

from crosspost.client import AsyncClient, Client
from crosspost.errors import (
    APIError,
    AuthenticationError,
    BadRequest,
    ConfigurationError,
    Conflict,
    CrosspostError,
    InvalidSignature,
    NotFound,
    PermissionDenied,
    RateLimited,
    ServerError,
    TransportError,
    WaitTimeout,
)
from crosspost.webhooks import verify_webhook

__all__ = [
    "APIError",
    "AsyncClient",
    "AuthenticationError",
    "BadRequest",
    "Client",
    "ConfigurationError",
    "Conflict",
    "CrosspostError",
    "InvalidSignature",
    "NotFound",
    "PermissionDenied",
    "RateLimited",
    "ServerError",
    "TransportError",
    "WaitTimeout",
    "__version__",
    "verify_webhook",
]
