"""Settings, all from the environment (.env.example lists every variable)."""

from __future__ import annotations

import datetime as dt
import os
import sys
from pathlib import Path
from urllib.parse import unquote

import environ

from config import embedded
from config.envcheck import choice, flag, required_in_live

BASE_DIR = Path(__file__).resolve().parent.parent
env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

TESTING = "pytest" in sys.modules or flag(env, "TESTING", default=False)

# With no DATABASE_URL / REDIS_URL, the embedded PostgreSQL and Redis under var/. Reading the
# settings starts nothing: `make run`, manage.py and the test set-up start them (config.embedded).
DATABASE_URL = env.str("DATABASE_URL", default="") or embedded.database_url()
REDIS_URL = env.str("REDIS_URL", default="") or embedded.redis_url()
EMBEDDED = embedded.serves(DATABASE_URL) or embedded.serves(REDIS_URL)

DEBUG = flag(env, "DEBUG", default=False)
# The mode is decided here and only here (`make run` and config/run.py pass it on, never force
# it). The embedded default is a local checkout, never production (which always configures its
# servers): there the simulators are the default, so that `manage.py create_api_key` typed in a
# second shell beside `make run` works without exporting anything. With DATABASE_URL/REDIS_URL
# set the default is live, whatever DEBUG says; the test suite is sandbox.
PLATFORM_MODE = choice(env, "PLATFORM_MODE", ("sandbox", "live"), "sandbox" if TESTING or EMBEDDED else "live")
SANDBOX = PLATFORM_MODE == "sandbox"

# Sandbox mode's fixed, published values; live mode refuses to start without its own.
_SANDBOX_SECRET_KEY = "insecure-sandbox-only-secret-key"
_SANDBOX_FERNET_KEY = "c2FuZGJveC1vbmx5LWZlcm5ldC1rZXktMzJieXRlcyE="
if SANDBOX:
    SECRET_KEY = env.str("SECRET_KEY", default=_SANDBOX_SECRET_KEY)
    ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["*"])
else:
    SECRET_KEY = required_in_live(env, "SECRET_KEY", sandbox_value=_SANDBOX_SECRET_KEY)
    required_in_live(env, "ALLOWED_HOSTS", listed=True)
    ALLOWED_HOSTS = env.list("ALLOWED_HOSTS")
PORT = env.int("PORT", default=8000)
PUBLIC_BASE_URL = env.str("PUBLIC_BASE_URL", default=f"http://127.0.0.1:{PORT}").rstrip("/")
VAR_DIR = embedded.VAR_DIR

INSTALLED_APPS = [
    "core.admin_site.CrosspostAdminConfig",  # django.contrib.admin with our site (core/admin_site.py)
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "oauth2_provider",
    "axes",
    "core",
    "workspaces",
    "platforms",
    "accounts",
    "media",
    "webhooks",
    "posts",
    "analytics",
    "engagement",
    "audit",
]

