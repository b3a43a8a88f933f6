"""The service's Prometheus metrics: the one interface every part reports through.

prometheus-client runs in multiprocess mode (``PROMETHEUS_MULTIPROC_DIR``, set by the settings
before the first metric exists): each gunicorn worker and each Celery pool process writes its
own files there, and ``GET /metrics`` adds them up, so web and workers report together.
Figures read from the database or Redis at scrape time (queue depths, scheduler lag) are
collected by :class:`LiveStateCollector` when ``/metrics`` is asked, never stored.

Callers use the small functions below, never the metric objects, so names and labels stay in
one place."""

from __future__ import annotations

import hmac
import ipaddress
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from core import health
from core.client_address import client_address

HTTP_REQUESTS = Counter(
    "crosspost_http_requests_total",
    "HTTP requests answered, by route, method and status",
    ["route", "method", "status"],
)
HTTP_LATENCY = Histogram(
    "crosspost_http_request_duration_seconds",
    "Time to answer an HTTP request, by route and method",
    ["route", "method"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)
TASKS = Counter("crosspost_tasks_total", "Celery tasks run, by task name and outcome", ["task", "outcome"])
TASK_DURATION = Histogram(
    "crosspost_task_duration_seconds",
    "Time a Celery task ran, by task name",
    ["task"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0),
)
PUBLISHES = Counter(
    "crosspost_publishes_total",
    "Platform entries that reached a final state, by platform, outcome and errorCode",
    ["platform", "outcome", "error_code"],
)
WEBHOOK_DELIVERIES = Counter("crosspost_webhook_deliveries_total", "Webhook delivery attempts, by outcome", ["outcome"])
RATE_LIMIT_REFUSALS = Counter("crosspost_rate_limit_refusals_total", "API requests refused with 429")
COMMENT_READS = Counter(
    "crosspost_comment_reads_total",
    "Comment listings read from the platforms by the inbox sync, by platform and outcome",
    ["platform", "outcome"],
)
COMMENTS_RECEIVED = Counter(
    "crosspost_comments_received_total", "New comments named in comment.received events, by platform", ["platform"]
)
COMMENT_ACTIONS = Counter(
    "crosspost_comment_actions_total",
    "Comment actions (reply, hide, unhide, delete, like) that reached a final state, by kind and outcome",
    ["kind", "outcome"],
)

UNMATCHED_ROUTE = "(unmatched)"


# --- what the rest of the code calls ----------------------------------------------------------


def publish_recorded(*, platform: str, error_code: str = "") -> None:
    """An entry became PUBLISHED (no ``error_code``) or FAILED with ``error_code``."""
    outcome = "failed" if error_code else "published"
    PUBLISHES.labels(platform=platform, outcome=outcome, error_code=error_code or "").inc()


def publishes_recorded(*, platforms: list[str]) -> None:
    """Several entries became PUBLISHED at once."""
    for platform in platforms:
        publish_recorded(platform=platform)


def webhook_delivery_recorded(*, outcome: str, count: int = 1) -> None:
    """``outcome``: ``succeeded``, ``retrying`` (failed, another attempt will come) or ``failed``."""
    if count:
        WEBHOOK_DELIVERIES.labels(outcome=outcome).inc(count)


def rate_limit_refused() -> None:
    RATE_LIMIT_REFUSALS.inc()


def comment_reads_recorded(*, platform: str, outcome: str, count: int = 1) -> None:
    """``outcome``: ``ok``, ``budget`` (the account's hourly share was used up: not read),
    ``rate_limited`` or ``failed``."""
    if count:
        COMMENT_READS.labels(platform=platform, outcome=outcome).inc(count)


def comments_received(*, platform: str, count: int) -> None:
    if count:
        COMMENTS_RECEIVED.labels(platform=platform).inc(count)


def comment_action_recorded(*, kind: str, outcome: str) -> None:
    """``outcome``: ``done`` or ``failed``."""
    COMMENT_ACTIONS.labels(kind=kind, outcome=outcome).inc()


# Figures a domain app computes when /metrics is scraped (core imports no domain app: each
# registers its reader at start). A reader returns ``(name, help, value)`` gauges, or nothing when
# its figures cannot be read just now.
_live_readers: list[Callable[[], list[tuple[str, str, float]]]] = []


def register_live_gauges(read: Callable[[], list[tuple[str, str, float]]]) -> None:
    if read not in _live_readers:
        _live_readers.append(read)


def task_finished(*, task: str, outcome: str, seconds: float | None) -> None:
    TASKS.labels(task=task, outcome=outcome).inc()
    if seconds is not None:
        TASK_DURATION.labels(task=task).observe(seconds)


# --- HTTP requests ----------------------------------------------------------------------------


class RequestMetricsMiddleware:
    """Counts every request by its URL pattern (never the raw path: ids and tokens stay out of
    the labels), method and status, and observes how long it took."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        pattern = match.route if match is not None else None
        method = request.method if request.method in _KNOWN_METHODS else "OTHER"
        counter, latency = _request_series(pattern, method, response.status_code)
        counter.inc()
        latency.observe(time.perf_counter() - started)
        return response


# The labelled series of each (URL pattern, method, status) seen, made once per process: the
# label values are read from a bounded set (the URL patterns, the methods, the statuses), and a
# request then costs two dictionary reads instead of the label's rendering and checks each time.
_SERIES: dict[tuple[str | None, str, int], tuple[Any, Any]] = {}


def _request_series(pattern: str | None, method: str, status: int) -> tuple[Any, Any]:
    key = (pattern, method, status)
    series = _SERIES.get(key)
    if series is None:
        route = route_label(pattern) if pattern is not None else UNMATCHED_ROUTE
        series = (
            HTTP_REQUESTS.labels(route=route, method=method, status=str(status)),
            HTTP_LATENCY.labels(route=route, method=method),
        )
        _SERIES[key] = series
    return series


_KNOWN_METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
_REGEX_GROUP = re.compile(r"\(\?P<(\w+)>[^)]*\)")


def route_label(route: str) -> str:
    """A URL pattern as a readable label: ``api/v1/social-posts/(?P<id>[^/.]+)$`` (a DRF router's
    regex) becomes ``/api/v1/social-posts/<id>``, like Django's own ``<str:id>`` patterns."""
    label = _REGEX_GROUP.sub(r"<\1>", route).replace("^", "").replace("$", "")
    return "/" + label.replace("<str:", "<").replace("<path:", "<").replace("<int:", "<")


# --- GET /metrics ------------------------------------------------------------------------------


class LiveStateCollector(Collector):
    """Queue depths per Celery queue and the scheduler's lag, read when scraped."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        depths = GaugeMetricFamily("crosspost_queue_depth", "Messages waiting in each Celery queue", labels=["queue"])
        for queue, depth in health.queue_depths().items():
            if depth is not None:
                depths.add_metric([queue], depth)
        yield depths
        lag = health.scheduler_lag_seconds()
        if lag is not None:
            yield GaugeMetricFamily(
                "crosspost_scheduler_lag_seconds",
                "How long the oldest due post not yet claimed by the dispatcher has waited (0: none)",
                value=lag,
            )
        beat_age = health.beat_age_seconds()
        if beat_age is not None:
            yield GaugeMetricFamily(
                "crosspost_beat_heartbeat_age_seconds", "Seconds since beat's last heartbeat ran", value=beat_age
            )
        for read in _live_readers:
            for name, help_text, value in read():
                yield GaugeMetricFamily(name, help_text, value=value)


def _authorized(request: HttpRequest) -> bool:
    """The bearer token, or, in sandbox mode only, a client on this machine (``make run`` on a
    laptop: nothing to set up). Live mode has no such exception (and no start without a token)."""
    expected = settings.METRICS_TOKEN
    if expected:
        scheme, _, supplied = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(supplied.strip().encode(), expected.encode()):
            return True
    return settings.SANDBOX and _from_loopback(request)


def _from_loopback(request: HttpRequest) -> bool:
    """The client's address (the one a trusted proxy names, when CLIENT_IP_HEADER says so) is a
    loopback address."""
    try:
        address = ipaddress.ip_address(client_address(request) or "")
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


def metrics_view(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    """Prometheus text format, every process of this run added up. Without the bearer token (in
    sandbox mode: from anywhere but loopback) the endpoint does not exist: 404, nothing revealed."""
    if not _authorized(request):
        raise Http404
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    registry.register(LiveStateCollector())
    return HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)
