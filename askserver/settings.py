"""Settings for askserver, the embedded default: SQLite and the in-memory channel layer.

Every value a deployment changes comes from an `ASKSERVER_` environment variable, read and typed
by :mod:`askserver.environment` (the docs' settings table lists them); a value that cannot be
read keeps its default here and fails the system checks, which name the variable. Nothing here
holds logic, and nothing here writes: the entry points prepare the data folder first
(:func:`askserver.var.prepare_var_dir`: the folder owner-only, the secret key generated once),
and these settings only compute its paths and read the key kept there.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from django.utils.csp import CSP

from askserver import environment, var

BASE_DIR = var.BASE_DIR
PACKAGE_DIR = Path(__file__).resolve().parent
TEMPLATES_DIR = PACKAGE_DIR / "templates"
"""The project's templates: in a checkout the top-level templates/ folder, beside askserver/ and
ask_mcp/; the wheel maps that folder into the package (pyproject.toml's package-dir)."""
if not TEMPLATES_DIR.is_dir():
    TEMPLATES_DIR = PACKAGE_DIR.parent / "templates"


def _env(name: str) -> Any:
    return environment.get(name, os.environ)


VAR_DIR = var.var_dir()


SQLITE_DB = VAR_DIR / var.SQLITE_FILE


def _database(url: str | None) -> dict[str, object]:
    if not url:
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": SQLITE_DB,
            "OPTIONS": {
                "timeout": 20,
                "transaction_mode": "IMMEDIATE",
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    parts = urlsplit(url)
    if parts.scheme not in environment.DATABASE_SCHEMES:
        return _database(None)  # the system check ask_mcp.E054 names the variable and the fix
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(parts.path.lstrip("/")),
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": parts.hostname or "",
        "PORT": str(parts.port or ""),
        "CONN_MAX_AGE": 0,
    }


EMAIL_SCHEMES = {
    "smtp": (25, False, False),
    "smtp+tls": (587, True, False),
    "smtps": (465, False, True),
}
"""ASKSERVER_EMAIL_URL scheme -> (default port, STARTTLS, implicit TLS)."""


def _mailers(url: str) -> dict[str, dict[str, object]]:
    """Django's MAILERS from `smtp://host:port`, `smtp+tls://user:pass@host:port` or `smtps://…`."""
    parts = urlsplit(url)
    if parts.scheme not in EMAIL_SCHEMES or not parts.hostname:
        raise ValueError(
            f"ASKSERVER_EMAIL_URL must be smtp://host:port, smtp+tls://user:pass@host:port or "
            f"smtps://user:pass@host:port, got {url!r}"
        )
    port, starttls, implicit = EMAIL_SCHEMES[parts.scheme]
    options = {
        "host": parts.hostname,
        "port": parts.port or port,
        "username": unquote(parts.username or ""),
        "password": unquote(parts.password or ""),
        "use_tls": starttls,
        "use_ssl": implicit,
        "timeout": 10,
    }
    return {
        "default": {"BACKEND": "django.core.mail.backends.smtp.EmailBackend", "OPTIONS": options}
    }


# ASKSERVER_SECRET_KEY, or the key prepare_var_dir() generated once into VAR_DIR/secret_key.
SECRET_KEY: str = _env("SECRET_KEY") or var.secret_key(VAR_DIR)
SECRET_KEY_FALLBACKS: list[str] = _env("SECRET_KEY_FALLBACKS")
DEBUG: bool = _env("DEBUG")
ALLOWED_HOSTS: list[str] = _env("ALLOWED_HOSTS")
CSRF_TRUSTED_ORIGINS: list[str] = _env("CSRF_TRUSTED_ORIGINS")

# Behind a TLS proxy (docs/deploy/workers.md) the workers see plain http: without the
# proxy's word for the scheme, Django compared an https Origin with http://host and refused every
# inbox and admin POST (403), and the inbox socket refused its https page.
if _env("TRUST_FORWARDED_PROTO"):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_SECURE: bool = _env("SECURE_COOKIES")
CSRF_COOKIE_SECURE: bool = _env("SECURE_COOKIES")

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "axes",
    "ask_mcp",
    "askserver",  # the project's own checks and commands (askserver.apps)
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "ask_mcp.web.middleware.DatabaseUnavailableMiddleware",
    "askserver.signin.device_cookie",  # sets the device cookie on a successful sign-in
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks: it answers a locked-out sign-in
]

