"""OpenAPI: every operation names its permission and lists the shared error responses."""

from __future__ import annotations

from typing import Any

from drf_spectacular.drainage import error
from drf_spectacular.extensions import OpenApiAuthenticationExtension, OpenApiSerializerFieldExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import is_list_serializer
from rest_framework import serializers

from core.fields import TIME_ZONE_COMPONENT, time_zone_names
from core.idempotency import HEADER as IDEMPOTENCY_HEADER
from core.idempotency import KEY_PATTERN as IDEMPOTENCY_KEY_PATTERN
from core.serializers import strictness_problems
from core.view_permissions import UNDECLARED, required_permission

ERROR_SCHEMA = {
    "type": "object",
    "required": ["statusCode", "error", "message"],
    "properties": {
        "statusCode": {"type": "integer", "example": 400, "description": "The HTTP status, repeated."},
        "error": {"type": "string", "example": "Bad Request", "description": "The HTTP status's reason phrase."},
        "message": {
            "oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
            "description": "A sentence, or for validation errors a list of sentences each naming its field.",
        },
        "code": {"type": "string", "description": "Stable snake_case code, e.g. permission_denied."},
        "requiredPermission": {
            "type": "string",
            "description": "On permission_denied: the permission needed.",
        },
        "role": {"type": "string", "description": "On permission_denied: the caller's role key."},
        "limit": {
            "type": "string",
            "enum": [
                "workspaces",
                "connectedAccounts",
                "postsPerMonth",
                "aiGenerationsPerMonth",
                "webhooksPerWorkspace",
            ],
            "description": "On subscription_required: the limit of the organization's plan that was reached.",
        },
        "plan": {"type": "string", "description": "On subscription_required: the name of the organization's plan."},
        "max": {"type": "integer", "description": "On subscription_required: the plan's value of that limit."},
        "used": {"type": "integer", "description": "On subscription_required: how much of it is used now."},
        "tokenType": {
            "type": "string",
            "enum": ["api_token", "oauth"],
            "description": "On permission_denied: the kind of credential used.",
        },
        "platform": {
            "type": "string",
            "description": "On comment_action_not_supported: the comment's platform.",
        },
        "action": {
            "type": "string",
            "enum": ["read", "reply", "hide", "delete_own", "delete_others", "like"],
            "description": "On comment_action_not_supported: what the platform's comment API does not offer "
            "(GET /platforms, comments.actions).",
        },
    },
}
RATE_HEADERS = {
    "RateLimit-Policy": {"schema": {"type": "string"}, "description": "Quota and window, e.g. `600;w=60`."},
    "RateLimit-Limit": {"schema": {"type": "integer"}, "description": "Requests allowed per window."},
    "RateLimit-Remaining": {"schema": {"type": "integer"}, "description": "Requests left in this window."},
    "RateLimit-Reset": {"schema": {"type": "integer"}, "description": "Seconds until the window rolls over."},
    "X-Request-Id": {"schema": {"type": "string"}, "description": "Echo of the client's id, or a new one."},
}
MIN_PROPERTIES = "x-min-properties"  # OpenAPI extensions must start with x-; turned into minProperties
IDEMPOTENCY_KEY_SCHEMA = {"type": "string", "minLength": 1, "maxLength": 255, "pattern": IDEMPOTENCY_KEY_PATTERN}
SHARED_ERRORS = {
    "400": "Validation error: `message` lists what is wrong, each naming its field. A body that is not "
    "strict JSON (a key repeated in an object at any depth, NaN or Infinity, a NUL character, nesting "
    "beyond 32 levels) is refused with `code: malformed_body`, `message` naming the problem (the key). "
    "An organization key (`cpo_…`) that names no workspace in X-Workspace-Id gets `code: workspace_required`.",
    "401": "API key is invalid or missing (`code: unauthorized`).",
    "403": "The key lacks the permission (`code: permission_denied`, `requiredPermission`), the "
    "workspace named by X-Workspace-Id is unreachable (`code: workspace_access_denied`) or deleted "
    "(`code: workspace_inactive`), or the organization's plan does not allow this "
    "(`code: subscription_required`, naming `limit` and `plan`).",
    "404": "Not found in this workspace.",
    "409": "Conflict with the resource's current state, or a request with the same Idempotency-Key is still "
    "running (`code: idempotency_in_progress`).",
    "413": "The request body is larger than the service accepts.",
    "422": "This Idempotency-Key was already used with a different request (`code: idempotency_key_reused`).",
    "429": "Rate limit exceeded; see Retry-After.",
    "503": "A server this operation needs (Redis) is unreachable just now (`code: service_unavailable`); "
    "retry after Retry-After seconds.",
}
WORKSPACE_HEADER = {
    "in": "header",
    "name": "X-Workspace-Id",
    "required": False,
    "schema": {"type": "string"},
    "description": "The workspace to act in (an `id` of GET /workspaces). An organization key (`cpo_…`) names "
    "one of its organization's workspaces here, and acts there with the key's role; it must, except on "
    "/me and /workspaces (`400 workspace_required` otherwise). A workspace key (`cpk_…`) may send its own "
    "workspace's id or nothing; an OAuth sign-in without it acts in the member's default workspace. A "
    "workspace the caller cannot reach: `403 workspace_access_denied`.",
}
# Set by ``extend_schema(extensions={NEEDS_REDIS: True})`` on operations that cannot answer
# without Redis: they document the 503.
NEEDS_REDIS = "x-needs-redis"


