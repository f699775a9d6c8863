"""Settings, read from the environment (12-factor).

Nothing set: a SQLite file under ``var/``, Celery tasks run eagerly in-process,
DEBUG on. ``DATABASE_URL`` / ``CELERY_BROKER_URL`` switch to PostgreSQL and
Redis-backed workers. ``DJANGO_ENV=production`` turns on secure defaults and
refuses to start without a real ``SECRET_KEY``.
"""

from datetime import timedelta
from pathlib import Path

import environ
from csp.constants import NONCE
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
# A local .env is convenient for development; it is git-ignored.
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

DJANGO_ENV = env.str("DJANGO_ENV", default="development")
PRODUCTION = DJANGO_ENV == "production"

_DEV_SECRET = "dev-only-insecure-secret-key-do-not-use-in-production"
SECRET_KEY = env.str("SECRET_KEY", default=_DEV_SECRET)
if PRODUCTION and (SECRET_KEY == _DEV_SECRET or len(SECRET_KEY) < 50):
    raise ImproperlyConfigured("DJANGO_ENV=production needs SECRET_KEY set to a random string of 50+ characters.")

DEBUG = env.bool("DEBUG", default=not PRODUCTION)
# With DEBUG on, Django's debug 500 page only for staff; everyone else gets the ordinary one.
DEFAULT_EXCEPTION_REPORTER = "annotation.middleware.StaffOnlyDebugReporter"
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=[] if PRODUCTION else ["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    # Before django.contrib.auth: its createsuperuser applies the password rules with --noinput too.
    "annotation.password_rules",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    # API tokens: hashed, expiring, scoped (annotation/tokens.py).
    "knox",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "simple_history",
    "axes",
    "csp",
    "annotation",
    "tasks",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Before anything reads the body: a request over its size limit is refused unread.
    "annotation.middleware.RequestSizeLimitMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    "annotation.audit.AuditSourceMiddleware",
    "annotation.middleware.DatabaseUnavailableMiddleware",
    "annotation.middleware.RefusalMiddleware",
    # Last, as django-axes asks: it turns a lockout into its response.
    "axes.middleware.AxesMiddleware",
]

AUTHENTICATION_BACKENDS = [
    # Counts failed logins and locks a username, or a client address, out after too many.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# Login lockout (annotation/lockout.py): a username is locked (from every address) after
# LOGIN_FAILURES_PER_USERNAME failures, a client address (for every username) after
# LOGIN_FAILURES_PER_ADDRESS, each for LOGIN_LOCKOUT_MINUTES.
LOGIN_FAILURES_PER_USERNAME = env.int("LOGIN_FAILURES_PER_USERNAME", default=5)
LOGIN_FAILURES_PER_ADDRESS = env.int("LOGIN_FAILURES_PER_ADDRESS", default=30)
AXES_HANDLER = "annotation.lockout.PerParameterLimitHandler"
AXES_FAILURE_LIMIT = LOGIN_FAILURES_PER_USERNAME
AXES_COOLOFF_TIME = timedelta(minutes=env.int("LOGIN_LOCKOUT_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False
# Reverse proxies in front of the app, each appending to X-Forwarded-For. 0: the client is
# REMOTE_ADDR. Behind a proxy, set it, or every user shares the proxy's address for the
# login lockout and the anonymous API rate (both read the address the same way).
TRUSTED_PROXY_COUNT = env.int("TRUSTED_PROXY_COUNT", default=0)
AXES_CLIENT_IP_CALLABLE = "annotation.lockout.client_address"

# Content Security Policy: scripts only from our own static files; the one
# inline script is the import map of the vendored ES modules, allowed by a
# per-request nonce (templates/_importmap.html). Styles may be inline only
# because server-rendered SVG plots carry style attributes.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'", NONCE],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "media-src": ["'self'", "https:"],
        "connect-src": ["'self'"],
        "font-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'"],
    }
}

ROOT_URLCONF = "rescue_annot.urls"

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
                "annotation.context_processors.roles",
                "annotation.context_processors.background",
            ],
        },
    },
]

WSGI_APPLICATION = "rescue_annot.wsgi.application"
ASGI_APPLICATION = "rescue_annot.asgi.application"

