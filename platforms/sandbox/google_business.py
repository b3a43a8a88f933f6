"""Google Business Profile simulator: Google OAuth, the Account Management API (accounts), the
Business Information API (locations), v4 localPosts (create, get, list; PROCESSING then LIVE
when a photo is attached) and localPosts:reportInsights with views that grow over time.

The revoked flag may be set on the simulated Google user, on the account or location number,
or on the full ``accounts/…/locations/…`` id."""

from __future__ import annotations

import secrets
import time
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import path

from platforms.base import Platform
from platforms.sandbox import audience, media_checks, pages
from platforms.sandbox._google_common import account_of, google_error, oauth_urlpatterns, page_window, unauthenticated
from platforms.sandbox.common import as_dict, digest, fetch_media, grown, iso, sniff_kind
from platforms.sandbox.scenarios import marker
from platforms.sandbox.store import SandboxStore
from platforms.sandbox.views import json_body, simulator_view

SLUG = "google_business"
store = SandboxStore(SLUG)
view = simulator_view(SLUG)

TOPICS = {"STANDARD", "EVENT", "OFFER"}
CTA_TYPES = {"BOOK", "ORDER", "SHOP", "LEARN_MORE", "SIGN_UP", "CALL"}
MAX_PHOTO_BYTES = 5 * 1024 * 1024


def _new_user() -> str:
    user_id = store.new_id("u")
    account = str(secrets.randbelow(10**17) + 10**17)
    locations = [str(secrets.randbelow(10**17) + 10**17) for _ in range(2)]
    store.put("user", user_id, {"id": user_id, "account": account, "locations": locations, "created": time.time()})
    for index, location in enumerate(locations):
        store.put(
            "location",
            location,
            {"account": account, "user": user_id, "title": f"Sandbox Bakery #{index + 1}", "created": time.time()},
        )
    return user_id


def _user(request: HttpRequest, *ids: str) -> dict[str, Any] | None:
    user_id = account_of(store, request)
    if user_id is None:
        return None
    full = f"accounts/{ids[0]}/locations/{ids[1]}" if len(ids) == 2 else ""
    if any(store.is_revoked(i) for i in (*ids, full) if i):
        return None
    return store.get("user", user_id)


@view
def accounts(request: HttpRequest) -> HttpResponse:
    user = _user(request)
    if user is None:
        return unauthenticated()
    return JsonResponse(
        {
            "accounts": [
                {
                    "name": f"accounts/{user['account']}",
                    "accountName": "Sandbox Bakeries",
                    "type": "PERSONAL",
                    "role": "PRIMARY_OWNER",
                    "verificationState": "VERIFIED",
                    "permissionLevel": "OWNER_LEVEL",
                    "vettedState": "NOT_VETTED",
                }
            ]
        }
    )


def _place_url(location_id: str, post_id: str = "") -> str:
    """The business on Google (a local post's ``searchUrl`` when ``post_id`` is given): the
    simulator's page of it, the simulated business having no other."""
    query = urlencode({"id": location_id, **({"use": "posts", "lpsid": post_id} if post_id else {})})
    return f"{pages.public_base(SLUG)}/place?{query}"


def _location_view(location_id: str, location: dict[str, Any], mask: set[str]) -> dict[str, Any]:
    full = {
        "name": f"locations/{location_id}",
        "title": location["title"],
        "websiteUri": _place_url(location_id),
        "storefrontAddress": {"regionCode": "US", "locality": "Springfield", "addressLines": ["1 Main St"]},
    }
    return {k: v for k, v in full.items() if k in mask}


def _mask(request: HttpRequest) -> set[str] | None:
    mask = {m.strip() for m in request.GET.get("readMask", "").split(",") if m.strip()}
    return mask or None


@view
def locations(request: HttpRequest, account_id: str) -> HttpResponse:
    user = _user(request, account_id)
    if user is None:
        return unauthenticated()
    mask = _mask(request)
    if mask is None:
        return google_error(400, "badRequest", "Request contains an invalid argument: readMask is required.")
    if account_id != user["account"]:
        return google_error(403, "forbidden", "The caller does not have permission")
    items = [_location_view(i, store.get("location", i) or {}, mask) for i in user["locations"]]
    window = page_window(request, items, size_param="pageSize", default=10, maximum=100)
    if window is None:
        return google_error(400, "badRequest", "Invalid pageSize or pageToken.")
    body: dict[str, Any] = {"locations": window[0]}
    if window[1]:
        body["nextPageToken"] = window[1]
    return JsonResponse(body)


