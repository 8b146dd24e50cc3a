"""Settings, read from the environment (and an optional `.env` file) by django-environ.

The defaults are production-safe (DEBUG=False, HTTPS only, CSP); `make dev` sets
DEBUG=True for development, `make run` serves production settings over plain HTTP on
127.0.0.1 (LOCAL_PLAIN_HTTP). docs/how-to/run-in-production.md "Production checklist" lists what to set before
exposing the site.
"""

import ipaddress
import os
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

from project.operations.logs import process_prefix

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
# ENV_FILE names another file (ENV_FILE=/dev/null: none, as the deploy-settings tests use).
environ.Env.read_env(env.str("ENV_FILE", default=str(BASE_DIR / ".env")), overwrite=False)

DEBUG = env.bool("DEBUG", default=False)
SECRET_KEY = env.str("SECRET_KEY", default="")
# A file holding the key (`make run` generates var/secret_key once and names it here).
SECRET_KEY_FILE = env.str("SECRET_KEY_FILE", default="")
if not SECRET_KEY and SECRET_KEY_FILE:
    try:
        SECRET_KEY = Path(SECRET_KEY_FILE).read_text().strip()
    except OSError as error:
        raise ImproperlyConfigured(f"SECRET_KEY_FILE={SECRET_KEY_FILE} cannot be read: {error}") from error
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("DEBUG=False requires SECRET_KEY (or SECRET_KEY_FILE) to be set.")
    SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"
# Django's test client (Host: testserver) is let in by the test set-up itself, never here.
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

# --- Serving (config/gunicorn.py reads the WEB_* settings; docs/reference/settings.md) ----------
HOST = env.str("HOST", default="127.0.0.1")  # the address the web server binds
PORT = env.int("PORT", default=8000)
# Plain HTTP without HTTPS redirect, secure cookies or HSTS: for serving production
# settings on the loopback address only (`make run`); refused on any other address.
LOCAL_PLAIN_HTTP = env.bool("LOCAL_PLAIN_HTTP", default=False)
if LOCAL_PLAIN_HTTP and not (HOST == "localhost" or ipaddress.ip_address(HOST).is_loopback):
    raise ImproperlyConfigured(f"LOCAL_PLAIN_HTTP is for the loopback address only, not HOST={HOST}.")
# Requests one web process works on at once (project.serving.shedding). A request finding them all
# busy waits for a slot up to WEB_QUEUE_TIMEOUT seconds, or WEB_QUEUE_TARGET once the queue
# has stood for WEB_QUEUE_INTERVAL or a request was refused within it (sustained overload);
# past its wait, 503 with Retry-After. A request body must arrive within WEB_BODY_TIMEOUT
# seconds (else 408), read before the request takes a slot; one client address has at most
# WEB_BODY_READS_PER_ADDRESS bodies being read at once in a process (else 429, connection closed).
WEB_MAX_IN_FLIGHT = env.int("WEB_MAX_IN_FLIGHT", default=8)
WEB_QUEUE_TIMEOUT = env.float("WEB_QUEUE_TIMEOUT", default=1.0)
WEB_QUEUE_INTERVAL = env.float("WEB_QUEUE_INTERVAL", default=0.5)
WEB_QUEUE_TARGET = env.float("WEB_QUEUE_TARGET", default=0.005)
WEB_BODY_TIMEOUT = env.float("WEB_BODY_TIMEOUT", default=10.0)
WEB_BODY_READS_PER_ADDRESS = env.int("WEB_BODY_READS_PER_ADDRESS", default=8)
# Threads per process (web or worker) for work handed to other threads, besides gunicorn's
# WEB_THREADS: split by tier in project.serving.pools (reads 5/8, the fold's writes 2/8, its
# finishers 1/8; at least one each), made as work comes.
POOL_THREADS = env.int("POOL_THREADS", default=32)
# How long /readyz trusts its last table check, in this process (seconds).
READYZ_CACHE_SECONDS = env.float("READYZ_CACHE_SECONDS", default=10.0)
# How often a process computes /readyz at most (seconds); requests meanwhile get its last answer.
READYZ_MIN_INTERVAL = env.float("READYZ_MIN_INTERVAL", default=1.0)