class ServiceAutoSchema(AutoSchema):
    def get_operation(self, *args: Any, **kwargs: Any) -> dict[str, Any] | None:
        operation = super().get_operation(*args, **kwargs)
        if operation is None:
            return None
        for problem in self.strictness_problems():
            error(f"input is not strict: {problem}")
        permission = required_permission(self.view, self.method)
        if permission is not UNDECLARED:
            line = (
                f"**Permission:** `{permission}`."
                if permission
                else "**Permission:** any valid key, whatever its role."
            )
            base = operation.get("description", "")
            if "**Permission:**" not in base:
                operation["description"] = f"{base}\n\n{line}".strip()
            operation["x-required-permission"] = permission
        if self._handler_is_idempotent():
            parameters = operation.setdefault("parameters", [])
            if not any(p.get("in") == "header" and p.get("name") == IDEMPOTENCY_HEADER for p in parameters):
                parameters.append(
                    {
                        "in": "header",
                        "name": IDEMPOTENCY_HEADER,
                        "required": False,
                        "schema": dict(IDEMPOTENCY_KEY_SCHEMA),
                        "description": "Repeat within 24 h returns the first response and never acts twice.",
                    }
                )
        return operation

    def strictness_problems(self) -> list[str]:
        """Why this operation's body or query serializers would coerce a wrong-typed value
        (core.serializers); reported as schema errors so that ``make schema`` fails."""
        problems: list[str] = []
        if self.method in {"POST", "PUT", "PATCH"}:
            request = self.get_request_serializer()
            if isinstance(request, serializers.BaseSerializer) or (
                isinstance(request, type) and issubclass(request, serializers.BaseSerializer)
            ):
                problems += strictness_problems(request)
        for parameter in self.get_override_parameters():
            if isinstance(parameter, serializers.BaseSerializer) or (
                isinstance(parameter, type) and issubclass(parameter, serializers.BaseSerializer)
            ):
                problems += strictness_problems(parameter, query=True)
        return problems

    def _handler_is_idempotent(self) -> bool:
        action = getattr(self.view, "action", None)
        handler = getattr(self.view, action or self.method.lower(), None)
        return bool(getattr(handler, "idempotent", False))

    def _is_list_view(self, serializer: Any = None) -> bool:
        # drf-spectacular documents a ``list`` action as a bare array of its response serializer;
        # every list here answers an object ({posts, total, hasMore}, {accounts}, ...), so only a
        # serializer declared with many=True documents an array.
        if serializer is None:
            serializer = self.get_response_serializers()
        if isinstance(serializer, dict) and serializer:
            serializer = {str(code): s for code, s in serializer.items()}
            serializer = serializer[min(serializer)]
        return is_list_serializer(serializer)

    def get_tags(self) -> list[str]:
        tags = getattr(self.view, "schema_tags", None)
        return list(tags) if tags else super().get_tags()


# What Django's URLValidator (behind every DRF URLField) accepts, as far as a portable pattern
# says it: http(s)/ftp(s), a dotted host name whose last label is 2-63 letters, an optional
# port, then no whitespace. (Django also takes IP addresses and non-ASCII host names; a pattern
# describing a subset keeps generated clients' URLs acceptable.)
URL_PATTERN = (
    r"^([Hh][Tt][Tt][Pp][Ss]?|[Ff][Tt][Pp][Ss]?)://"
    r"([A-Za-z0-9]([A-Za-z0-9-]{0,20}[A-Za-z0-9])?\.){1,4}[A-Za-z]{2,63}\.?"
    r"(:[0-9]{1,5})?([/?#][^\s]*)?$"
)