@view
def location(request: HttpRequest, location_id: str) -> HttpResponse:
    doc = store.get("location", location_id)
    user = _user(request, doc["account"] if doc else "", location_id)
    if user is None:
        return unauthenticated()
    mask = _mask(request)
    if mask is None:
        return google_error(400, "badRequest", "Request contains an invalid argument: readMask is required.")
    if doc is None or doc["user"] != user["id"]:
        return google_error(404, "notFound", "Requested entity was not found.")
    return JsonResponse(_location_view(location_id, doc, mask))


def _post_view(post: dict[str, Any]) -> dict[str, Any]:
    hidden = {"created", "updated", "user", "polls"}
    return {
        **{k: v for k, v in post.items() if k not in hidden},
        "createTime": iso(post["created"]),
        "updateTime": iso(post.get("updated") or post["created"]),
    }


def _validate(body: dict[str, Any]) -> str | None:
    summary = str(body.get("summary") or "")
    topic = body.get("topicType")
    if topic not in TOPICS or len(summary) > 1500 or not body.get("languageCode"):
        return "languageCode, topicType (STANDARD|EVENT|OFFER) and a summary of at most 1500 characters are required"
    cta = body.get("callToAction")
    if cta is not None and (
        cta.get("actionType") not in CTA_TYPES or (cta["actionType"] != "CALL" and not cta.get("url"))
    ):
        return "callToAction needs a valid actionType and a url (except CALL)"
    if topic in {"EVENT", "OFFER"}:
        event = body.get("event") or {}
        schedule = event.get("schedule") or {}
        if not event.get("title") or not schedule.get("startDate") or not schedule.get("endDate"):
            return "event.title and event.schedule with startDate and endDate are required for EVENT and OFFER posts"
    if topic != "OFFER" and body.get("offer"):
        return "offer is only valid for OFFER posts"
    media = body.get("media") or []
    if len(media) > 1:
        return "A local post takes at most one photo"
    for item in media:
        fetched = fetch_media(str(item.get("sourceUrl") or ""), max_bytes=MAX_PHOTO_BYTES)
        if item.get("mediaFormat") != "PHOTO" or fetched is None or sniff_kind(fetched[0]) != "image":
            return "The media item could not be fetched or is not a photo"
        if (problem := media_checks.refusal(Platform.GOOGLE_BUSINESS, "FEED", fetched[0])) is not None:
            return problem
    return None


@view
def local_posts(request: HttpRequest, account_id: str, location_id: str) -> HttpResponse:
    user = _user(request, account_id, location_id)
    if user is None:
        return unauthenticated()
    if account_id != user["account"] or location_id not in user["locations"]:
        return google_error(403, "forbidden", "The caller does not have permission")
    prefix = f"accounts/{account_id}/locations/{location_id}"
    if request.method == "GET":
        mine = sorted((p for p in store.all("post") if p["name"].startswith(prefix + "/")), key=lambda p: -p["created"])
        window = page_window(request, [_post_view(p) for p in mine], size_param="pageSize", default=20, maximum=100)
        if window is None:
            return google_error(400, "badRequest", "Invalid pageSize or pageToken.")
        body: dict[str, Any] = {"localPosts": window[0]}
        if window[1]:
            body["nextPageToken"] = window[1]
        return JsonResponse(body)
    data = json_body(request)
    summary = str(data.get("summary") or "")
    scenario = marker(summary)
    if scenario == "unauthorized":
        return unauthenticated()
    request.sandbox_log = {"publish": True, "marker": None}  # type: ignore[attr-defined]
    if scenario == "flaky" and store.first_time(digest("flaky", location_id, summary)):
        return google_error(503, "backendError", "The service is currently unavailable.")
    if scenario == "fail":
        return google_error(400, "invalid", "Request contains an invalid argument: the post violates content policy.")
    problem = _validate(data)
    if problem:
        return google_error(400, "badRequest", f"Request contains an invalid argument: {problem}")
    post_id = str(secrets.randbelow(10**18) + 10**18)
    post = {
        "name": f"{prefix}/localPosts/{post_id}",
        "languageCode": data["languageCode"],
        "summary": summary,
        "topicType": data["topicType"],
        "state": "PROCESSING" if data.get("media") else "LIVE",
        "searchUrl": _place_url(location_id, post_id),
        "created": time.time(),
        "user": user["id"],
        "polls": 0,
        **{k: data[k] for k in ("callToAction", "event", "offer", "media") if data.get(k)},
    }
    store.put("post", post_id, post)
    request.sandbox_log["remoteId"] = post["name"]  # type: ignore[attr-defined]
    return JsonResponse(_post_view(post))


