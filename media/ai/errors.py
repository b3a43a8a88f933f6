"""Errors the AI endpoints answer with, in the one hierarchy of ``core.errors``."""

from __future__ import annotations

from core.errors import ApplicationError


class AiProviderFailed(ApplicationError):
    """The AI provider could not produce a result; nothing was charged."""

    status_code = 502
    code = "ai_provider_error"
    default_message = "The AI provider could not generate a result; try again later"


class AiQuotaExhausted(ApplicationError):
    """The workspace has spent its AI units for this calendar month (``AI_MONTHLY_UNITS``)."""

    status_code = 402
    code = "ai_quota_exhausted"
    default_message = "This workspace has used its AI units for this month"