# The principal and the rate limiter come before the request guard, so that its 413 and 400
# answers carry the RateLimit headers (and count) like every other API response.
MIDDLEWARE = [
    "core.metrics.RequestMetricsMiddleware",
    "core.middleware.RequestIdMiddleware",
    "workspaces.middleware.PrincipalMiddleware",
    "core.logs.LogContextMiddleware",
    "core.ratelimit.RateLimitMiddleware",
    "core.middleware.RequestGuardMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Sessions, the staff user and messages: Django's own, run for the pages only, not for the
    # API (bearer tokens) or the health checks (core/pages.py).
    "core.pages.PagesSessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "core.pages.PagesAuthenticationMiddleware",
    "core.pages.PagesMessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "core.middleware.OutageMiddleware",
    # Last, as django-axes asks: it answers a locked-out admin login with its lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
APPEND_SLASH = False

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

DATABASES = {"default": env.db_url_config(DATABASE_URL)}
# A unix-socket directory arrives percent-encoded in the host part of the URL.
DATABASES["default"]["HOST"] = unquote(DATABASES["default"].get("HOST") or "")
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DB_CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DATABASES["default"].setdefault("TEST", {})["NAME"] = env.str("TEST_DATABASE_NAME", default="test_crosspost")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"


def _redis_url_for_db(url: str, db: int) -> str:
    """Point a redis:// or redis+socket:// URL at a numbered database."""
    if url.startswith("redis+socket://") or url.startswith("unix://"):
        base = url.split("?", 1)[0]
        return f"{base}?db={db}"
    base = url.rstrip("/")
    scheme, rest = base.split("://", 1)
    host = rest.split("/", 1)[0]
    return f"{scheme}://{host}/{db}"


# Parallel test workers each get a Redis database of their own.
_xdist_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
if TESTING:
    _worker_index = int(_xdist_worker[2:]) if _xdist_worker.startswith("gw") else 0
    REDIS_URL = _redis_url_for_db(REDIS_URL, env.int("TEST_REDIS_DB_OFFSET", default=1) + _worker_index)

CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL.replace("redis+socket://", "unix://"),
        "KEY_PREFIX": "cache",
    }
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
# The test process hashes the staff passwords it makes and signs in with in microseconds, not the
# second PBKDF2's million rounds take on a loaded machine. Nothing else changes: the e2e stack's
# processes, like any deployment, keep Django's default hashers.
if TESTING:
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# --- Admin sign-in throttle (django-axes) ---------------------------------------------------
# Five wrong passwords for one username from one address lock that pair out for 15 minutes (a
# right password included); other usernames and addresses are unaffected. The attempts live in
# PostgreSQL, so every web process counts them together. Only the admin site's login is watched:
# the API's bearer tokens never go through Django's authenticate(). Unlock early with
# `manage.py axes_reset_username NAME` (docs/operations.md).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = 5
AXES_COOLOFF_TIME = dt.timedelta(minutes=15)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_ONLY_ADMIN_SITE = True
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "admin/locked_out.html"
# Its start-up banner would be one more line in every process's log, web, worker and manage.py alike.
AXES_VERBOSE = False
# The client's address is the connection's unless CLIENT_IP_HEADER names the header a trusted
# proxy in front sets (X-Real-IP) or appends to (X-Forwarded-For): a header the client could send
# itself is never believed by default.
CLIENT_IP_HEADER = env.str("CLIENT_IP_HEADER", default="")
AXES_CLIENT_IP_CALLABLE = "core.client_address.client_address"
LANGUAGE_CODE = "en-us"
FORMAT_MODULE_PATH = ["config.formats"]  # the admin's dates as 2026-11-27 09:39
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True
STATIC_URL = "/static/"
STATIC_ROOT = env.path("STATIC_ROOT", default=VAR_DIR / "static")
# WhiteNoise serves the static files from every web process (gunicorn serves none itself). A
# deployment runs `collectstatic` (Procfile `release`, `make run`) and gets compressed files with
# content hashes in their names; a test or DEBUG run serves straight from the apps' directories.
_SERVE_STATIC_FROM_APPS = DEBUG or TESTING
Path(STATIC_ROOT).mkdir(parents=True, exist_ok=True)  # WhiteNoise warns about a missing one
WHITENOISE_USE_FINDERS = _SERVE_STATIC_FROM_APPS
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if _SERVE_STATIC_FROM_APPS
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

DATA_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
API_MAX_BODY_BYTES = 5 * 1024 * 1024