@view
def local_post(request: HttpRequest, account_id: str, location_id: str, post_id: str) -> HttpResponse:
    user = _user(request, account_id, location_id)
    if user is None:
        return unauthenticated()
    post = store.get("post", post_id)
    if request.method in ("PATCH", "DELETE"):
        kind = "edit" if request.method == "PATCH" else "delete"
        name = f"accounts/{account_id}/locations/{location_id}/localPosts/{post_id}"
        request.sandbox_log = {kind: True, "remoteId": name}  # type: ignore[attr-defined]
    if post is None or post["user"] != user["id"] or not post["name"].startswith(f"accounts/{account_id}/"):
        return google_error(404, "notFound", "Requested entity was not found.")
    if request.method == "DELETE":
        store.delete("post", post_id)
        return JsonResponse({})
    if request.method == "PATCH":
        return _patch_post(request, post)
    if post["state"] == "PROCESSING":  # the photo is fetched by the next read
        post = store.update("post", post_id, state="LIVE") or post
    return JsonResponse(_post_view(post))


def _patch_post(request: HttpRequest, post: dict[str, Any]) -> HttpResponse:
    """``localPosts.patch``: the fields named in ``updateMask`` are taken from the body (every
    other one stays), validated as a new post is."""
    mask = {m.strip() for m in request.GET.get("updateMask", "").split(",") if m.strip()}
    editable = {"summary", "callToAction", "event", "offer", "media"}
    if not mask or mask - editable:
        return google_error(400, "badRequest", f"Request contains an invalid argument: updateMask {sorted(mask)}.")
    data = json_body(request)
    changed = {**post, **{field: data.get(field) for field in mask}}
    summary = str(changed.get("summary") or "")
    request.sandbox_log["text"] = summary[:80]  # type: ignore[attr-defined]
    if "media" in mask:
        request.sandbox_log["media"] = [str(m.get("sourceUrl") or "") for m in changed.get("media") or []]  # type: ignore[attr-defined]
    scenario = marker(summary)
    if scenario == "unauthorized":
        return unauthenticated()
    if scenario == "fail":
        return google_error(400, "invalid", "Request contains an invalid argument: the post violates content policy.")
    problem = _validate(changed)
    if problem:
        return google_error(400, "badRequest", f"Request contains an invalid argument: {problem}")
    post = (
        store.update("post", post["name"].rsplit("/", 1)[-1], **{f: changed[f] for f in mask}, updated=time.time())
        or post
    )
    return JsonResponse(_post_view(post))


@view
def report_insights(request: HttpRequest, account_id: str, location_id: str) -> HttpResponse:
    user = _user(request, account_id, location_id)
    if user is None:
        return unauthenticated()
    body = json_body(request)
    names = body.get("localPostNames")
    basic = as_dict(body.get("basicRequest"))
    requested = basic.get("metricRequests")
    metrics = [str(m.get("metric")) for m in requested if isinstance(m, dict)] if isinstance(requested, list) else []
    time_range = as_dict(basic.get("timeRange"))
    if not isinstance(names, list) or not 1 <= len(names) <= 10 or not metrics or not time_range.get("startTime"):
        return google_error(400, "badRequest", "localPostNames (1-10), metricRequests and timeRange are required")
    rates = {"LOCAL_POST_VIEWS_SEARCH": 180, "LOCAL_POST_ACTIONS_CALL_TO_ACTION": 12}
    entries = []
    for name in names:
        post = store.get("post", str(name).rsplit("/", 1)[-1])
        if post is None or post["name"] != name:
            continue
        values = [
            {
                "metric": m,
                "totalValue": {
                    "metricOption": "AGGREGATED_TOTAL",
                    "timeDimension": {"timeRange": time_range},
                    "value": str(grown(post["created"], rates.get(m, 0))),
                },
            }
            for m in metrics
        ]
        entries.append({"localPostName": name, "metricValues": values})
    return JsonResponse(
        {
            "name": f"accounts/{account_id}/locations/{location_id}",
            "localPostMetrics": entries,
            "timeZone": "America/Los_Angeles",
        }
    )


