"""Settings, read from the environment (and an optional `.env` file) by django-environ.

Development defaults are safe to run on a laptop; README "Production checklist"
lists what to set before exposing the site.
"""

from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

DEBUG = env.bool("DEBUG", default=True)
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
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
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
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
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

if not DEBUG:
    SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=True)
    CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=True)

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

# --- API ------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first: an anonymous API call then gets 401 with WWW-Authenticate.
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_SCHEMA_CLASS": "project.schema.AutoSchema",
    "EXCEPTION_HANDLER": "project.errors.api_exception_handler",
    "DEFAULT_THROTTLE_CLASSES": [
        "rest_framework.throttling.AnonRateThrottle",
        "rest_framework.throttling.UserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env.str("API_THROTTLE_ANON", default="60/min"),
        "user": env.str("API_THROTTLE_USER", default="1200/min"),
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

CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

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
