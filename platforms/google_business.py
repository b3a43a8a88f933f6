"""Google Business Profile: Google OAuth (shared with YouTube), accounts from the Account
Management API, locations from the Business Information API (one connected identity per
location, external id ``accounts/…/locations/…``), and local posts through the v4
``localPosts`` endpoint (STANDARD, EVENT and OFFER posts, call to action, one photo).

A local post may come back PROCESSING (e.g. while its photo is fetched): its name is kept in
``state`` and the next call reads it until LIVE (REJECTED → content_rejected).

Metrics: views only, from the v4 ``localPosts:reportInsights`` endpoint (metric
LOCAL_POST_VIEWS_SEARCH, aggregated total). No follower count is offered."""

from __future__ import annotations

import datetime as dt
from typing import Any

from platforms._google_common import GoogleClient
from platforms.base import (
    AccountProfile,
    CommentAuthor,
    CommentPage,
    ConnectedIdentity,
    Credentials,
    EditRequest,
    EditResult,
    ErrorCode,
    Metrics,
    Permanent,
    Platform,
    PublishRequest,
    PublishResult,
    RemoteComment,
    RemotePost,
)
from platforms.capabilities import CAPABILITIES
from platforms.http import as_int, host_url, parse_instant, refuse_edit_fields

LIVE_BASE_URL = "https://mybusiness.googleapis.com"
LIVE_ACCOUNTS_URL = "https://mybusinessaccountmanagement.googleapis.com/v1"
LIVE_INFORMATION_URL = "https://mybusinessbusinessinformation.googleapis.com/v1"
READ_MASK = "name,title,storefrontAddress,websiteUri"
INSIGHTS_BATCH = 10
INSIGHTS_DAYS = 540
PROCESSING_POLL_SECONDS = 5.0
CTA_TYPES = {"BOOK", "ORDER", "SHOP", "LEARN_MORE", "SIGN_UP", "CALL"}
REVIEW_PAGE_SIZE = 50  # reviews.list takes pageSize up to 50
REPLY_LIMIT = 4096  # the longest owner's reply to a review, in characters
REPLY_SUFFIX = "/reply"  # a review's reply has no id of its own: ours is the review's name + this
STARS = {"ONE": 1, "TWO": 2, "THREE": 3, "FOUR": 4, "FIVE": 5}