@view
def location_media(request: HttpRequest, account_id: str, location_id: str) -> HttpResponse:
    """The location's photos: its profile picture only."""
    user = _user(request, account_id, location_id)
    if user is None:
        return unauthenticated()
    doc = store.get("location", location_id)
    if doc is None or doc["user"] != user["id"] or doc["account"] != account_id:
        return google_error(404, "notFound", "Requested entity was not found.")
    name = f"accounts/{account_id}/locations/{location_id}/media/profile"
    picture = pages.avatar_url(SLUG, location_id)
    item = {
        "name": name,
        "mediaFormat": "PHOTO",
        "locationAssociation": {"category": "PROFILE"},
        "googleUrl": picture,
        "thumbnailUrl": picture,
        "createTime": iso(doc["created"]),
        "dimensions": {"widthPixels": 200, "heightPixels": 200},
    }
    return JsonResponse({"mediaItems": [item], "totalMediaItemCount": 1})


# --- reviews: the audience (platforms.sandbox.audience) as the location's reviews --------------
# The audience's "post" is the location (``accounts/{a}/locations/{l}``, the account's external
# id); each of its comments is a review named ``…/reviews/<REVIEW_ID_PREFIX><key>``. The owner's
# one reply per review is set with ``PUT …/reply`` (again: replaced) and removed with
# ``DELETE …/reply``; reviews themselves can be neither hidden nor deleted by the owner.

REVIEW_ID_PREFIX = "AbFvOq"
REPLY_LIMIT = 4096
STARS = {1: "ONE", 2: "TWO", 3: "THREE", 4: "FOUR", 5: "FIVE"}


def platform_comment_id(neutral: str, parent: str = "") -> str:
    """The id this simulator gives the audience comment ``neutral`` (an id of
    :mod:`platforms.sandbox.audience`; ``parent`` its parent's, "" for one under the post), so a
    test predicts the ids a sync must find."""
    return f"{audience.split_id(neutral)[0]}/reviews/{REVIEW_ID_PREFIX}{audience.split_id(neutral)[1]}"


def _owned_location(request: HttpRequest, account_id: str, location_id: str) -> dict[str, Any] | HttpResponse:
    """The location document, or the error to answer with."""
    user = _user(request, account_id, location_id)
    if user is None:
        return unauthenticated()
    doc = store.get("location", location_id)
    if doc is None or doc["user"] != user["id"] or doc["account"] != account_id:
        return google_error(404, "notFound", "Requested entity was not found.")
    return doc


def _every_review(account_id: str, location_id: str, doc: dict[str, Any]) -> list[dict[str, Any]]:
    return audience.thread(store, SLUG, f"accounts/{account_id}/locations/{location_id}", doc["created"])


def _review_view(location_name: str, review: dict[str, Any], every: list[dict[str, Any]]) -> dict[str, Any]:
    review_id = f"{REVIEW_ID_PREFIX}{review['key']}"
    author = review["author"]
    view: dict[str, Any] = {
        "name": f"{location_name}/reviews/{review_id}",
        "reviewId": review_id,
        "reviewer": {"profilePhotoUrl": author["avatar_url"], "displayName": author["name"], "isAnonymous": False},
        "starRating": STARS.get(int(review.get("rating") or 0), "STAR_RATING_UNSPECIFIED"),
        "comment": review["text"],
        "createTime": iso(review["createdAt"]),
        "updateTime": iso(review["createdAt"]),
    }
    answers = [c for c in every if c["parentId"] == review["id"] and c["fromAccount"]]
    if answers:
        view["reviewReply"] = {"comment": answers[-1]["text"], "updateTime": iso(answers[-1]["createdAt"])}
    return view