# Sign-in attempts (inbox and admin) are counted by django-axes: after
# ASKSERVER_LOGIN_FAILURE_LIMIT wrong passwords (10) for one username from one address, that
# pair is locked out for ASKSERVER_LOGIN_COOLOFF_MINUTES (15) and gets 429. The pair, not the
# address alone: behind a proxy every person shares the proxy's address.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = int(_env("LOGIN_FAILURE_LIMIT"))
AXES_COOLOFF_TIME = timedelta(minutes=float(_env("LOGIN_COOLOFF_MINUTES")))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
# Ten wrong passwords for `admin` from anywhere locked the real admin out: every local client and
# every client behind a proxy is one address. The address is the client's as ASKSERVER_TRUSTED_PROXIES
# forward it, and a browser that signed in as a username before (its signed device cookie) is
# a pair of its own, locked by its own wrong passwords only (askserver/signin.py).
TRUSTED_PROXIES: list[str] = _env("TRUSTED_PROXIES")
AXES_CLIENT_IP_CALLABLE = "askserver.signin.client_address"
AXES_USERNAME_CALLABLE = "askserver.signin.lockout_username"

# Sessions keep whom they sign in, so /settings/ lists a person's browsers and ends them.
SESSION_ENGINE = "ask_mcp.web.browsers"

ROOT_URLCONF = "askserver.urls"
ASGI_APPLICATION = "askserver.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [TEMPLATES_DIR],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {"default": _database(_env("DATABASE_URL"))}

if redis_url := _env("REDIS_URL"):
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                "hosts": [redis_url],
                "prefix": _env("REDIS_PREFIX"),
                "expiry": 60,
                "capacity": 1000,
            },
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"()": "ask_mcp.ops.logs.PlainFormatter"},
        "json": {"()": "ask_mcp.ops.logs.JsonFormatter"},
    },
    "filters": {"secrets": {"()": "ask_mcp.ops.logs.SecretsFilter"}},
    "handlers": {
        # Filtered, formatted and written on a thread of its own, off the event loop.
        "console": {
            "class": "ask_mcp.ops.logs.BackgroundStreamHandler",
            "formatter": _env("LOG_FORMAT"),
            "filters": ["secrets"],
        }
    },
    "root": {"handlers": ["console"], "level": "WARNING"},
    "loggers": {
        "ask_mcp": {"level": _env("LOG_LEVEL")},
        # daphne's access lines (the inbox's pages and sockets; /mcp has askserver's own line).
        "daphne.access": {"level": _env("LOG_LEVEL")},
    },
}

# Django's own CSP: scripts, styles and connections from this site only, no inline script or
# style anywhere (the inbox's JavaScript is static/ask_mcp/inbox.js, htmx's indicator styles are
# off, and the admin has none), nothing may frame the pages, and forms post here only.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "ask_mcp:inbox"
LOGOUT_REDIRECT_URL = "login"

# Mail through Django's SMTP backend when ASKSERVER_EMAIL_URL is set (docs/answering/reach.md).
EMAIL_URL = _env("EMAIL_URL")
if EMAIL_URL:
    MAILERS = _mailers(EMAIL_URL)
if email_from := _env("EMAIL_FROM"):
    DEFAULT_FROM_EMAIL = email_from

# Questions for clients that cannot show forms go to the browser inbox; every ask is recorded;
# mail is on with ASKSERVER_EMAIL_URL. Any ASK_MCP key can be set from its ASKSERVER_ variable
# (ASKSERVER_ELICITATION_CAPACITY=128).
ASK_MCP: dict[str, object] = environment.ask_mcp(os.environ)
# Web Push signs with ASKSERVER_VAPID_PRIVATE_KEY, or the key prepare_var_dir() generated once
# into VAR_DIR/vapid_private_key; it is on once ASKSERVER_VAPID_SUBJECT names a contact.
ASK_MCP.setdefault("VAPID_PRIVATE_KEY", var.vapid_private_key(VAR_DIR) or None)