VAR_DIR = Path(env.str("VAR_DIR", default=str(BASE_DIR / "var")))
DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    VAR_DIR.mkdir(parents=True, exist_ok=True)
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Reconnect after a database restart instead of failing until the process restarts.
    DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("CONN_MAX_AGE", default=60))
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    # Every server-side cursor here (Django's ``.iterator()``, the embedding cache) reads its whole result, but
    # PostgreSQL plans cursors for their first 10% of rows: at 10x the release that made reading the free-text
    # parts of every revision take 18 s instead of 11. Plan them for the whole result.
    _options = DATABASES["default"].setdefault("OPTIONS", {})
    _options["options"] = f"{_options.get('options', '')} -c cursor_tuple_fraction=1.0".strip()
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Applied by the password change page, the admin and `manage.py create_user` alike.
PASSWORD_MIN_LENGTH = env.int("PASSWORD_MIN_LENGTH", default=12)
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {
        "NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
        "OPTIONS": {"min_length": PASSWORD_MIN_LENGTH},
    },
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env.str("STATIC_ROOT", default=str(BASE_DIR / "staticfiles")))
if not PRODUCTION:
    STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # whitenoise warns about a missing root
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if PRODUCTION
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}
# Outside production, serve straight from the source folders (no collectstatic needed).
WHITENOISE_USE_FINDERS = not PRODUCTION
MEDIA_ROOT = Path(env.str("MEDIA_ROOT", default=str(VAR_DIR / "media")))
MEDIA_URL = "media/"

# --- Celery -----------------------------------------------------------------
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="")
# No broker configured: run tasks eagerly in the calling process (the embedded default).
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
# With eager tasks, a job a page starts (the agreement reports) runs in a thread of the process after the
# response, so the page answers at once with its progress bar; off in the tests, which run jobs on commit.
JOBS_EAGER_IN_THREAD = env.bool("JOBS_EAGER_IN_THREAD", default=True)
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A worker process whose peak memory (ru_maxrss, KiB) has passed this is replaced by a fresh one after its task: a
# safety net for a process that grew (a 10x freeze, say). Below it, a worker keeps the embedding model between
# free-text reports (a full-scale one peaks at about 1 GB; 0 = never replace).
CELERY_WORKER_MAX_MEMORY_PER_CHILD = env.int("CELERY_WORKER_MAX_MEMORY_PER_CHILD", default=1_200_000) or None
CELERY_TASK_DEFAULT_QUEUE = "default"
# Gemini calls get their own queue so that their concurrency and rate limit are set apart.
CELERY_TASK_ROUTES = {"annotation.preannotate.*": {"queue": "preannotate"}}
# Jobs that run the embedding model (free-text agreement reports, a clip's similarities) have their own queue: a
# cold full-scale report takes minutes, and label reports must not wait behind it. Run a worker for it beside the
# default one (``-Q embeddings -c 1``: one model in memory), or one worker for all queues on a small machine.
EMBEDDINGS_QUEUE = env.str("EMBEDDINGS_QUEUE", default="embeddings")
# Publishing must not hang a web request when the broker is down: the job row
# stays queued and the sweeper sends it once the broker is back.
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.5, "interval_max": 1}
CELERY_BROKER_CONNECTION_TIMEOUT = 3
# A message a killed worker had taken comes back after this long; longer than one clip can take.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=3600)}
CELERY_BEAT_SCHEDULE = {
    "sweep-stale-jobs": {"task": "annotation.celery_tasks.sweep_stale_jobs_task", "schedule": 60.0},
}
# Job state lives in the database (annotation.Job); Celery results are not needed.
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]

# --- Gemini -----------------------------------------------------------------
GEMINI_API_KEY = env.str("GEMINI_API_KEY", default="")
GEMINI_MODEL = env.str("GEMINI_MODEL", default="gemini-2.5-flash")
GEMINI_BASE_URL = env.str("GEMINI_BASE_URL", default="")
# Requests per minute, shared by every worker through Redis and never exceeded.
GEMINI_RPM = env.int("GEMINI_RPM", default=60)
GEMINI_TIMEOUT_SECONDS = env.float("GEMINI_TIMEOUT_SECONDS", default=300)
# USD per million tokens, for the cost estimate on each draft.
GEMINI_PRICE_IN_PER_MTOK = env.float("GEMINI_PRICE_IN_PER_MTOK", default=0.30)
GEMINI_PRICE_OUT_PER_MTOK = env.float("GEMINI_PRICE_OUT_PER_MTOK", default=2.50)

# --- REST API ---------------------------------------------------------------
REST_FRAMEWORK = {
    # Token first: an unauthenticated API call then gets 401 with a WWW-Authenticate header.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "annotation.tokens.ScopedTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # JSON nested deeper than MAX_JSON_DEPTH is refused with 400, in bodies and in form fields.
    "DEFAULT_PARSER_CLASSES": [
        "annotation.api.parsers.BoundedJSONParser",
        "annotation.api.parsers.BoundedFormParser",
        "annotation.api.parsers.BoundedMultiPartParser",
    ],
    "DEFAULT_THROTTLE_CLASSES": ["annotation.api.throttles.AnonymousRate", "annotation.api.throttles.UserRate"],
    # The anonymous rate's client address: REMOTE_ADDR, or X-Forwarded-For behind trusted proxies.
    "NUM_PROXIES": TRUSTED_PROXY_COUNT,
}