INSTALLED_APPS = [
    "project.admin.site.ProjectAdminConfig",
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
    # Two-factor log-in (project/identity/two_factor/): authenticator apps and recovery codes.
    "django_otp",
    "django_otp.plugins.otp_totp",
    "django_otp.plugins.otp_static",
    "project",
    "social",
    "notifications",
    "delivery",
]

MIDDLEWARE = [
    "project.operations.logs.RequestIdMiddleware",  # first: every log line of the request carries its id
    "project.operations.health.HealthMiddleware",  # /healthz, /readyz: before the HTTPS redirect and host check
    "project.operations.usage.UsageMiddleware",  # DynamoDB units and requests per route (USAGE_ENABLED)
    "project.operations.metrics.RequestMetricsMiddleware",  # removes itself when metrics are off
    "project.serving.shedding.LoadSheddingMiddleware",  # the body read, then a slot (WEB_MAX_IN_FLIGHT) or 503
    "project.serving.after_response.AfterResponseMiddleware",  # work queued to run once the answer is sent
    "django.middleware.security.SecurityMiddleware",
    "project.http.security.ContentSecurityPolicyMiddleware",
    "project.http.guard.RequestGuardMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",  # the language cookie (the switcher), else Accept-Language
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django_otp.middleware.OTPMiddleware",  # request.user.is_verified(): logged in with a code
    "django.contrib.messages.middleware.MessageMiddleware",
    "social.spam.visits.TrustVisitMiddleware",  # a logged-in person's day visited (trust levels)
    "project.http.locales.PersonLanguageMiddleware",  # a logged-in person's chosen language
    "project.http.timezones.BrowserTimeZoneMiddleware",  # their chosen time zone, else the browser's
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "project.identity.login_devices.LoginDeviceMiddleware",  # a successful log-in's device cookie
    "project.identity.login.LoginRefusalMiddleware",  # last: a refused log-in becomes a 429 answer
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

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
                "project.http.context_processors.header",
            ],
        },
    },
]

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'var' / 'db.sqlite3'}")}
# Each web thread keeps its database connection between requests (checked before reuse,
# so a connection the server dropped is replaced, not an error): opening and closing one
# per request costs about 1.5 ms of the 2.4 ms an API call spends in Django's WSGI handler.
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DATABASE_CONN_MAX_AGE", default=300)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_USER_MODEL = "social.User"
# Django's password check inside the log-in limits (project/identity/login_limits.py).
AUTHENTICATION_BACKENDS = ["project.identity.login.LimitedModelBackend"]
SESSION_ENGINE = "project.identity.sessions"  # Django's database sessions, read with a query compiled once
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
CSRF_FAILURE_VIEW = "project.http.views.csrf_failure"  # keeps a post's text (social.drafts)
LOGIN_REDIRECT_URL = "timeline"
LOGOUT_REDIRECT_URL = "timeline"