# --- REST framework and the OpenAPI description -------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["workspaces.authentication.BearerAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["workspaces.permissions.IsAuthenticatedPrincipal"],
    "DEFAULT_PARSER_CLASSES": ["core.parsers.StrictJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "core.parsers.JSONOnlyNegotiation",
    "DEFAULT_SCHEMA_CLASS": "core.schema.ServiceAutoSchema",
    "EXCEPTION_HANDLER": "core.exception_handler.handle_exception",
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_VERSIONING_CLASS": None,
    "DATETIME_FORMAT": "iso-8601",
    "COERCE_DECIMAL_TO_STRING": False,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Crosspost API",
    "DESCRIPTION": (
        "One REST API to create, schedule, publish and measure posts on twelve social platforms. "
        "Every call carries `Authorization: Bearer <API key>` and acts inside one workspace. Workspaces belong to "
        "an organization; an organization key (`cpo_…`) acts in any of them named by the `X-Workspace-Id` header. "
        "Each operation's description names the permission it needs; a key without it gets 403 "
        "with `code: permission_denied` and `requiredPermission`. Every response carries the "
        "RateLimit-Policy, RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset headers. A post targets "
        "`platforms` plus one account id array per platform (`pageIds` for Facebook, `<platform>ConnectionIds` "
        "for the others): see POST /social-posts. Lists page in one of three styles, each named where used: "
        "offset (`limit`/`offset`, `total`, `hasMore`), page (`page`/`limit`, analytics posts) and cursor "
        "(`after`/`nextCursor`, `hasMore`: the events feed)."
    ),
    "VERSION": "1.0.0",
    "OAS_VERSION": "3.0.3",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SERVE_AUTHENTICATION": [],
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "SCHEMA_PATH_PREFIX_TRIM": True,
    "SERVERS": [{"url": "/api/v1"}],
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "PlatformEnum": "platforms.base.Platform",
        "CaptionPlatformEnum": "media.ai.captions.CAPTION_PLATFORM_VALUES",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "core.schema.add_shared_components",
        "webhooks.schema.add_event_schemas",
        "core.schema.add_links",
    ],
    "PREPROCESSING_HOOKS": ["core.schema.only_public_api"],
    "DISABLE_ERRORS_AND_WARNINGS": False,
    # Swagger UI and ReDoc are served from our own static files, never from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- OAuth sign-in for workspace members --------------------------------------------------
OAUTH2_PROVIDER = {
    "ACCESS_TOKEN_EXPIRE_SECONDS": 3600,
    "SCOPES": {"api": "Act on your workspaces through the API"},
    "DEFAULT_SCOPES": ["api"],
    "PKCE_REQUIRED": True,
    # Keep only the checksum of access tokens at rest (RFC 9700), like our API keys.
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    # The rest of RFC 9700 too (django-oauth-toolkit's deploy checks): authorization code with S256
    # PKCE only, no implicit or password grant, tokens never in a query string, `iss` in the
    # authorization response, a replayed refresh token revokes its family.
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    # Plain-http redirect URIs (native apps' loopback callbacks) only in sandbox mode.
    "ALLOWED_REDIRECT_URI_SCHEMES": ["http", "https"] if SANDBOX else ["https"],
}

# --- Rate limits ------------------------------------------------------------------------
RATE_LIMIT_DEFAULT = env.int("RATE_LIMIT_DEFAULT", default=600)
RATE_LIMIT_WINDOW_SECONDS = env.int("RATE_LIMIT_WINDOW_SECONDS", default=60)
# Each process keeps the API keys it has read, valid while Redis' keys generation is unchanged
# (every key or workspace write replaces it: revocation is immediate). This bounds how long a
# write that could not reach Redis, or made in raw SQL, goes unseen; 0 reads every key afresh.
API_KEY_CACHE_SECONDS = max(0, env.int("API_KEY_CACHE_SECONDS", default=60))
IDEMPOTENCY_TTL_SECONDS = 24 * 3600

# --- Celery ------------------------------------------------------------------------------
# kombu reads the database of a unix-socket URL from ``virtual_host``, not ``db``.
CELERY_BROKER_URL = REDIS_URL.replace("?db=", "?virtual_host=") if "+socket://" in REDIS_URL else REDIS_URL
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = env.int("CELERY_PREFETCH", default=4)
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")

# --- Encryption at rest (platform tokens, webhook secrets) --------------------------------
# A comma-separated list of Fernet keys: the first encrypts, all decrypt (rotation).
if SANDBOX:
    FERNET_KEYS = env.list("FERNET_KEYS", default=[_SANDBOX_FERNET_KEY])
