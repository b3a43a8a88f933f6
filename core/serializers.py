"""Input serializers that refuse a JSON value of the wrong type instead of coercing it.

DRF's fields are lenient: a CharField turns ``42`` into ``"42"``, an IntegerField takes ``"7"``
and ``7.0``, a BooleanField takes ``"yes"`` and ``1``. The OpenAPI description promises JSON
types, so every serializer that parses input derives from :class:`Serializer` (a JSON body) or
:class:`QuerySerializer` (a query string), which check each value's type against its field
before DRF's own validation runs, down through list items and dict values; nested serializers
check their own fields the same way. A wrong type is a 400 naming the field, like every other
validation error. ``core.schema`` refuses to describe an operation whose input is not strict
(``make schema`` fails), so no endpoint can forget it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rest_framework import serializers
from rest_framework.fields import empty

STRING, INTEGER, NUMBER, BOOLEAN = "string", "integer", "number", "boolean"
_ARTICLE = {STRING: "a string", INTEGER: "an integer", NUMBER: "a number", BOOLEAN: "a boolean"}
_QUERY_SYNTAX = {
    INTEGER: re.compile(r"^[+-]?\d+$"),
    NUMBER: re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$"),
    BOOLEAN: re.compile(r"^(true|false)$"),
}
# Fields whose value is any JSON, or that never read input.
_UNTYPED = (
    serializers.JSONField,
    serializers.ReadOnlyField,
    serializers.HiddenField,
    serializers.SerializerMethodField,
)
_STRING_FIELDS = (
    serializers.CharField,
    serializers.DateTimeField,
    serializers.DateField,
    serializers.TimeField,
    serializers.DurationField,
    serializers.UUIDField,
)


def json_type(field: serializers.Field) -> str | None:
    """The JSON type a scalar field reads; None for containers, untyped and unknown fields.
    A custom field declares its own with a ``json_type`` class attribute."""
    declared = getattr(field, "json_type", None)
    if declared is not None:
        return str(declared)
    if isinstance(field, serializers.BooleanField):
        return BOOLEAN
    if isinstance(field, serializers.IntegerField):
        return INTEGER
    if isinstance(field, serializers.FloatField | serializers.DecimalField):
        return NUMBER
    if isinstance(field, serializers.ChoiceField) and not isinstance(field, serializers.MultipleChoiceField):
        kinds = {_kind_of(choice) for choice in field.choices}
        return kinds.pop() if len(kinds) == 1 else None
    if isinstance(field, _STRING_FIELDS):
        return STRING
    return None


def _kind_of(value: Any) -> str:
    if isinstance(value, bool):
        return BOOLEAN
    if isinstance(value, int):
        return INTEGER
    if isinstance(value, float):
        return NUMBER
    if isinstance(value, str):
        return STRING
    if isinstance(value, list | tuple):
        return "an array"
    return "an object"


def _matches(kind: str, value: Any, from_query: bool) -> bool:
    if from_query:  # every value of a query string is text; its syntax says what it holds
        pattern = _QUERY_SYNTAX.get(kind)
        return isinstance(value, str) and (pattern is None or bool(pattern.match(value)))
    actual = _kind_of(value)
    if kind == NUMBER:
        return actual in {INTEGER, NUMBER}
    if kind == INTEGER and actual == NUMBER:
        return float(value).is_integer()  # JSON Schema counts 2.0 as an integer
    return actual == kind


def type_errors(field: serializers.Field, value: Any, *, from_query: bool = False) -> Any:
    """DRF-style error detail for a value of the wrong JSON type (items of lists and dicts
    included), or None. Nested serializers are left to check themselves."""
    if value is None or isinstance(field, (serializers.BaseSerializer, *_UNTYPED)):
        return None
    if isinstance(field, serializers.ListField | serializers.MultipleChoiceField):
        child = field.child if isinstance(field, serializers.ListField) else serializers.ChoiceField(field.choices)
        if not isinstance(value, list):
            return None  # DRF refuses a non-list itself, naming the field
        items = {index: type_errors(child, item, from_query=from_query) for index, item in enumerate(value)}
        return {index: detail for index, detail in items.items() if detail} or None
    if isinstance(field, serializers.DictField):
        if not isinstance(value, dict):
            return None
        entries = {key: type_errors(field.child, item, from_query=from_query) for key, item in value.items()}
        return {key: detail for key, detail in entries.items() if detail} or None
    kind = json_type(field)
    if kind is None or _matches(kind, value, from_query):
        return None
    if from_query:
        return [f"must be {_ARTICLE[kind]}"]
    return [f"must be {_ARTICLE[kind]}, not {_described(value)}"]


def _described(value: Any) -> str:
    kind = _kind_of(value)
    return "a number" if kind in {INTEGER, NUMBER} else _ARTICLE.get(kind, kind)


# No docstrings on the two bases: drf-spectacular would copy them into every input's description.
class Serializer(serializers.Serializer):
    # Base of every serializer that reads a JSON body: values must have their field's JSON type.

    reads_query_string = False

    def to_internal_value(self, data: Any) -> Any:
        wrong = self.wrong_types(data) if isinstance(data, Mapping) else {}
        try:
            value = super().to_internal_value(data)
        except serializers.ValidationError as exc:
            if wrong and isinstance(exc.detail, dict):
                raise serializers.ValidationError({**exc.detail, **wrong})
            raise
        if wrong:
            raise serializers.ValidationError(wrong)
        missing = self.missing_in_nested_partial(data)
        if missing:
            raise serializers.ValidationError(missing)
        return value

    def missing_in_nested_partial(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """A partial update (PATCH) leaves out fields of the resource, not of a nested object it
        sends whole (an item of a list): DRF applies the root's ``partial`` to the whole tree,
        so a nested serializer checks its own required fields here."""
        if self.parent is None or not getattr(self.root, "partial", False):
            return {}
        return {
            name: [field.error_messages["required"]]
            for name, field in self.fields.items()
            if field.required and not field.read_only and field.get_value(data) is empty
        }

    def wrong_types(self, data: Mapping[str, Any]) -> dict[str, Any]:
        errors: dict[str, Any] = {}
        for name, field in self.fields.items():
            if field.read_only:
                continue
            value = field.get_value(data)
            if value is empty:
                continue
            detail = type_errors(field, value, from_query=self.reads_query_string)
            if detail:
                errors[name] = detail
        return errors


class QuerySerializer(Serializer):
    # Base of every serializer that reads a query string: numbers and booleans must be written
    # as such (``limit=20``, not ``limit=2e1`` or ``limit= 20``).

    reads_query_string = True


def strictness_problems(serializer: Any, *, query: bool = False, path: str = "") -> list[str]:
    """Why ``serializer`` (a class or an instance, nested ones included) would coerce a value of
    the wrong type: an empty list when it is strict."""
    instance = serializer() if isinstance(serializer, type) else serializer
    if isinstance(instance, serializers.ListSerializer):
        return strictness_problems(instance.child, query=query, path=f"{path}[]")
    base = QuerySerializer if query else Serializer
    name = path or type(instance).__name__
    if not isinstance(instance, base):
        return [f"{name}: {type(instance).__name__} does not derive from core.serializers.{base.__name__}"]
    problems: list[str] = []
    for field_name, field in instance.fields.items():
        if not field.read_only:
            problems += _field_problems(field, f"{name}.{field_name}", query)
    return problems


def _field_problems(field: serializers.Field, path: str, query: bool) -> list[str]:
    if isinstance(field, serializers.BaseSerializer):
        return strictness_problems(field, query=query, path=path)
    if isinstance(field, serializers.ListField | serializers.DictField):
        return _field_problems(field.child, f"{path}[]", query)
    if isinstance(field, _UNTYPED) or json_type(field) is not None:
        return []
    if isinstance(field, serializers.MultipleChoiceField) and json_type(serializers.ChoiceField(field.choices)):
        return []
    return [f"{path}: the JSON type of {type(field).__name__} is unknown (declare json_type on the field class)"]
