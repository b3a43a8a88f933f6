"""Site-root endpoints of local storage: the signed upload PUT and public file serving. Neither
takes an Authorization header: the signature (PUT) or the unguessable key (GET) is the authority."""

from __future__ import annotations

from django.conf import settings
from django.http import FileResponse, HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from core.errors import ApplicationError, NotFound
from core.responses import json_error
from media.selectors import media_file_for_serving
from media.services import media_upload_receive
from media.storage import get_media_storage


@csrf_exempt
@require_http_methods(["PUT"])
def upload(request: HttpRequest, key: str) -> HttpResponse:
    if settings.STORAGE != "local":
        return json_error(NotFound("Uploads go to the storage service's presigned URL"))
    try:
        media = media_upload_receive(
            key=key,
            expires=request.GET.get("expires", ""),
            content_type=request.GET.get("contentType", ""),
            signature=request.GET.get("signature", ""),
            request_content_type=request.META.get("CONTENT_TYPE", ""),
            content_length=request.META.get("CONTENT_LENGTH"),
            body=request,
        )
    except ApplicationError as error:
        # The WSGI server discards (or closes on) whatever of the body was left unread.
        return json_error(error)
    return JsonResponse({"key": media.key, "size": media.size}, status=200)


@require_http_methods(["GET", "HEAD"])
def serve(request: HttpRequest, key: str) -> HttpResponseBase:
    if settings.STORAGE != "local":
        return json_error(NotFound("File not found"))
    found = media_file_for_serving(key=key)
    if found is None:
        return json_error(NotFound("File not found"))
    storage_key, mime_type = found
    try:
        handle = get_media_storage().open(storage_key)
    except (FileNotFoundError, OSError):
        return json_error(NotFound("File not found"))
    response = FileResponse(handle, content_type=mime_type)
    response["Cache-Control"] = "public, max-age=86400"
    response["X-Content-Type-Options"] = "nosniff"
    return response