# API tokens (annotation/tokens.py, django-rest-knox): only a SHA-512 digest of each key is stored; a token expires
# API_TOKEN_DAYS after it was made and dies with a password change; its scope is read or read-write.
API_TOKEN_DAYS = env.int("API_TOKEN_DAYS", default=90)
KNOX_TOKEN_MODEL = "annotation.ApiToken"
# knox's own token table is never made: its migrations would create it although annotation.ApiToken replaces it.
MIGRATION_MODULES = {"knox": None}
REST_KNOX = {
    "TOKEN_MODEL": KNOX_TOKEN_MODEL,
    "TOKEN_TTL": timedelta(days=API_TOKEN_DAYS),
    "AUTO_REFRESH": False,  # a token lives its days from when it was made, however often it is used
    "AUTH_HEADER_PREFIX": "Token",
}


def _rate(name: str, default: str) -> str | None:
    value = env.str(name, default=default).strip()
    return None if value.lower() in ("", "off", "none") else value


# API request rates ("N/second|minute|hour|day", or "off"), per client address for callers
# without a session or token and per user otherwise. Counted in the cache (CACHE_URL).
API_THROTTLE_RATES = {
    "anon": _rate("API_THROTTLE_ANON", "60/minute"),
    "user": _rate("API_THROTTLE_USER", "1200/minute"),
}
# Throttle counts live here; one per process unless CACHE_URL names a shared cache (redis://...).
CACHES = {"default": env.cache("CACHE_URL", default="locmemcache://")}
SPECTACULAR_SETTINGS = {
    "TITLE": "RESCUE annotation platform API",
    "VERSION": "1",
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    # Swagger UI from our own static files (no CDN).
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Clips, ingest and the annotator's record all name a scenario: one enum in the schema, not one per component.
    "ENUM_NAME_OVERRIDES": {"ScenarioEnum": "annotation.models.Scenario"},
}

# --- Agreement ----------------------------------------------------------------
# Scopes up to this many rows are computed inside the request; larger ones on a worker.
AGREEMENT_SYNC_MAX_ROWS = env.int("AGREEMENT_SYNC_MAX_ROWS", default=1500)

# --- Releases ---------------------------------------------------------------
RELEASES_ROOT = Path(env.str("RELEASES_ROOT", default=str(VAR_DIR / "releases")))

# --- Request and ingest limits (README: "Security and limits") ------------------
# Any request but an ingest upload: larger bodies are refused with 413 before they are read.
MAX_REQUEST_BYTES = env.int("MAX_REQUEST_BYTES", default=2 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_REQUEST_BYTES
# An ingest upload (page or API) as a whole: refused with 413 before it is read.
MAX_INGEST_REQUEST_BYTES = env.int("MAX_INGEST_REQUEST_BYTES", default=4 * 1024**3)
# One transcript file; and one video or audio file. Uploads are streamed to temporary files
# (never held in memory) and a file stops being written the moment it passes its limit.
MAX_UPLOAD_BYTES = env.int("MAX_UPLOAD_BYTES", default=20 * 1024 * 1024)
MAX_MEDIA_BYTES = env.int("MAX_MEDIA_BYTES", default=2 * 1024**3)
FILE_UPLOAD_HANDLERS = ["annotation.ingest.uploads.SizeLimitedUploadHandler"]
# A lead uploads a whole folder of transcripts at once (the release has 191 clips).
DATA_UPLOAD_MAX_NUMBER_FILES = env.int("DATA_UPLOAD_MAX_NUMBER_FILES", default=1000)
# Arrays/objects inside one another in any JSON a request carries.
MAX_JSON_DEPTH = env.int("MAX_JSON_DEPTH", default=32)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # Refusals (4xx) are part of normal work: one line each, never a traceback.
    "filters": {"refusals_in_one_line": {"()": "annotation.log_filters.RefusalsInOneLine"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["refusals_in_one_line"]}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    # django-axes logs every successful login at INFO; only lockouts matter.
    "loggers": {"axes": {"level": "WARNING"}},
}

if PRODUCTION:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_CONTENT_TYPE_NOSNIFF = True
    SECURE_REFERRER_POLICY = "same-origin"
    X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