else:
    required_in_live(env, "FERNET_KEYS", sandbox_value=_SANDBOX_FERNET_KEY, listed=True)
    FERNET_KEYS = env.list("FERNET_KEYS")

# --- Platforms ---------------------------------------------------------------------------
# Where the simulators are reached in sandbox mode (the web process mounts them).
SANDBOX_BASE_URL = env.str("SANDBOX_BASE_URL", default=f"http://127.0.0.1:{PORT}/sandbox").rstrip("/")
SANDBOX_LATENCY_MS = env.int("SANDBOX_LATENCY_MS", default=0)
# Seconds between one audience comment and the next on a simulated post (platforms.sandbox.audience):
# 0 writes them all as the post is published.
SANDBOX_AUDIENCE_PACE_SECONDS = env.float("SANDBOX_AUDIENCE_PACE_SECONDS", default=0.0)
PLATFORM_HTTP_TIMEOUT = env.float("PLATFORM_HTTP_TIMEOUT", default=30.0)
# Per platform NAME (platforms.base.Platform: FACEBOOK … GOOGLE_BUSINESS), as
# {"PLATFORM_<NAME>_<KEY>": value}: _BASE_URL points its client at another host (a proxy),
# _CLIENT_ID, _CLIENT_SECRET and any other key are the app's credentials (platforms.registry).
PLATFORM_APP_ENV = {
    name: value
    for name, value in os.environ.items()
    if name.startswith("PLATFORM_") and name not in ("PLATFORM_MODE", "PLATFORM_HTTP_TIMEOUT")
}

# --- Posting queues (issue 18) -----------------------------------------------------------
# Most weekly slots an account's queue may hold, and how far ahead a queued post looks for a free
# slot (days) before the create is a 400.
POSTING_QUEUE_MAX_SLOTS = env.int("POSTING_QUEUE_MAX_SLOTS", default=100)
POSTING_QUEUE_HORIZON_DAYS = env.int("POSTING_QUEUE_HORIZON_DAYS", default=366)

# --- Media -------------------------------------------------------------------------------
STORAGE = choice(env, "STORAGE", ("local", "s3"), "local")
MEDIA_ROOT = env.str("MEDIA_ROOT", default=str(VAR_DIR / "media"))
MEDIA_MAX_UPLOAD_BYTES = env.int("MEDIA_MAX_UPLOAD_BYTES", default=512 * 1024 * 1024)
# The probe and fit children (media.children): CPU seconds each may use, and the wall-clock
# backstop (a generous multiple: a loaded machine stretches wall time, not CPU time) after which
# a child that waits rather than works is killed (docs/operations.md).
MEDIA_PROBE_CPU_SECONDS = env.int("MEDIA_PROBE_CPU_SECONDS", default=30)
MEDIA_PROBE_WALL_SECONDS = env.int("MEDIA_PROBE_WALL_SECONDS", default=180)
MEDIA_FIT_CPU_SECONDS = env.int("MEDIA_FIT_CPU_SECONDS", default=240)
MEDIA_FIT_WALL_SECONDS = env.int("MEDIA_FIT_WALL_SECONDS", default=1440)
S3_BUCKET = env.str("S3_BUCKET", default="")
S3_REGION = env.str("S3_REGION", default="us-east-1")
S3_ENDPOINT_URL = env.str("S3_ENDPOINT_URL", default="") or None
S3_PUBLIC_BASE_URL = env.str("S3_PUBLIC_BASE_URL", default="")
AWS_ACCESS_KEY_ID = env.str("AWS_ACCESS_KEY_ID", default="")
AWS_SECRET_ACCESS_KEY = env.str("AWS_SECRET_ACCESS_KEY", default="")
AI_IMAGE_PROVIDER = choice(env, "AI_IMAGE_PROVIDER", ("offline", "openai"), "offline")
AI_IMAGE_API_URL = env.str("AI_IMAGE_API_URL", default="")
AI_IMAGE_API_KEY = env.str("AI_IMAGE_API_KEY", default="")
AI_IMAGE_MODEL = env.str("AI_IMAGE_MODEL", default="")
AI_CAPTION_PROVIDER = choice(env, "AI_CAPTION_PROVIDER", ("offline", "openai"), "offline")
AI_CAPTION_API_URL = env.str("AI_CAPTION_API_URL", default=AI_IMAGE_API_URL)
AI_CAPTION_API_KEY = env.str("AI_CAPTION_API_KEY", default=AI_IMAGE_API_KEY)
AI_CAPTION_MODEL = env.str("AI_CAPTION_MODEL", default="")
AI_CAPTION_TIMEOUT_SECONDS = env.float("AI_CAPTION_TIMEOUT_SECONDS", default=30.0)
AI_CAPTION_RETRY_BACKOFF_SECONDS = env.float("AI_CAPTION_RETRY_BACKOFF_SECONDS", default=1.0)
# Units a workspace may spend on AI per calendar month (UTC); unset means unlimited.
AI_MONTHLY_UNITS = env.int("AI_MONTHLY_UNITS", default=None)