# E-mail (password reset links): EMAIL_URL as django-environ reads it, e.g.
# smtp+tls://user:password@smtp.example.com:587 or filemail:///var/mail-out; by default the
# console (the message is printed by the web process), so `make run` needs no mail server.
vars().update(env.email_url("EMAIL_URL", default="consolemail://"))
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="Dynamo Social <noreply@localhost>")
# A reset link works once and for this many seconds (Django's signed token carries its time).
PASSWORD_RESET_TIMEOUT = env.int("PASSWORD_RESET_TIMEOUT", default=3600)
# Notification e-mail (notifications/mail/, docs/how-to/set-up-email.md). Links in mails start with SITE_URL
# (never a request's host); a reply, mention or watched-thread reply still unread after
# NOTIFY_EMAIL_DELAY seconds is mailed to people who opted in, at most MAIL_LIMIT_RECIPIENT
# mails per person and MAIL_LIMIT_SITE per site (rules as the write limits: "N/period,...").
SITE_URL = env.str("SITE_URL", default="http://127.0.0.1:8000").rstrip("/")
NOTIFY_EMAIL_DELAY = env.int("NOTIFY_EMAIL_DELAY", default=600)
MAIL_LIMIT_RECIPIENT = env.str("MAIL_LIMIT_RECIPIENT", default="10/hour,50/day")
MAIL_LIMIT_SITE = env.str("MAIL_LIMIT_SITE", default="600/min,50000/day")
MAIL_LEASE_SECONDS = env.int("MAIL_LEASE_SECONDS", default=120)  # a sender's claim on one mail
NOTIFY_DIGEST_HOUR = env.int("NOTIFY_DIGEST_HOUR", default=8)  # UTC hour the daily (and Monday's weekly) digest goes
# An e-mail verification link works for this many seconds.
EMAIL_VERIFY_TIMEOUT = env.int("EMAIL_VERIFY_TIMEOUT", default=3 * 24 * 3600)
# Days the mail ledger keeps a line (staff read it; TTL deletes it afterwards).
MAIL_LEDGER_DAYS = env.int("MAIL_LEDGER_DAYS", default=180)
# Web Push (notifications/push/, docs/how-to/turn-on-push.md). The VAPID private key (raw P-256,
# base64url) signs every push; VAPID_PRIVATE_KEY_FILE names a file holding it (`make run` generates
# var/vapid_private_key once). Pushes go only to endpoints on PUSH_SERVICE_HOSTS (`*.host` matches
# subdomains): the browser vendors' push services.
VAPID_PRIVATE_KEY = env.str("VAPID_PRIVATE_KEY", default="")
VAPID_PRIVATE_KEY_FILE = env.str("VAPID_PRIVATE_KEY_FILE", default="")
VAPID_SUBJECT = env.str("VAPID_SUBJECT", default="mailto:noreply@localhost")
PUSH_SERVICE_HOSTS = env.list(
    "PUSH_SERVICE_HOSTS",
    default=["fcm.googleapis.com", "updates.push.services.mozilla.com", "*.push.apple.com", "*.notify.windows.com"],
)
PUSH_SUBSCRIPTIONS_MAX = env.int("PUSH_SUBSCRIPTIONS_MAX", default=10)  # browsers per person
# A person whose page polled within this many seconds is present: their pushes and mails wait (0: off).
NOTIFY_PRESENT_SECONDS = env.int("NOTIFY_PRESENT_SECONDS", default=60)

# The site's languages (docs/how-to/add-a-language.md): English by default; each person's
# choice (their settings, the switcher's cookie, else Accept-Language) is activated per request
# and used for their mails. Catalogues: locale/<code>/LC_MESSAGES/django.po, compiled to .mo.
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("ja", "日本語"), ("pl", "Polski")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env.str("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = env.path("STATIC_ROOT", default=str(BASE_DIR / "staticfiles"))
# WhiteNoise serves static files (the site's CSS/JS and the Swagger UI assets) from the
# WSGI process itself, so DEBUG=False needs no separate file server; run collectstatic.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = DEBUG

# --- Security (docs/explanation/security.md) --------------------------------------
if not DEBUG and not LOCAL_PLAIN_HTTP:
    SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=True)
    CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=True)
    # Behind a TLS-terminating proxy that already redirects, set SECURE_SSL_REDIRECT=False.
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    # A scraper inside the network asks the instance itself over plain HTTP (no proxy header).
    SECURE_REDIRECT_EXEMPT = [r"^metrics$"]
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31_536_000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
    # Allows (does not make) a submission to the browsers' HSTS preload list.
    SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=True)
# Only behind a proxy that sets this header itself (and strips it from clients), e.g.
# SECURE_PROXY_SSL_HEADER=HTTP_X_FORWARDED_PROTO,https
if env.str("SECURE_PROXY_SSL_HEADER", default=""):
    SECURE_PROXY_SSL_HEADER = tuple(env.list("SECURE_PROXY_SSL_HEADER"))