def _review_of(account_id: str, location_id: str, doc: dict[str, Any], review_id: str) -> dict[str, Any] | None:
    if not review_id.startswith(REVIEW_ID_PREFIX):
        return None
    neutral = audience.comment_id(f"accounts/{account_id}/locations/{location_id}", review_id[len(REVIEW_ID_PREFIX) :])
    every = _every_review(account_id, location_id, doc)
    return next((c for c in every if c["id"] == neutral and not c["parentId"]), None)


@view
def reviews(request: HttpRequest, account_id: str, location_id: str) -> HttpResponse:
    """``accounts.locations.reviews.list``: newest first (``orderBy`` updateTime desc, rating,
    rating desc), ``pageSize`` up to 50, with the average rating and the total count."""
    doc = _owned_location(request, account_id, location_id)
    if isinstance(doc, HttpResponse):
        return doc
    every = _every_review(account_id, location_id, doc)
    tops = [c for c in every if not c["parentId"]]
    order = request.GET.get("orderBy", "updateTime desc")
    if order not in {"updateTime desc", "rating", "rating desc"}:
        return google_error(400, "badRequest", f"Request contains an invalid argument: orderBy {order!r}.")
    if order == "updateTime desc":
        tops.reverse()
    else:
        tops.sort(key=lambda c: int(c.get("rating") or 0), reverse=order == "rating desc")
    name = f"accounts/{account_id}/locations/{location_id}"
    window = page_window(request, tops, size_param="pageSize", default=50, maximum=50)
    if window is None:
        return google_error(400, "badRequest", "Invalid pageSize or pageToken.")
    ratings = [int(c.get("rating") or 0) for c in tops]
    body: dict[str, Any] = {
        "reviews": [_review_view(name, c, every) for c in window[0]],
        "averageRating": round(sum(ratings) / len(ratings), 1) if ratings else 0,
        "totalReviewCount": len(tops),
    }
    if window[1]:
        body["nextPageToken"] = window[1]
    return JsonResponse(body)


@view
def review(request: HttpRequest, account_id: str, location_id: str, review_id: str) -> HttpResponse:
    """``accounts.locations.reviews.get``."""
    doc = _owned_location(request, account_id, location_id)
    if isinstance(doc, HttpResponse):
        return doc
    found = _review_of(account_id, location_id, doc, review_id)
    if found is None:
        return google_error(404, "notFound", "Requested entity was not found.")
    name = f"accounts/{account_id}/locations/{location_id}"
    return JsonResponse(_review_view(name, found, _every_review(account_id, location_id, doc)))


@view
def review_reply(request: HttpRequest, account_id: str, location_id: str, review_id: str) -> HttpResponse:
    """``updateReply`` (``PUT …/reply`` with ``{"comment"}``: the ReviewReply; the same text again
    changes nothing) and ``deleteReply`` (``DELETE …/reply``: ``{}``; 404 without a reply)."""
    name = f"accounts/{account_id}/locations/{location_id}/reviews/{review_id}"
    deleting = request.method == "DELETE"
    request.sandbox_log = {"delete" if deleting else "reply": True, "on": name, "remoteId": f"{name}/reply"}  # type: ignore[attr-defined]
    doc = _owned_location(request, account_id, location_id)
    if isinstance(doc, HttpResponse):
        return doc
    if request.method not in ("PUT", "DELETE"):
        return google_error(405, "badRequest", "Only updateReply (PUT) and deleteReply (DELETE) are simulated")
    found = _review_of(account_id, location_id, doc, review_id)
    if found is None:
        return google_error(404, "notFound", "Requested entity was not found.")
    every = _every_review(account_id, location_id, doc)
    answers = [c for c in every if c["parentId"] == found["id"] and c["fromAccount"]]
    if deleting:
        if not answers:
            return google_error(404, "notFound", "Requested entity was not found.")
        for answer in answers:
            audience.set_state(store, answer["id"], deleted=True)
        return JsonResponse({})
    text = str(json_body(request).get("comment") or "")
    request.sandbox_log["text"] = text[:80]  # type: ignore[attr-defined]
    scenario = marker(text)
    if scenario == "unauthorized":
        return unauthenticated()
    if scenario == "flaky" and store.first_time(digest("flaky-reply", name, text)):
        return google_error(503, "backendError", "The service is currently unavailable.")
    if scenario == "fail" or not text.strip() or len(text) > REPLY_LIMIT:
        return google_error(
            400, "badRequest", f"Request contains an invalid argument: comment must hold 1 to {REPLY_LIMIT} characters."
        )
    if answers and answers[-1]["text"] == text:
        current = answers[-1]
    else:
        for answer in answers:
            audience.set_state(store, answer["id"], deleted=True)
        location = store.get("location", location_id) or {}
        owner = audience.Person(
            f"accounts/{account_id}/locations/{location_id}",
            str(location.get("title") or ""),
            "",
            pages.avatar_url(SLUG, location_id),
        )
        key = f"a{store.redis.incr(store._key('reply-seq'))}"
        reply_id = audience.comment_id(f"accounts/{account_id}/locations/{location_id}", key)
        current = audience.add_reply(
            store, f"accounts/{account_id}/locations/{location_id}", found["id"], text, author=owner, reply_id=reply_id
        )
    return JsonResponse({"comment": current["text"], "updateTime": iso(current["createdAt"])})