# --- Webhooks ----------------------------------------------------------------------------
WEBHOOK_ALLOW_PRIVATE_URLS = flag(env, "WEBHOOK_ALLOW_PRIVATE_URLS", default=False)
if WEBHOOK_ALLOW_PRIVATE_URLS and not SANDBOX:
    raise environ.ImproperlyConfigured("WEBHOOK_ALLOW_PRIVATE_URLS=1 is refused unless PLATFORM_MODE=sandbox")
WEBHOOK_MAX_PER_WORKSPACE = env.int("WEBHOOK_MAX_PER_WORKSPACE", default=10)

# --- Work engine (core/work.py): publishing, webhook delivery, AI image jobs ------------------
# Every tunable of the background work, read here and only here (code reads settings.NAME); each is
# listed in .env.example. The e2e harness shrinks some of them through the environment.
# Threads of one worker process for remote calls run side by side (made at worker_process_init).
WORK_THREADS = env.int("WORK_THREADS", default=25)
# Publishing (posts/pipeline/). A call starts only within the first tenth of its lease (a target
# that waited longer behind the rest of its batch is put back, due at once), so nine tenths of the
# lease must exceed the longest single publish call (several HTTP calls of PLATFORM_HTTP_TIMEOUT);
# the sweeper treats a holder past it as dead.
PUBLISH_LEASE_SECONDS = env.float("PUBLISH_LEASE_SECONDS", default=180.0)
PUBLISH_MAX_ATTEMPTS = env.int("PUBLISH_MAX_ATTEMPTS", default=5)
# Due posts claimed per dispatcher transaction, and claim transactions per dispatcher run (a
# burst spills into the next tick).
PUBLISH_DISPATCH_BATCH = env.int("PUBLISH_DISPATCH_BATCH", default=500)
PUBLISH_DISPATCH_MAX_BATCHES = env.int("PUBLISH_DISPATCH_MAX_BATCHES", default=40)
# Posts due within this many seconds are claimed early and queued with a countdown.
PUBLISH_STAGE_AHEAD_SECONDS = env.float("PUBLISH_STAGE_AHEAD_SECONDS", default=2.0)
# Targets per posts.publish_targets task: what a batch costs besides its calls (the task, claim,
# read, credentials, recording transaction) is paid once for all of them; 25 instead of 10 cut the
# worker's CPU per target by about a third and PostgreSQL's by about 40 %, and 50 (two rounds of
# PUBLISH_ATTEMPT_THREADS) instead of 25 cut PostgreSQL's by about a third again (docs/benchmarks.md).
PUBLISH_TASK_BATCH = env.int("PUBLISH_TASK_BATCH", default=50)
# Platform calls of one batch in flight at once (the rest of a batch waits for a free slot).
PUBLISH_ATTEMPT_THREADS = max(1, env.int("PUBLISH_ATTEMPT_THREADS", default=25))
# Comment reads of one account's sync side by side on the worker's threads (engagement.sync).
COMMENT_SYNC_THREADS = max(1, env.int("COMMENT_SYNC_THREADS", default=8))
# How often beat looks for new published entries and queues the accounts whose comments are due.
COMMENT_SYNC_INTERVAL_SECONDS = env.float("COMMENT_SYNC_INTERVAL_SECONDS", default=60.0)
# A PENDING target this long past its due time with no lease has lost its task: re-queued.
PUBLISH_LOST_TASK_SECONDS = env.float("PUBLISH_LOST_TASK_SECONDS", default=60.0)
# A post's latePolicy skip or draft without maxLatenessSeconds allows entries this late.
LATE_POLICY_DEFAULT_SECONDS = env.int("LATE_POLICY_DEFAULT_SECONDS", default=3600)
# The longest firstComment.delaySeconds accepted (the comment goes out this long after its entry).
FIRST_COMMENT_MAX_DELAY_SECONDS = env.int("FIRST_COMMENT_MAX_DELAY_SECONDS", default=3600)
# Retries due later than this are not queued with a countdown; the sweeper queues them when due.
PUBLISH_MAX_COUNTDOWN_SECONDS = env.float("PUBLISH_MAX_COUNTDOWN_SECONDS", default=600.0)
PUBLISH_SWEEP_INTERVAL_SECONDS = env.float("PUBLISH_SWEEP_INTERVAL_SECONDS", default=15.0)
PUBLISH_DISPATCH_INTERVAL_SECONDS = env.float("PUBLISH_DISPATCH_INTERVAL_SECONDS", default=1.0)
# Webhook delivery (webhooks/delivery/). A failed attempt is retried after each delay in turn
# (± 20 % jitter); one attempt plus one per delay in all.
WEBHOOK_RETRY_DELAYS = [
    float(x) for x in env.list("WEBHOOK_RETRY_DELAYS", default=["30", "120", "480", "1920", "7200"])
]
WEBHOOK_TIMEOUT_SECONDS = env.float("WEBHOOK_TIMEOUT_SECONDS", default=10.0)
# The most due deliveries one webhooks.deliver_many task claims (the oldest first: its own, and
# others' when the queue is behind) and sends side by side. What a batch costs besides its POSTs (the
# task, claim, read, recording statements) is paid once for all of them: 50 instead of 10 cut the
# worker's CPU per delivery by about a quarter and PostgreSQL's by about 40 % (measured in-process).
WEBHOOK_DELIVERY_BATCH = max(1, env.int("WEBHOOK_DELIVERY_BATCH", default=50))
# Not a tunable: the documented contract (a webhook is disabled after 20 failures in a row).
WEBHOOK_DISABLE_AFTER_FAILURES = 20
# Not a tunable either: webhook.failing goes to the workspace's other webhooks at this many
# failures in a row (the "15th of 20"; the staff dashboard lists webhooks past it).
WEBHOOK_FAILING_AFTER_FAILURES = 15
# How far back GET /events serves the outbox (days); webhooks.prune_events deletes older events
# (with their deliveries) hourly, so the feed's window is the outbox's.
EVENTS_RETENTION_DAYS = env.int("EVENTS_RETENTION_DAYS", default=30)
# Organizations (issue 31): a deleted workspace is restorable this long, then its data is removed;
# the audit log keeps this long.
WORKSPACE_DELETION_GRACE_DAYS = env.int("WORKSPACE_DELETION_GRACE_DAYS", default=30)
# The purge removes a workspace's rows this many per statement, each batch its own transaction
# (workspaces.purge): a workspace of a million posts is never one transaction.
WORKSPACE_PURGE_BATCH_SIZE = max(1, env.int("WORKSPACE_PURGE_BATCH_SIZE", default=5000))
AUDIT_RETENTION_DAYS = env.int("AUDIT_RETENTION_DAYS", default=365)