# Sent on every answer (project.http.security); no inline script anywhere.
CONTENT_SECURITY_POLICY = env.str(
    "CONTENT_SECURITY_POLICY",
    default="default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; "
    "frame-ancestors 'none'",
)
# How many reverse proxies in front of the app append to X-Forwarded-For; 0 (the
# default) trusts no forwarded header: the client address is REMOTE_ADDR.
NUM_PROXIES = env.int("NUM_PROXIES", default=0)
# Log-in guessing limits (project/identity/login_limits.py, docs/reference/settings.md "Limits"), on the log-in page,
# the admin log-in and POST /api/auth/token/, kept in DynamoDB. Never lifted by RATE_LIMITS_ENABLED.
LOGIN_LOCKOUT_HOURS = env.float("LOGIN_LOCKOUT_HOURS", default=1.0)  # the window of the three locks below
LOGIN_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=10)  # per account from one address
LOGIN_ADDRESS_FAILURE_LIMIT = env.int("LOGIN_ADDRESS_FAILURE_LIMIT", default=30)  # per address, any accounts
LOGIN_DEVICE_FAILURE_LIMIT = env.int("LOGIN_DEVICE_FAILURE_LIMIT", default=20)  # per device cookie
# Attempts at one account from browsers without its device cookie, all addresses together
# (OWASP's device cookies): past it they are refused, whatever their address, until the window ends.
LOGIN_UNTRUSTED_FAILURES = env.int("LOGIN_UNTRUSTED_FAILURES", default=20)
LOGIN_UNTRUSTED_HOURS = env.float("LOGIN_UNTRUSTED_HOURS", default=24.0)
LOGIN_DEVICE_COOKIE_DAYS = env.int("LOGIN_DEVICE_COOKIE_DAYS", default=365)  # a device cookie lasts this long
LOGIN_NOTICE_FAILURES = env.int("LOGIN_NOTICE_FAILURES", default=3)  # a day, before the owner is told
LOGIN_NOTICE_HOURS = env.float("LOGIN_NOTICE_HOURS", default=6.0)  # at most one notice per this many hours
# Two-factor log-in (project/identity/two_factor/): staff must log in with a code before the admin opens.
TOTP_REQUIRED_FOR_STAFF = env.bool("TOTP_REQUIRED_FOR_STAFF", default=False)
OTP_TOTP_ISSUER = env.str("OTP_TOTP_ISSUER", default="Dynamo Social")  # the name authenticator apps show
# Wrong codes count in the log-in limits (DynamoDB, every process); django-otp's own per-device
# delays would let anyone holding the password keep the owner waiting.
OTP_TOTP_THROTTLE_FACTOR = 0
OTP_STATIC_THROTTLE_FACTOR = 0
# Write limits (project/limits/store.py, docs/reference/settings.md "Limits"): per account, counted in DynamoDB so
# every process on every machine shares them. Each is "N/period,..." (sec, min, hour, day;
# at most 3 rules); the _NEW variant is the allowance of the lowest trust level (social/spam/levels.py).
# RATE_LIMITS_ENABLED=False lifts them all and the API throttles (tests, benchmarks).
RATE_LIMITS_ENABLED = env.bool("RATE_LIMITS_ENABLED", default=True)
RATE_LIMITS = {
    name: (env.str(f"LIMIT_{name.upper()}", default=rules), env.str(f"LIMIT_{name.upper()}_NEW", default=new_rules))
    for name, rules, new_rules in (
        ("comment", "5/min,60/hour,200/day", "2/min,10/hour,30/day"),
        ("reply", "10/min,120/hour,500/day", "3/min,20/hour,60/day"),
        ("like", "60/min,600/hour,3000/day", "20/min,200/hour,600/day"),
        ("mark_read", "120/min,2000/hour", "120/min,2000/hour"),
        ("signup", "5/hour,20/day", ""),  # per address, not per account
        ("edit", "10/min,120/hour,500/day", "3/min,30/hour,100/day"),  # edits and deletes of one's comments
        # Reset mails asked for per client address (IPv6: its /64), answered 429 past it...
        ("password_reset", "5/hour,20/day", ""),
        # ...and reset mails sent for one account (the accounts an address verified, together),
        # asked from networks and browsers that never logged in to it: past it requests are
        # answered as ever and mail nothing (nobody mail-bombs an inbox)...
        ("password_reset_mail", "3/hour,10/day", ""),
        # ...and the owner's own budget: asked from a network that logged in to the account in
        # the last 90 days or a browser holding its device cookie, which strangers cannot spend.
        ("password_reset_mail_owner", "3/hour,10/day", ""),
        # Verification links sent to one e-mail address (sign-up and the settings button), all
        # accounts together: sign-ups sharing a stranger's address cannot flood it.
        ("mail_verify_to", "3/hour,10/day", ""),
        ("delivery", "10/hour,50/day", "3/hour,10/day"),
        # Notification preferences saved, threads muted, unmuted, watched or unwatched.
        ("preferences", "60/min,600/hour,3000/day", "20/min,200/hour,600/day"),
        # Comments reported (social/moderation/): a person reports a few; a script must not flood the queue.
        ("report", "10/hour,30/day", "3/hour,10/day"),
        # Texts and likes kept through a log-in for people not logged in, per address: each
        # kept one is a database session row, which strangers must not be able to pile up.
        ("anonymous_keep", "20/hour,100/day", ""),
        # Exports of one's own data (GET /api/me/export/): each reads everything the person has.
        ("export", "3/day", ""),
    )
}
# Account deletion (social/account/): the eraser starts a request this many seconds after it
# was made (past any request of the account still in flight, and past the likes index's lag),
# and holds a request it works on for a lease of this many seconds (renewed as it goes).
ACCOUNT_DELETION_DELAY_SECONDS = env.float("ACCOUNT_DELETION_DELAY_SECONDS", default=60.0)
ACCOUNT_DELETION_LEASE_SECONDS = env.float("ACCOUNT_DELETION_LEASE_SECONDS", default=120.0)
# Reports (social/moderation/standing.py): a comment reported by this many distinct people with
# standing (a verified address, an account REPORT_STANDING_DAYS old, REPORT_STANDING_COMMENTS
# visible comments) is hidden until staff decide; others' reports count nothing toward it. The
# threshold grows by one person per REPORT_THRESHOLD_STEP_DAYS of the author's account age (0: never),
# and staff and authors of REPORT_PROTECTED_AUTHOR_DAYS are never hidden by reports, only queued.
REPORT_HIDE_THRESHOLD = env.int("REPORT_HIDE_THRESHOLD", default=5)
REPORT_STANDING_DAYS = env.float("REPORT_STANDING_DAYS", default=14.0)
REPORT_STANDING_COMMENTS = env.int("REPORT_STANDING_COMMENTS", default=3)
REPORT_THRESHOLD_STEP_DAYS = env.float("REPORT_THRESHOLD_STEP_DAYS", default=30.0)
REPORT_PROTECTED_AUTHOR_DAYS = env.float("REPORT_PROTECTED_AUTHOR_DAYS", default=365.0)
# Spam defence (social/spam/, docs/how-to/moderate.md "Spam"): a comment the screen holds is stored
# but seen by nobody but its author and staff until staff approve it. Not a rate limit:
# RATE_LIMITS_ENABLED=False leaves it on; HOLD_FOR_REVIEW_ENABLED=False publishes what it would hold.
HOLD_FOR_REVIEW_ENABLED = env.bool("HOLD_FOR_REVIEW_ENABLED", default=True)
# The spam check run before a comment is published: a dotted path to a callable given the comment
# and its author's record, answering publish, hold or block (social.spam.checks.SpamVerdict).
SPAM_CHECK = env.str("SPAM_CHECK", default="social.spam.checks.local_check")
# The default check's budgets: the same text this often (anyone), a lowest-level account's comments.
SPAM_DUPLICATE_LIMIT = env.str("SPAM_DUPLICATE_LIMIT", default="2/hour")
SPAM_BURST_LIMIT = env.str("SPAM_BURST_LIMIT", default="3/10min")
# Trust levels (social/spam/levels.py): 0 new (every account, whatever its age, until its conduct
# earns more), 1 member, 2 regular, earned by visible comments, likes received on them from
# established accounts (level 1 or above, or staff) and days visited (days seen logged in);
# TRUST_DEMOTE_REPORTS upheld reports bring an account to 0.
TRUST_MEMBER_COMMENTS = env.int("TRUST_MEMBER_COMMENTS", default=3)
TRUST_MEMBER_LIKES = env.int("TRUST_MEMBER_LIKES", default=1)
TRUST_MEMBER_DAYS = env.int("TRUST_MEMBER_DAYS", default=2)
TRUST_REGULAR_COMMENTS = env.int("TRUST_REGULAR_COMMENTS", default=20)
TRUST_REGULAR_LIKES = env.int("TRUST_REGULAR_LIKES", default=20)
TRUST_REGULAR_DAYS = env.int("TRUST_REGULAR_DAYS", default=15)
TRUST_DEMOTE_REPORTS = env.int("TRUST_DEMOTE_REPORTS", default=2)
TRUST_REFRESH_SECONDS = env.float("TRUST_REFRESH_SECONDS", default=3600.0)
# Each level's allowances, one value per level (0,1,2): links a comment may carry before it is
# held, people its @mentions notify; the levels all of whose comments are held (empty: none).
TRUST_LINKS = env.str("TRUST_LINKS", default="0,5,20")
TRUST_MENTIONS = env.str("TRUST_MENTIONS", default="3,10,10")
TRUST_HOLD_LEVELS = env.str("TRUST_HOLD_LEVELS", default="")
# A report's weight from a reporter with standing at level 2 (hundredths of a person; level 1: 100),
# and the extra reporters it takes to hide a level-2 author's comment.
TRUST_REGULAR_REPORT_WEIGHT = env.int("TRUST_REGULAR_REPORT_WEIGHT", default=150)
TRUST_REGULAR_PROTECTION = env.int("TRUST_REGULAR_PROTECTION", default=2)
# The live poll (/api/live/, every 2 s per open page) leases this many units of its
# throttle per DynamoDB write: one write per LIMIT_LIVE_BLOCK polls.
LIMIT_LIVE_BLOCK = env.int("LIMIT_LIVE_BLOCK", default=10)
# Live updates (social/live.py, docs/explanation/live-updates.md "Live updates"): how often pages poll
# (X-Poll-Interval, seconds), the change log's parts (each takes 1,000 signal puts a second),
# how often a web process reads it back, how late a signal may show in it, and how often a
# page gets a full answer whatever the log says.
LIVE_POLL_INTERVAL = env.float("LIVE_POLL_INTERVAL", default=2.0)
LIVE_CHANGE_PARTS = env.int("LIVE_CHANGE_PARTS", default=1)
LIVE_LOG_REFRESH = env.float("LIVE_LOG_REFRESH", default=0.5)
LIVE_SIGNAL_LAG = env.float("LIVE_SIGNAL_LAG", default=3.0)
LIVE_FULL_EVERY = env.float("LIVE_FULL_EVERY", default=120.0)
# Request limits the guard (project.http.guard) answers as JSON under /api/.
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=2_621_440)
DATA_UPLOAD_MAX_NUMBER_FIELDS = env.int("DATA_UPLOAD_MAX_NUMBER_FIELDS", default=1000)
JSON_MAX_DEPTH = env.int("JSON_MAX_DEPTH", default=32)
# Signed page cursors (project.dynamo.cursors) older than this are refused.
CURSOR_MAX_AGE = env.int("CURSOR_MAX_AGE", default=7 * 24 * 3600)