class URLFieldPattern(OpenApiSerializerFieldExtension):
    """Every URLField of a request documents the pattern above; ``format: uri`` alone admits
    URLs (``a:b``, ``http://x``) the validator refuses."""

    target_class = "rest_framework.fields.URLField"
    match_subclasses = True

    def map_serializer_field(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        # The default mapping, as drf-spectacular's extension documentation says to obtain it.
        schema: dict[str, Any] = auto_schema._map_serializer_field(self.target, direction, bypass_extensions=True)
        if direction == "request":
            schema["pattern"] = URL_PATTERN
        return schema


# "Holds a character that is not whitespace", with whitespace as Python's str.strip() sees it
# (it trims the value): spelled out, since regex engines disagree on \s (ECMA leaves out U+0085
# and counts U+FEFF).
NOT_ONLY_WHITESPACE = r"[^\t\n\u000b\f\r\u001c-\u001f \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"


class NonBlankCharFieldPattern(OpenApiSerializerFieldExtension):
    """A CharField that trims whitespace and refuses a blank value refuses a value made of
    whitespace alone (``"\\r"``), which ``minLength: 1`` admits: its requests say so."""

    target_class = "rest_framework.fields.CharField"  # exactly CharField: subclasses describe themselves

    def refuses_whitespace_only(self) -> bool:
        return bool(self.target.trim_whitespace and not self.target.allow_blank)

    def map_serializer_field(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        schema: dict[str, Any] = auto_schema._map_serializer_field(self.target, direction, bypass_extensions=True)
        if direction == "request" and self.refuses_whitespace_only():
            schema.setdefault("pattern", NOT_ONLY_WHITESPACE)
        return schema


class UntrimmedTextFieldPattern(NonBlankCharFieldPattern):
    target_class = "core.fields.UntrimmedTextField"

    def refuses_whitespace_only(self) -> bool:
        return not self.target.allow_blank  # checked by the field itself, without trimming


class BearerAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "workspaces.authentication.BearerAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A workspace API key (`cpk_…`: acts in its own workspace), an organization key "
            "(`cpo_…`: acts in any workspace of its organization named by X-Workspace-Id, with the key's role, "
            "and holds its own organization permissions: workspaces.manage, keys.manage, usage.read, "
            "audit.read), or a member's OAuth access token.",
        }


def only_public_api(endpoints: list[tuple[str, str, str, Any]], **kwargs: Any) -> list[tuple[str, str, str, Any]]:
    return [e for e in endpoints if e[0].startswith("/api/v1/") and not e[0].startswith("/api/v1/openapi")]


def add_shared_components(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    components = result.setdefault("components", {})
    components.setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    components["schemas"][TIME_ZONE_COMPONENT] = {
        "type": "string",
        "enum": sorted(time_zone_names()),
        "description": "An IANA time zone name, as the tz database spells it (Europe/Paris, UTC).",
    }
    responses = components.setdefault("responses", {})
    for status, description in SHARED_ERRORS.items():
        responses[f"Error{status}"] = {
            "description": description,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        }
    for schema in components["schemas"].values():
        # extend_schema_serializer(extensions={MIN_PROPERTIES: n}): a body that must name at least n fields.
        if MIN_PROPERTIES in schema:
            schema["minProperties"] = schema.pop(MIN_PROPERTIES)
    components.setdefault("headers", {}).update(RATE_HEADERS)
    header_refs = {name: {"$ref": f"#/components/headers/{name}"} for name in RATE_HEADERS}
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            if method not in {"get", "post", "put", "patch", "delete"}:
                continue
            parameters = operation.setdefault("parameters", [])
            if not any(p.get("in") == "header" and p.get("name") == WORKSPACE_HEADER["name"] for p in parameters):
                parameters.append(dict(WORKSPACE_HEADER))
            for parameter in parameters:
                if parameter.get("in") == "header" and parameter.get("name") == IDEMPOTENCY_HEADER:
                    parameter["schema"] = dict(IDEMPOTENCY_KEY_SCHEMA)  # however the view declared it
            body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
            ref = body.get("$ref", "").rsplit("/", 1)[-1]
            if components["schemas"].get(ref, {}).get("minProperties"):
                operation["requestBody"]["required"] = True  # no body has no properties
            op_responses = operation.setdefault("responses", {})
            for code, response in op_responses.items():
                if code.startswith("2"):
                    response.setdefault("headers", {}).update(header_refs)
                elif "$ref" not in response and "content" not in response:
                    # An error declared with its own description only: its body is the one error body.
                    response["content"] = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
            wanted = ["401", "403", "429"]
            if "{" in path:
                wanted.append("404")
            if method in {"post", "patch", "put"} or operation.get("parameters"):
                wanted.append("400")
            if "requestBody" in operation:
                wanted.append("413")
            if any(
                p.get("in") == "header" and p.get("name") == IDEMPOTENCY_HEADER for p in operation.get("parameters", [])
            ):
                wanted += ["409", "422"]
            if operation.pop(NEEDS_REDIS, False):
                wanted.append("503")
            for code in wanted:
                op_responses.setdefault(code, {"$ref": f"#/components/responses/Error{code}"})
    return result


# --- links: where a path's ids come from ---------------------------------------------------
# An operation that takes an id in its path (``/webhooks/{id}/test``) is linked from the
# operations of the collection before that id (``POST /webhooks`` 201, ``GET /webhooks`` 200),
# which return such ids, so that a client, and schemathesis's stateful phase, can follow them.
# Derived from the paths alone: an operation added tomorrow gets its links the day it is added.
LINK_SOURCES = (("post", "201"), ("get", "200"))  # a collection's create, then its list
# Collections that have neither: the operation whose answer carries their ids (a job's status
# comes from the request that started the job).
OTHER_LINK_SOURCES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "/workspace-deletions": (("/workspaces/{id}", "delete", "202"),),
}


def _path_parameter(segment: str) -> str | None:
    return segment[1:-1] if segment.startswith("{") and segment.endswith("}") else None


def _resolve(schema: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref", "")
    return schemas.get(ref.rsplit("/", 1)[-1], {}) if ref.startswith("#/components/schemas/") else schema


def _id_field_names(parameter: str, collection: str) -> list[str]:
    """The response fields that can carry the id a path parameter takes: a field of its own name
    (``jobId``, ``token``), else ``id``, else ``<resource>Id`` with the resource named by its
    collection in full or by its last word (``socialPostId``, ``postId`` for ``/social-posts``)."""
    words = collection.rsplit("/", 1)[-1].split("-")
    last = words[-1]
    words[-1] = f"{last[:-3]}y" if last.endswith("ies") else last.removesuffix("s")
    full = words[0] + "".join(word.capitalize() for word in words[1:])
    return list(dict.fromkeys([parameter, "id", f"{full}Id", f"{words[-1]}Id"]))


def _id_pointer(body: dict[str, Any], names: list[str], schemas: dict[str, Any]) -> str | None:
    """A JSON pointer to the id in a response body: ``/postId`` in the resource itself, or
    ``/posts/0/id`` in a list's one array of resources (None when there is no such id, or when
    several arrays would be a guess)."""
    properties = _resolve(body, schemas).get("properties", {})
    for name in names:
        if name in properties:
            return f"/{name}"
    found = []
    for key, value in properties.items():
        items = _resolve(value.get("items", {}), schemas).get("properties", {}) if value.get("type") == "array" else {}
        found += [f"/{key}/0/{name}" for name in names if name in items][:1]
    return found[0] if len(found) == 1 else None


def add_links(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """For every operation with an id in its path, an OpenAPI link on each response of its
    collection's create and list that returns such an id (the parameters before it are the
    source's own: ``$request.path.id``). A link is named after the operation it leads to."""
    paths, schemas = result.get("paths", {}), result.get("components", {}).get("schemas", {})
    for path, operations in paths.items():
        segments = path.split("/")
        for position, segment in enumerate(segments):
            parameter = _path_parameter(segment)
            if parameter is None or any(_path_parameter(later) for later in segments[position + 1 :]):
                continue  # an id that a later id follows comes from the collection of that later one
            collection = "/".join(segments[:position])
            earlier = [name for name in map(_path_parameter, segments[:position]) if name]
            names = _id_field_names(parameter, collection)
            sources = [(collection, method, status) for method, status in LINK_SOURCES]
            for source, method, status in sources + list(OTHER_LINK_SOURCES.get(collection, ())):
                response = paths.get(source, {}).get(method, {}).get("responses", {}).get(status, {})
                body = response.get("content", {}).get("application/json", {}).get("schema", {})
                pointer = _id_pointer(body, names, schemas)
                if pointer is None:
                    continue
                for target in operations.values():
                    if not isinstance(target, dict) or "operationId" not in target:
                        continue
                    link_parameters = {name: f"$request.path.{name}" for name in earlier}
                    link_parameters[parameter] = f"$response.body#{pointer}"
                    response.setdefault("links", {})[target["operationId"]] = {
                        "operationId": target["operationId"],
                        "parameters": link_parameters,
                        "description": f"The `{parameter}` of {target['operationId']} is this response's `{pointer}`.",
                    }
    return result