# --- Logging: JSON lines, never a secret; request id, workspace and key prefix on each --------
# One configuration for every process: Django applies it in web and `manage.py`, the Celery worker
# and beat through its setup_logging signal (core.task_observability), gunicorn's master through
# logconfig_dict (config/gunicorn.py), so gunicorn's own lines and the access log are JSON too.
# LOG_LEVEL (INFO by default) is every process's level.
LOG_FORMAT = choice(env, "LOG_FORMAT", ("json", "plain"), "json")
LOG_LEVEL = choice(env, "LOG_LEVEL", ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"), "INFO")
LOGGING_CONFIG = "core.logs.configure"  # dictConfig, and Python's warnings as log lines
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"context": {"()": "core.logs.LogContextFilter"}},
    "formatters": {
        "json": {"()": "core.logs.RedactingJsonFormatter"},
        "plain": {
            "()": "core.logs.RedactingPlainFormatter",
            "format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s",
        },
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT, "filters": ["context"]}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "django.request": {"level": "ERROR"},
        # gunicorn's master and workers (start-up, worker boots and exits), and the access log: one
        # line per request whatever LOG_LEVEL says.
        "gunicorn.error": {"handlers": ["console"], "level": LOG_LEVEL, "propagate": False},
        "gunicorn.access": {"handlers": ["console"], "level": "INFO", "propagate": False},
    },
}