# --- DynamoDB -------------------------------------------------------------
# DYNAMODB_HOST points at DynamoDB Local (the default when it is not set) or any endpoint;
# set it empty (DYNAMODB_HOST=) to talk to AWS DynamoDB in DYNAMODB_REGION with the usual
# AWS credentials from the environment.
DYNAMODB_PORT = env.int("DYNAMODB_PORT", default=8765)  # DynamoDB Local's, when DYNAMODB_HOST is not set
DYNAMODB_HOST = env.str("DYNAMODB_HOST", default=f"http://127.0.0.1:{DYNAMODB_PORT}") or None
# A dead endpoint fails fast: connect timeout, read timeout (seconds) and the SDK's retries
# (throttling and connection errors; botocore's legacy mode waits 50, 100, 200 ms... between
# attempts, DynamoDB's own schedule) per call.
DYNAMODB_CONNECT_TIMEOUT = env.float("DYNAMODB_CONNECT_TIMEOUT", default=1.0)
DYNAMODB_READ_TIMEOUT = env.float("DYNAMODB_READ_TIMEOUT", default=5.0)
DYNAMODB_MAX_RETRY_ATTEMPTS = env.int("DYNAMODB_MAX_RETRY_ATTEMPTS", default=3)
# Usual calls skip botocore's per-call machinery (project/dynamo/wire.py); false: all through botocore.
DYNAMODB_FAST_CALLS = env.bool("DYNAMODB_FAST_CALLS", default=True)
DYNAMODB_REGION = env.str("DYNAMODB_REGION", default="us-east-1")
DYNAMODB_TABLE_PREFIX = env.str("DYNAMODB_TABLE_PREFIX", default="dev_")
# DynamoDB Local accepts any credentials; AWS uses the standard credential chain.
DYNAMODB_LOCAL_CREDENTIALS = DYNAMODB_HOST is not None and env.bool("DYNAMODB_LOCAL_CREDENTIALS", default=True)
# How long a web process keeps a read many viewers share (the timeline's newest comments,
# like counts on list pages), in seconds; 0 turns it off (project/dynamo/shared_reads.py).
SHARED_READ_SECONDS = env.float("SHARED_READ_SECONDS", default=1.0)

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
# Like events (the likes' outbox): whether the liking process folds the like's events once
# its answer is sent (outside a request: right away; else only fold_like_events does), and
# how long the same person liking the same comment again notifies nobody.
LIKE_FOLD_AFTER_RESPONSE = env.bool("LIKE_FOLD_AFTER_RESPONSE", default=True)
LIKE_RENOTIFY_WINDOW_HOURS = env.float("LIKE_RENOTIFY_WINDOW_HOURS", default=24.0)
FEED_MAX_ENTRIES = env.int("FEED_MAX_ENTRIES", default=100)
# Idempotency-Key (project/http/idempotency.py): how long an answer is kept for its key, how long a
# retry waits for the first request still running, and when a claim left by a dead request is taken over.
IDEMPOTENCY_TTL_SECONDS = env.int("IDEMPOTENCY_TTL_SECONDS", default=24 * 3600)
IDEMPOTENCY_WAIT_SECONDS = env.float("IDEMPOTENCY_WAIT_SECONDS", default=5.0)
IDEMPOTENCY_LEASE_SECONDS = env.float("IDEMPOTENCY_LEASE_SECONDS", default=60.0)
# Unread reply entries one person may hold in someone's feed; their further replies to other
# comments roll up into one "replied N more times" entry, so they cannot push the rest out.
FEED_REPLIES_PER_PERSON = env.int("FEED_REPLIES_PER_PERSON", default=5)
DELIVERY_CHUNK_SIZE = env.int("DELIVERY_CHUNK_SIZE", default=1000)  # user ids per delivery chunk, at most 1,000
# How long a dispatcher holds a chunk without renewing it: a dead dispatcher's chunk waits this long.
DELIVERY_LEASE_SECONDS = env.float("DELIVERY_LEASE_SECONDS", default=60.0)
# Activity log (docs/explanation/activity-log.md "Activity log"): by_day write shards, months kept before export+drop,
# where exports go, and the rollup's grace for late writes / how often it re-rolls today.
ACTIVITY_DAY_SHARDS = env.int("ACTIVITY_DAY_SHARDS", default=10)
ACTIVITY_RETENTION_MONTHS = env.int("ACTIVITY_RETENTION_MONTHS", default=13)
ACTIVITY_EXPORT_DIR = env.str("ACTIVITY_EXPORT_DIR", default=str(BASE_DIR / "var" / "activity_exports"))
ACTIVITY_EXPORT_S3_BUCKET = env.str("ACTIVITY_EXPORT_S3_BUCKET", default="")  # AWS: DynamoDB export to S3
ACTIVITY_EXPORT_S3_PREFIX = env.str("ACTIVITY_EXPORT_S3_PREFIX", default="activity/")
ACTIVITY_ROLLUP_GRACE_SECONDS = env.float("ACTIVITY_ROLLUP_GRACE_SECONDS", default=900.0)
ACTIVITY_ROLLUP_TODAY_SECONDS = env.float("ACTIVITY_ROLLUP_TODAY_SECONDS", default=300.0)

