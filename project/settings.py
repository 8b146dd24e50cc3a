"""Settings, read from the environment (and an optional `.env` file) by django-environ.

The defaults are production-safe (DEBUG=False, HTTPS only, CSP); `make run` sets
DEBUG=True for development. README "Production checklist" lists what to set before
exposing the site.
"""

from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
# ENV_FILE names another file (ENV_FILE=/dev/null: none, as the deploy-settings tests use).
environ.Env.read_env(env.str("ENV_FILE", default=str(BASE_DIR / ".env")), overwrite=False)

DEBUG = env.bool("DEBUG", default=False)
SECRET_KEY = env.str("SECRET_KEY", default="")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("DEBUG=False requires SECRET_KEY to be set.")
    SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "project.admin_site.ProjectAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "project",
    "social",
    "notifications",
    "delivery",
    "axes",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "project.security.ContentSecurityPolicyMiddleware",
    "project.guard.RequestGuardMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "project.timezones.BrowserTimeZoneMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",  # last: turns a lockout into a 429 answer
]

ROOT_URLCONF = "project.urls"
WSGI_APPLICATION = "project.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "project" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "project.context_processors.header",
            ],
        },
    },
]

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'var' / 'db.sqlite3'}")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_USER_MODEL = "social.User"
# Axes first: it refuses a locked-out account or address before the password is checked.
AUTHENTICATION_BACKENDS = ["project.security.LoginLimitBackend", "social.backends.CaseInsensitiveModelBackend"]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
CSRF_FAILURE_VIEW = "project.views.csrf_failure"  # keeps a post's text (project.drafts)
LOGIN_REDIRECT_URL = "timeline"
LOGOUT_REDIRECT_URL = "timeline"

LANGUAGE_CODE = "en-us"
TIME_ZONE = env.str("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
# WhiteNoise serves static files (the site's CSS/JS and the Swagger UI assets) from the
# WSGI process itself, so DEBUG=False needs no separate file server; run collectstatic.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = DEBUG

# --- Security (README "Security settings") --------------------------------------
if not DEBUG:
    SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=True)
    CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=True)
    # Behind a TLS-terminating proxy that already redirects, set SECURE_SSL_REDIRECT=False.
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31_536_000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
    # Allows (does not make) a submission to the browsers' HSTS preload list.
    SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=True)
# Only behind a proxy that sets this header itself (and strips it from clients), e.g.
# SECURE_PROXY_SSL_HEADER=HTTP_X_FORWARDED_PROTO,https
if env.str("SECURE_PROXY_SSL_HEADER", default=""):
    SECURE_PROXY_SSL_HEADER = tuple(env.list("SECURE_PROXY_SSL_HEADER"))
# Sent on every answer (project.security); no inline script anywhere.
CONTENT_SECURITY_POLICY = env.str(
    "CONTENT_SECURITY_POLICY",
    default="default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; "
    "frame-ancestors 'none'",
)
# How many reverse proxies in front of the app append to X-Forwarded-For; 0 (the
# default) trusts no forwarded header: the client address is REMOTE_ADDR.
NUM_PROXIES = env.int("NUM_PROXIES", default=0)
# Log-in guessing limits (django-axes): per account and, separately, per address, on
# the log-in page, the admin log-in and POST /api/auth/token/. Not the API throttle.
AXES_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=10)
AXES_COOLOFF_TIME = env.float("LOGIN_LOCKOUT_HOURS", default=1.0)
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_USERNAME_CALLABLE = "project.security.login_username"  # "Alice" and "alice" share one count
AXES_CLIENT_IP_CALLABLE = "project.security.client_ip"
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"  # the log-in pages' 429 (the API answers JSON itself)
# Request limits the guard (project.guard) answers as JSON under /api/.
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=2_621_440)
DATA_UPLOAD_MAX_NUMBER_FIELDS = env.int("DATA_UPLOAD_MAX_NUMBER_FIELDS", default=1000)
JSON_MAX_DEPTH = env.int("JSON_MAX_DEPTH", default=32)
# Signed page cursors (project.cursors) older than this are refused.
CURSOR_MAX_AGE = env.int("CURSOR_MAX_AGE", default=7 * 24 * 3600)

# --- DynamoDB -------------------------------------------------------------
# DYNAMODB_HOST points at DynamoDB Local (the default) or any endpoint; unset it
# (DYNAMODB_HOST=) to talk to AWS DynamoDB in DYNAMODB_REGION with the usual
# AWS credentials from the environment.
DYNAMODB_HOST = env.str("DYNAMODB_HOST", default="http://127.0.0.1:8765") or None
DYNAMODB_REGION = env.str("DYNAMODB_REGION", default="us-east-1")
DYNAMODB_TABLE_PREFIX = env.str("DYNAMODB_TABLE_PREFIX", default="dev_")
# DynamoDB Local accepts any credentials; AWS uses the standard credential chain.
DYNAMODB_LOCAL_CREDENTIALS = DYNAMODB_HOST is not None and env.bool("DYNAMODB_LOCAL_CREDENTIALS", default=True)

