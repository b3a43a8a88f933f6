"""Strict query-string parsing shared by every list and report endpoint.

- Array parameters arrive repeated (``statuses=A&statuses=B``) or bracket-indexed
  (``statuses[0]=A&statuses[1]=B``, ``statuses[]=A``); both become one list, in index order.
- Aliases map legacy names onto the canonical one (``status`` → ``statuses``).
- A parameter the endpoint does not know is a 400 naming it.
- The values are then validated by a DRF serializer, so messages name the parameter.

A serializer instance deep-copies every declared field when it is made, which cost more CPU than
the validation itself; :func:`validated` reuses one instance per class and thread instead, and
validates with DRF's public ``run_validation``, which keeps no state on the instance.
"""

from __future__ import annotations

import re
import threading
from typing import Any

from django.http import QueryDict
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers

from core import serializers as strict
from core.errors import ValidationFailed

_BRACKET = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)\[(?P<index>\d*)\]$")


_pool = threading.local()


def validated(serializer_class: type[serializers.Serializer], data: Any, *, partial: bool = False) -> dict[str, Any]:
    """``serializer_class(data=data, partial=partial)``'s validated data, or its 400.

    The instance (and its bound fields) is reused by later calls of the same thread: DRF fields
    keep no state while validating, and ``run_validation`` (unlike ``is_valid``) stores neither the
    data, the errors nor the result on the serializer. One in use is taken out of the pool, so a
    nested call builds its own."""
    instances: dict[tuple[type[serializers.Serializer], bool], serializers.Serializer] = _pool.__dict__.setdefault(
        "instances", {}
    )
    if data is None:  # ``is_valid`` words this 400 "No data provided": a rare case, a fresh instance
        fresh = serializer_class(data=data, partial=partial)
        fresh.is_valid(raise_exception=True)
        return dict(fresh.validated_data)
    key = (serializer_class, partial)
    serializer = instances.pop(key, None)
    if serializer is None:
        serializer = serializer_class(partial=partial)
    try:
        return dict(serializer.run_validation(data))
    finally:
        instances[key] = serializer


_list_fields: dict[type[serializers.Serializer], dict[str, bool]] = {}


def _field_kinds(serializer_class: type[serializers.Serializer]) -> dict[str, bool]:
    """Parameter name → whether it takes a list (fixed per class: computed once)."""
    kinds = _list_fields.get(serializer_class)
    if kinds is None:
        kinds = {
            name: isinstance(field, serializers.ListField | serializers.MultipleChoiceField)
            for name, field in serializer_class().fields.items()
        }
        _list_fields[serializer_class] = kinds
    return kinds


def collect_query(
    params: QueryDict, serializer_class: type[serializers.Serializer], aliases: dict[str, str] | None = None
) -> dict[str, Any]:
    aliases = aliases or {}
    fields = _field_kinds(serializer_class)
    indexed: dict[str, list[tuple[int, int, str]]] = {}
    unknown: list[str] = []
    order = 0
    for key in params:
        match = _BRACKET.match(key)
        name, index = (match["name"], int(match["index"] or 0)) if match else (key, 0)
        name = aliases.get(name, name)
        if name not in fields:
            unknown.append(key)
            continue
        for value in params.getlist(key):
            indexed.setdefault(name, []).append((index, order, value))
            order += 1
    if unknown:
        raise ValidationFailed([f"property {key} should not exist" for key in unknown], code="unknown_parameter")
    data: dict[str, Any] = {}
    for name, values in indexed.items():
        ordered = [value for _, _, value in sorted(values)]
        if fields[name]:
            # An empty value is an item like any other (``statuses=`` is [""]), as the OpenAPI
            # description's form-exploded arrays say; it was dropped, so a value outside the
            # documented enum was accepted.
            data[name] = ordered
        elif len(ordered) > 1:
            raise ValidationFailed([f"{name} must be given once"])
        else:
            data[name] = ordered[0]
    return data


def parse_query(
    params: QueryDict, serializer_class: type[serializers.Serializer], aliases: dict[str, str] | None = None
) -> dict[str, Any]:
    return validated(serializer_class, collect_query(params, serializer_class, aliases))


class NoQuery(strict.QuerySerializer):
    """For endpoints that take no query parameters: any parameter is a 400 naming it."""


# The 400 of an operation that takes no query parameter (its view parses the query with NoQuery):
# the description says so, since no documented parameter implies it.
UNKNOWN_PARAMETER = OpenApiResponse(
    description="A query parameter this operation does not take (`code: unknown_parameter`)."
)