# --- Operations (docs/how-to/operate.md) ----------------
# A polling worker writes its heartbeat at most this often; `manage.py health`, the admin
# System page and /metrics call a worker stale when its last heartbeat is older than that.
WORKER_HEARTBEAT_SECONDS = env.float("WORKER_HEARTBEAT_SECONDS", default=5.0)
WORKER_STALE_SECONDS = env.float("WORKER_STALE_SECONDS", default=60.0)
# /metrics (Prometheus) is off (404) unless one of these is set: a bearer token, and/or the
# addresses or networks (10.0.0.0/8) allowed without one (the client address: NUM_PROXIES).
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")
METRICS_ALLOWED_IPS = env.list("METRICS_ALLOWED_IPS", default=[])
# Where each process of the machine keeps its counts (prometheus-client's multiprocess mode).
PROMETHEUS_MULTIPROC_DIR = env.str("PROMETHEUS_MULTIPROC_DIR", default=str(BASE_DIR / "var" / "prometheus"))
if METRICS_TOKEN or METRICS_ALLOWED_IPS:
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = PROMETHEUS_MULTIPROC_DIR  # read when prometheus_client loads
    Path(PROMETHEUS_MULTIPROC_DIR).mkdir(parents=True, exist_ok=True)
# LOG_FORMAT=json: one JSON object per line (time, level, logger, message, request_id, exception).
LOG_FORMAT = env.str("LOG_FORMAT", default="text")
# What each route costs (project/operations/usage.py, the admin System page): recorded whether or not
# /metrics is on; each process writes its tallies to the `usage` table at most every
# USAGE_FLUSH_SECONDS (0: never by itself, only when `usage_flush` is called).
USAGE_ENABLED = env.bool("USAGE_ENABLED", default=True)
USAGE_FLUSH_SECONDS = env.float("USAGE_FLUSH_SECONDS", default=60.0)
# On-demand prices the System page turns units into dollars with (USD per million request
# units; us-east-1's today): set your region's.
DYNAMODB_PRICE_PER_MILLION_READS = env.float("DYNAMODB_PRICE_PER_MILLION_READS", default=0.125)
DYNAMODB_PRICE_PER_MILLION_WRITES = env.float("DYNAMODB_PRICE_PER_MILLION_WRITES", default=0.625)