# --- Metrics: Prometheus, every web and worker process of a run writing into one directory --
# `GET /metrics` answers with `Authorization: Bearer <METRICS_TOKEN>`; in sandbox mode also without
# it to a client on loopback (`make run`), else 404. Live mode refuses to start without the token.
METRICS_TOKEN = env.str("METRICS_TOKEN", default="").strip() if SANDBOX else required_in_live(env, "METRICS_TOKEN")
# prometheus-client reads this variable when it is first imported, so it is set here, before any
# metric exists. `make run` empties the directory at start; a deployment gives each run a new one.
# A pytest process (the xdist controller and each worker) always counts in a directory of its own:
# the workers inherit the controller's environment, and a directory taken from there would make
# each worker's /metrics add up the other worker's requests.
if "pytest" in sys.modules:
    PROMETHEUS_MULTIPROC_DIR = str(VAR_DIR / "metrics" / f"test-{os.getpid()}")
else:
    PROMETHEUS_MULTIPROC_DIR = env.str(
        "PROMETHEUS_MULTIPROC_DIR",
        default=str(VAR_DIR / "metrics" / (f"test-{os.getpid()}" if TESTING else "run")),
    )
os.environ["PROMETHEUS_MULTIPROC_DIR"] = PROMETHEUS_MULTIPROC_DIR
Path(PROMETHEUS_MULTIPROC_DIR).mkdir(parents=True, exist_ok=True)
if TESTING:
    embedded.prune_dead_metrics_dirs(VAR_DIR / "metrics")

# --- Readiness: what /readyz calls late -------------------------------------------------------
READYZ_BEAT_STALE_SECONDS = env.int("READYZ_BEAT_STALE_SECONDS", default=120)
READYZ_PUBLISH_LAG_SECONDS = env.int("READYZ_PUBLISH_LAG_SECONDS", default=60)

SESSION_COOKIE_HTTPONLY = True
# Admin messages (a new API key is shown once through one) stay server-side, not in a cookie.
MESSAGE_STORAGE = "django.contrib.messages.storage.session.SessionStorage"
CSRF_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
if not DEBUG and not SANDBOX:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    # Behind a TLS-terminating proxy (the documented deployment): it sets X-Forwarded-Proto.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = flag(env, "SECURE_SSL_REDIRECT", default=True)
    # /healthz, /readyz and /metrics are probed over plain HTTP from inside the network.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = flag(env, "SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
    SECURE_HSTS_PRELOAD = flag(env, "SECURE_HSTS_PRELOAD", default=False)