class Client(GoogleClient):
    platform = Platform.GOOGLE_BUSINESS
    live_base_url = LIVE_BASE_URL
    scopes = ("https://www.googleapis.com/auth/business.manage",)
    review_page_size = REVIEW_PAGE_SIZE

    def _accounts_api(self) -> str:
        return host_url(self.base_url, LIVE_BASE_URL, LIVE_ACCOUNTS_URL, "/mybusinessaccountmanagement/v1")

    def _information_api(self) -> str:
        return host_url(self.base_url, LIVE_BASE_URL, LIVE_INFORMATION_URL, "/mybusinessbusinessinformation/v1")

    def _pages(self, url: str, creds: Credentials, key: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        token = ""
        while True:
            body = self._json("GET", url, creds, params={**params, **({"pageToken": token} if token else {})})
            items.extend(body.get(key) or [])
            token = str(body.get("nextPageToken") or "")
            if not token:
                return items

    # --- accounts ------------------------------------------------------------------------
    def exchange_code(self, *, code: str, redirect_uri: str, code_verifier: str = "") -> list[ConnectedIdentity]:
        creds, scopes = self.exchange_tokens(code=code, redirect_uri=redirect_uri, code_verifier=code_verifier)
        identities = []
        for account in self._pages(f"{self._accounts_api()}/accounts", creds, "accounts", {"pageSize": 20}):
            url = f"{self._information_api()}/{account['name']}/locations"
            for location in self._pages(url, creds, "locations", {"readMask": READ_MASK, "pageSize": 100}):
                external_id = f"{account['name']}/{location['name']}"
                identities.append(
                    ConnectedIdentity(
                        profile=_profile(external_id, location, self._picture(creds, external_id)),
                        credentials=Credentials(
                            access_token=creds.access_token,
                            refresh_token=creds.refresh_token,
                            expires_at=creds.expires_at,
                            external_id=external_id,
                        ),
                        scopes=scopes,
                    )
                )
        if not identities:
            raise Permanent("this Google account manages no business location", error_code=ErrorCode.PERMISSION_MISSING)
        return identities

    def check_token(self, creds: Credentials) -> AccountProfile:
        location_name = creds.external_id.split("/", 2)[2]  # "locations/…"
        location = self._json(
            "GET", f"{self._information_api()}/{location_name}", creds, params={"readMask": READ_MASK}
        )
        return _profile(creds.external_id, location, self._picture(creds, creds.external_id))

    def _picture(self, creds: Credentials, external_id: str) -> str:
        """The location's profile photo (its logo when it has no profile photo; "" without
        either, or when its photos cannot be read: the account connects without a picture)."""
        try:
            body = self._json("GET", f"/v4/{external_id}/media", creds, params={"pageSize": 100})
        except Permanent:
            return ""
        by_category = {
            str((item.get("locationAssociation") or {}).get("category") or ""): str(item.get("googleUrl") or "")
            for item in body.get("mediaItems") or []
            if item.get("mediaFormat") == "PHOTO"
        }
        return by_category.get("PROFILE") or by_category.get("LOGO") or ""

    # --- publishing ----------------------------------------------------------------------
    def publish(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        if state.get("name"):
            post = self._json("GET", f"/v4/{state['name']}", creds)
        else:
            body = local_post_body(request)
            post = self._json("POST", f"/v4/{creds.external_id}/localPosts", creds, json=body, creates=True)
        status = str(post.get("state") or "LIVE")
        if status == "REJECTED":
            raise Permanent("Google rejected the local post", error_code=ErrorCode.CONTENT_REJECTED)
        if status == "PROCESSING":
            return PublishResult(done=False, state={"name": str(post["name"])}, poll_after=PROCESSING_POLL_SECONDS)
        return PublishResult(
            done=True,
            platform_post_id=str(post["name"]),
            url=str(post.get("searchUrl") or ""),
            published_at=parse_instant(post.get("createTime")) or dt.datetime.now(dt.UTC),
        )

    # --- engagement: the location's reviews and the owner's replies ------------------------------
    def list_comments(
        self, creds: Credentials, platform_post_id: str, *, since: dt.datetime | None = None, cursor: str = ""
    ) -> CommentPage:
        """``accounts.locations.reviews.list`` (``pageToken`` the cursor): each review, and the
        owner's reply where it has one as a comment of its own under it (``<review>/reply``,
        ``from_account``). Reviews are on the location, not on a post: ``platform_post_id`` ""
        lists them, a local post has none. Reviews come by update time, newest first, but a reply
        can be newer than its review, so ``since`` drops older ones without ending the listing."""
        if platform_post_id:
            return CommentPage(())
        params: dict[str, Any] = {"pageSize": self.review_page_size, "orderBy": "updateTime desc"}
        if cursor:
            params["pageToken"] = cursor
        body = self._json("GET", f"/v4/{creds.external_id}/reviews", creds, params=params)
        found: list[RemoteComment] = []
        for review in body.get("reviews") or []:
            if isinstance(review, dict) and review.get("name"):
                found.extend(review_comments(review, location=creds.external_id))
        if since is not None:
            found = [c for c in found if c.created_at >= since]
        return CommentPage(tuple(found), str(body.get("nextPageToken") or ""))

    def reply_comment(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        """``updateReply`` (``PUT /v4/{review}/reply`` with ``comment``): a review has one reply,
        which this sets (again: replaced, the same text again changes nothing)."""
        if request.reply_to is None:
            raise Permanent("A reply needs the review it answers", error_code=ErrorCode.INVALID_REQUEST)
        review = request.reply_to.parent.platform_post_id.removesuffix(REPLY_SUFFIX)
        if len(request.text) > REPLY_LIMIT:
            raise Permanent(
                f"GOOGLE_BUSINESS reply is {len(request.text)} characters; the limit is {REPLY_LIMIT}",
                error_code=ErrorCode.INVALID_REQUEST,
            )
        self._json("PUT", f"/v4/{review}/reply", creds, json={"comment": request.text}, creates=True)
        return PublishResult(done=True, platform_post_id=f"{review}{REPLY_SUFFIX}")

    def delete_comment(self, creds: Credentials, platform_comment_id: str, *, parent_id: str = "") -> None:
        """``deleteReply`` (``DELETE /v4/{review}/reply``): only the owner's reply can go, a review
        stays; a reply already gone (404) counts as deleted."""
        review = parent_id or platform_comment_id.removesuffix(REPLY_SUFFIX)
        if not platform_comment_id.endswith(REPLY_SUFFIX):
            raise Permanent(
                "Google Business does not let the owner delete a review, only the reply to it",
                error_code=ErrorCode.INVALID_REQUEST,
            )
        self.delete_resource(f"/v4/{review}/reply", creds)

    # Reviews can be neither hidden nor liked through the API: NotSupported.

    # --- analytics -----------------------------------------------------------------------
    # --- after publishing ----------------------------------------------------------------
    def edit(self, creds: Credentials, request: EditRequest) -> EditResult:
        """``localPosts.patch`` (``PATCH /v4/{name}?updateMask=summary,media``): the post's text
        and its media (one photo, fetched by Google from its ``sourceUrl``; none removes it), each
        named in the mask only when it changes; the answer is the LocalPost with its new
        ``updateTime``."""
        refuse_edit_fields("GOOGLE_BUSINESS", request, CAPABILITIES[Platform.GOOGLE_BUSINESS].edit_fields)
        body: dict[str, Any] = {}
        if request.text is not None:
            body["summary"] = request.text
        if request.media is not None:
            if any(item.kind != "image" for item in request.media) or len(request.media) > 1:
                raise Permanent(
                    "A local post takes at most one photo (mediaFormat PHOTO)", error_code=ErrorCode.MEDIA_REJECTED
                )
            body["media"] = [{"mediaFormat": "PHOTO", "sourceUrl": item.url} for item in request.media]
        if not body:
            return EditResult()
        post = self._json(
            "PATCH",
            f"/v4/{request.platform_post_id}",
            creds,
            params={"updateMask": ",".join(body)},
            json=body,
            creates=True,
        )
        return EditResult(url=str(post.get("searchUrl") or ""), edited_at=parse_instant(post.get("updateTime")))

    def fetch_post(self, creds: Credentials, platform_post_id: str) -> RemotePost | None:
        """``localPosts.get`` (``GET /v4/{name}``; 404: gone)."""
        post = self.read_resource(f"/v4/{platform_post_id}", creds)
        if post is None:
            return None
        return RemotePost(
            platform_post_id=str(post.get("name") or platform_post_id),
            published_at=parse_instant(post.get("createTime")) or dt.datetime.now(dt.UTC),
            text=str(post.get("summary") or ""),
            permalink=str(post.get("searchUrl") or ""),
        )

    def delete(self, creds: Credentials, platform_post_id: str) -> None:
        """``localPosts.delete`` (``DELETE /v4/{name}``): ``{}``; a post already gone (404) counts."""
        self.delete_resource(f"/v4/{platform_post_id}", creds)

    def list_recent_posts(self, creds: Credentials, since: dt.datetime) -> list[RemotePost]:
        posts = self._pages(f"/v4/{creds.external_id}/localPosts", creds, "localPosts", {"pageSize": 100})
        found = []
        for post in posts:
            created = parse_instant(post.get("createTime"))
            if created is None or created < since:
                continue
            media = post.get("media") or [{}]
            found.append(
                RemotePost(
                    platform_post_id=str(post["name"]),
                    published_at=created,
                    text=str(post.get("summary") or ""),
                    permalink=str(post.get("searchUrl") or ""),
                    thumbnail_url=str(media[0].get("googleUrl") or media[0].get("sourceUrl") or ""),
                )
            )
        return found

    def fetch_post_metrics(self, creds: Credentials, platform_post_ids: list[str]) -> dict[str, Metrics]:
        by_location: dict[str, list[str]] = {}
        for name in platform_post_ids:
            location = name.split("/localPosts/")[0]
            by_location.setdefault(location, []).append(name)
        now = dt.datetime.now(dt.UTC)
        time_range = {
            "startTime": (now - dt.timedelta(days=INSIGHTS_DAYS)).isoformat(timespec="seconds").replace("+00:00", "Z"),
            "endTime": now.isoformat(timespec="seconds").replace("+00:00", "Z"),
        }
        result: dict[str, Metrics] = {}
        for location, names in by_location.items():
            for start in range(0, len(names), INSIGHTS_BATCH):
                body = {
                    "localPostNames": names[start : start + INSIGHTS_BATCH],
                    "basicRequest": {
                        "metricRequests": [{"metric": "LOCAL_POST_VIEWS_SEARCH"}],
                        "timeRange": time_range,
                    },
                }
                answer = self._json("POST", f"/v4/{location}/localPosts:reportInsights", creds, json=body)
                result.update(views_from_insights(answer))
        return result


def review_comments(review: dict[str, Any], *, location: str) -> list[RemoteComment]:
    """A ``Review`` as a comment (its stars as ``rating``), and its ``reviewReply`` after it."""
    name = str(review["name"])
    reviewer = review.get("reviewer") or {}
    anonymous = reviewer.get("isAnonymous") is True
    display_name = "" if anonymous else str(reviewer.get("displayName") or "")
    created = parse_instant(review.get("createTime")) or dt.datetime.now(dt.UTC)
    reply = review.get("reviewReply") if isinstance(review.get("reviewReply"), dict) else None
    found = [
        RemoteComment(
            platform_comment_id=name,
            platform_post_id="",
            text=str(review.get("comment") or ""),
            created_at=created,
            # the API names no reviewer id: the display name stands for it ("" when anonymous)
            author=CommentAuthor(
                id=display_name, name=display_name, avatar_url=str(reviewer.get("profilePhotoUrl") or "")
            ),
            reply_count=1 if reply else 0,
            rating=STARS.get(str(review.get("starRating") or "")),
        )
    ]
    if reply is not None:
        found.append(
            RemoteComment(
                platform_comment_id=f"{name}{REPLY_SUFFIX}",
                platform_post_id="",
                text=str(reply.get("comment") or ""),
                created_at=parse_instant(reply.get("updateTime")) or created,
                author=CommentAuthor(id=location),
                parent_id=name,
                from_account=True,
            )
        )
    return found


def views_from_insights(answer: dict[str, Any]) -> dict[str, Metrics]:
    """``localPostMetrics`` of a reportInsights answer → views per local post name."""
    result = {}
    for entry in answer.get("localPostMetrics") or []:
        values = [
            as_int((value.get("totalValue") or {}).get("value"))
            for value in entry.get("metricValues") or []
            if value.get("metric") == "LOCAL_POST_VIEWS_SEARCH"
        ]
        known = [v for v in values if v is not None]
        result[str(entry["localPostName"])] = Metrics(views=sum(known) if known else None)
    return result


def local_post_body(request: PublishRequest) -> dict[str, Any]:
    """The LocalPost resource for our request and its googleBusinessConfigs options."""
    options = request.options
    topic = str(options.get("topicType") or "STANDARD")
    body: dict[str, Any] = {
        "languageCode": str(options.get("languageCode") or "en"),
        "summary": request.text,
        "topicType": topic,
    }
    action = str(options.get("callToActionType") or "")
    if action in CTA_TYPES:
        body["callToAction"] = {"actionType": action}
        if action != "CALL" and options.get("callToActionUrl"):
            body["callToAction"]["url"] = str(options["callToActionUrl"])
    if topic in {"EVENT", "OFFER"}:
        schedule: dict[str, Any] = {}
        for prefix, key in (("start", "eventStart"), ("end", "eventEnd")):
            moment = parse_instant(options.get(key))
            if moment is not None:
                schedule[f"{prefix}Date"] = {"year": moment.year, "month": moment.month, "day": moment.day}
                schedule[f"{prefix}Time"] = {"hours": moment.hour, "minutes": moment.minute, "seconds": 0, "nanos": 0}
        body["event"] = {"title": str(options.get("eventTitle") or ""), "schedule": schedule}
    if topic == "OFFER":
        offer = {
            "couponCode": options.get("offerCouponCode"),
            "redeemOnlineUrl": options.get("offerRedeemUrl"),
            "termsConditions": options.get("offerTerms"),
        }
        body["offer"] = {k: str(v) for k, v in offer.items() if v}
    images = [m for m in request.media if m.kind == "image"]
    if images:
        body["media"] = [{"mediaFormat": "PHOTO", "sourceUrl": images[0].url}]
    return body


def _profile(external_id: str, location: dict[str, Any], avatar_url: str) -> AccountProfile:
    return AccountProfile(
        external_id=external_id,
        display_name=str(location.get("title") or ""),
        username=str(location.get("websiteUri") or ""),
        avatar_url=avatar_url,
    )