# --- Product settings -----------------------------------------------------
SIGNUP_OPEN = env.bool("SIGNUP_OPEN", default=True)
TIMELINE_DAY_SHARDS = env.int("TIMELINE_DAY_SHARDS", default=10)
LIKE_COUNTER_SHARDS = env.int("LIKE_COUNTER_SHARDS", default=1)
VIEW_COUNTER_SHARDS = env.int("VIEW_COUNTER_SHARDS", default=1)
COUNTER_SHARDS_MAX = env.int("COUNTER_SHARDS_MAX", default=100)
COUNTER_AGGREGATION_DELAY = env.float("COUNTER_AGGREGATION_DELAY", default=1.0)
COUNTER_AGGREGATION_LEASE = env.float("COUNTER_AGGREGATION_LEASE", default=30.0)
COUNTER_DUE_SHARDS = env.int("COUNTER_DUE_SHARDS", default=10)
RANKING_SHARDS = env.int("RANKING_SHARDS", default=10)
NOTIFICATION_READ_RETENTION_DAYS = env.int("NOTIFICATION_READ_RETENTION_DAYS", default=30)
# Liker ids kept in one unread like notification (the count goes on): the item stays far below 400 KB.
LIKE_NOTIFICATION_LIKERS_MAX = env.int("LIKE_NOTIFICATION_LIKERS_MAX", default=50)
# Like events (the likes' outbox, issue 9): partitions of the pending index the folder
# queries, and whether a like tries to fold its comment's events before it answers.
LIKE_EVENT_PARTS = env.int("LIKE_EVENT_PARTS", default=10)
LIKE_FOLD_IN_REQUEST = env.bool("LIKE_FOLD_IN_REQUEST", default=True)
FEED_MAX_ENTRIES = env.int("FEED_MAX_ENTRIES", default=100)
DELIVERY_CHUNK_SIZE = env.int("DELIVERY_CHUNK_SIZE", default=1000)  # user ids per delivery chunk, at most 1,000
# Activity log (README "Activity log"): by_day write shards, months kept before export+drop,
# where exports go, and the rollup's grace for late writes / how often it re-rolls today.
ACTIVITY_DAY_SHARDS = env.int("ACTIVITY_DAY_SHARDS", default=10)
ACTIVITY_RETENTION_MONTHS = env.int("ACTIVITY_RETENTION_MONTHS", default=13)
ACTIVITY_EXPORT_DIR = env.str("ACTIVITY_EXPORT_DIR", default=str(BASE_DIR / "var" / "activity_exports"))
ACTIVITY_EXPORT_S3_BUCKET = env.str("ACTIVITY_EXPORT_S3_BUCKET", default="")  # AWS: DynamoDB export to S3
ACTIVITY_EXPORT_S3_PREFIX = env.str("ACTIVITY_EXPORT_S3_PREFIX", default="activity/")
ACTIVITY_ROLLUP_GRACE_SECONDS = env.float("ACTIVITY_ROLLUP_GRACE_SECONDS", default=900.0)
ACTIVITY_ROLLUP_TODAY_SECONDS = env.float("ACTIVITY_ROLLUP_TODAY_SECONDS", default=300.0)

# --- API ------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first: an anonymous API call then gets 401 with WWW-Authenticate.
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_SCHEMA_CLASS": "project.schema.AutoSchema",
    "DEFAULT_PARSER_CLASSES": [
        "project.parsers.SafeJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "NUM_PROXIES": NUM_PROXIES,  # the anonymous throttle keys on the address, never on a forged header
    "EXCEPTION_HANDLER": "project.errors.api_exception_handler",
    "DEFAULT_THROTTLE_CLASSES": [
        "rest_framework.throttling.AnonRateThrottle",
        "rest_framework.throttling.UserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env.str("API_THROTTLE_ANON", default="60/min"),
        "user": env.str("API_THROTTLE_USER", default="1200/min"),
        # /api/live/, polled every 2 s by each open page: its own budget (a few tabs' worth).
        "live": env.str("API_THROTTLE_LIVE", default="150/min"),
    },
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Dynamo Social API",
    "DESCRIPTION": "Comments, likes, notifications, feed and broadcast deliveries on DynamoDB.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
}

# A shared cache (e.g. CACHE_URL=redis://...) makes "one view per viewer per hour" hold across processes.
CACHES = {"default": env.cache("CACHE_URL", default="locmemcache://")}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "loggers": {
        "project": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
        "social": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
        "notifications": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
        "delivery": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    },
}
