"""Strict query-string parsing shared by every list and report endpoint.

- Array parameters arrive repeated (``statuses=A&statuses=B``) or bracket-indexed
  (``statuses[0]=A&statuses[1]=B``, ``statuses[]=A``); both become one list, in index order.
- Aliases map legacy names onto the canonical one (``status`` → ``statuses``).
- A parameter the endpoint does not know is a 400 naming it.
- The values are then validated by a DRF serializer, so messages name the parameter.
"""

from __future__ import annotations

import re
from typing import Any

from django.http import QueryDict
from rest_framework import serializers

from core.errors import ValidationFailed

_BRACKET = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)\[(?P<index>\d*)\]$")


def _is_list_field(field: serializers.Field) -> bool:
    return isinstance(field, serializers.ListField | serializers.MultipleChoiceField)


def collect_query(
    params: QueryDict, serializer_class: type[serializers.Serializer], aliases: dict[str, str] | None = None
) -> dict[str, Any]:
    aliases = aliases or {}
    fields = serializer_class().fields
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
        if _is_list_field(fields[name]):
            data[name] = [v for v in ordered if v != ""]
        elif len(ordered) > 1:
            raise ValidationFailed([f"{name} must be given once"])
        else:
            data[name] = ordered[0]
    return data


def parse_query(
    params: QueryDict, serializer_class: type[serializers.Serializer], aliases: dict[str, str] | None = None
) -> dict[str, Any]:
    serializer = serializer_class(data=collect_query(params, serializer_class, aliases))
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


class NoQuery(serializers.Serializer):
    """For endpoints that take no query parameters: any parameter is a 400 naming it."""