# --- API ------------------------------------------------------------------
# Days an API token works after its log-in (then 401 token_expired; the next log-in issues
# a new one); 0: tokens never expire. A new password revokes them at once in any case.
API_TOKEN_MAX_AGE_DAYS = env.int("API_TOKEN_MAX_AGE_DAYS", default=30)
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first: an anonymous API call then gets 401 with WWW-Authenticate.
        "project.identity.api_tokens.ExpiringTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_SCHEMA_CLASS": "project.http.schema.AutoSchema",
    "DEFAULT_PARSER_CLASSES": [
        "project.http.parsers.SafeJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "NUM_PROXIES": NUM_PROXIES,
    "EXCEPTION_HANDLER": "project.errors.api_exception_handler",
    # Counted in DynamoDB (project/limits/throttles.py), so N processes on M machines share one budget.
    "DEFAULT_THROTTLE_CLASSES": ["project.limits.throttles.AnonThrottle", "project.limits.throttles.UserThrottle"],
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

# Nothing shared lives in the cache (limits, throttles and view marks are in DynamoDB).
CACHES = {"default": env.cache("CACHE_URL", default="locmemcache://")}

LOG_LEVEL = env.str("LOG_LEVEL", default="INFO")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "project.operations.logs.RequestIdFilter"}},
    "formatters": {
        "text": {"format": process_prefix() + "%(asctime)s %(levelname)s %(name)s [%(request_id)s]: %(message)s"},
        "json": {"()": "project.operations.logs.JsonFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "json" if LOG_FORMAT == "json" else "text",
            "filters": ["request_id"],
        }
    },
    # Every logger writes through the root's one handler, in one format.
    "root": {"handlers": ["console"], "level": "WARNING"},
    "loggers": {
        **{app: {"level": LOG_LEVEL} for app in ("project", "social", "notifications", "delivery", "actions")},
        "django": {"level": "WARNING"},
        "django.request": {"level": "ERROR"},  # 5xx with their traceback; 4xx are the access log's
    },
}