def place_page(request: HttpRequest) -> HttpResponse:
    """The business on Google, or one of its local posts (``lpsid``), as ``searchUrl`` opens it."""
    location_id, post_id = request.GET.get("id", ""), request.GET.get("lpsid", "")
    doc = store.get("location", location_id)
    post = store.get("post", post_id) if post_id else {}
    if doc is None or post is None or (post and f"/locations/{location_id}/" not in post["name"]):
        return pages.not_found_page("Google Business Profile")
    media = [str(m.get("sourceUrl") or "") for m in post.get("media") or []]
    return pages.post_page(
        platform="Google Business Profile",
        author=doc["title"],
        text=str(post.get("summary") or ""),
        media=[m for m in media if m],
        avatar=pages.avatar_url(SLUG, location_id),
    )


urlpatterns = [
    *pages.urlpatterns,
    path("place", place_page),
    *oauth_urlpatterns(store, view, _new_user),
    path("mybusinessaccountmanagement/v1/accounts", accounts),
    path("mybusinessbusinessinformation/v1/accounts/<str:account_id>/locations", locations),
    path("mybusinessbusinessinformation/v1/locations/<str:location_id>", location),
    path("v4/accounts/<str:account_id>/locations/<str:location_id>/media", location_media),
    path("v4/accounts/<str:account_id>/locations/<str:location_id>/localPosts", local_posts),
    path("v4/accounts/<str:account_id>/locations/<str:location_id>/localPosts:reportInsights", report_insights),
    path("v4/accounts/<str:account_id>/locations/<str:location_id>/localPosts/<str:post_id>", local_post),
    path("v4/accounts/<str:account_id>/locations/<str:location_id>/reviews", reviews),
    path("v4/accounts/<str:account_id>/locations/<str:location_id>/reviews/<str:review_id>", review),
    path("v4/accounts/<str:account_id>/locations/<str:location_id>/reviews/<str:review_id>/reply", review_reply),
]


# --- armed faults (platforms.sandbox.faults): the Business Profile APIs have per-minute quotas
# only (answered as RESOURCE_EXHAUSTED), no daily one ----------------------------------------
FAULTS = {
    "rate_limited": lambda request: JsonResponse(
        {
            "error": {
                "code": 429,
                "message": "Quota exceeded for quota metric 'Requests' and limit 'Requests per minute' of service "
                "'mybusiness.googleapis.com'.",
                "status": "RESOURCE_EXHAUSTED",
                "details": [
                    {
                        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                        "reason": "RATE_LIMIT_EXCEEDED",
                        "domain": "googleapis.com",
                        "metadata": {
                            "quota_limit": "DefaultRequestsPerMinutePerProject",
                            "service": "mybusiness.googleapis.com",
                        },
                    }
                ],
            }
        },
        status=429,
    ),
    "server_error": lambda request: google_error(503, "backendError", "The service is currently unavailable."),
}
