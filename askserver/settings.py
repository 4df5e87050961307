"""Settings for askserver, the embedded default: SQLite and the in-memory channel layer.

Every value a deployment changes comes from an `ASKSERVER_` environment variable, read and typed
by :mod:`ask_mcp.ops.environment` (the README's settings table lists them); a value that cannot
be read keeps its default here and fails the system checks, which name the variable. Nothing
here holds logic.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from ask_mcp.ops import environment

BASE_DIR = Path(__file__).resolve().parent.parent
PACKAGE_DIR = Path(__file__).resolve().parent


def _env(name: str) -> Any:
    return environment.get(name, os.environ)


def _var_dir() -> Path:
    """ASKSERVER_VAR_DIR; else var/ beside manage.py in a checkout, or the user's data folder."""
    if chosen := _env("VAR_DIR"):
        return Path(chosen).expanduser()
    if (BASE_DIR / "manage.py").exists():
        return BASE_DIR / "var"
    data_home = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return data_home / "askserver"


VAR_DIR = _var_dir()


def _secret_key() -> str:
    """ASKSERVER_SECRET_KEY, or a key generated once and kept in VAR_DIR/secret_key."""
    if key := _env("SECRET_KEY"):
        return str(key)
    path = VAR_DIR / "secret_key"
    if not path.exists():
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


def _database(url: str | None) -> dict[str, object]:
    if not url:
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": VAR_DIR / "db.sqlite3",
            "OPTIONS": {
                "timeout": 20,
                "transaction_mode": "IMMEDIATE",
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    parts = urlsplit(url)
    if parts.scheme not in environment.DATABASE_SCHEMES:
        return _database(None)  # the system check ask_mcp.E052 names the variable and the fix
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(parts.path.lstrip("/")),
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": parts.hostname or "",
        "PORT": str(parts.port or ""),
        "CONN_MAX_AGE": 0,
    }


SECRET_KEY = _secret_key()
SECRET_KEY_FALLBACKS: list[str] = _env("SECRET_KEY_FALLBACKS")
DEBUG: bool = _env("DEBUG")
ALLOWED_HOSTS: list[str] = _env("ALLOWED_HOSTS")

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
    "ask_mcp",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "ask_mcp.web.middleware.DatabaseUnavailableMiddleware",
]

ROOT_URLCONF = "askserver.urls"
ASGI_APPLICATION = "askserver.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [PACKAGE_DIR / "templates"],  # inside the package: the wheel carries them
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
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
        "json": {"()": "ask_mcp.ops.logs.JsonFormatter"},
    },
    "filters": {"secrets": {"()": "ask_mcp.ops.logs.SecretsFilter"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": _env("LOG_FORMAT"),
            "filters": ["secrets"],
        }
    },
    "root": {"handlers": ["console"], "level": "WARNING"},
    "loggers": {"ask_mcp": {"level": _env("LOG_LEVEL")}},
}

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "ask_mcp:inbox"
LOGOUT_REDIRECT_URL = "login"

# Questions for clients that cannot show forms go to the browser inbox; every ask is recorded.
# Any ASK_MCP key can be set from its ASKSERVER_ variable (ASKSERVER_ELICITATION_CAPACITY=128).
ASK_MCP: dict[str, object] = {
    "ON_ELICIT": "ask_mcp.web.elicit.on_elicit",
    "OBSERVER": "ask_mcp.records.recorder.recorder",
    **environment.ask_mcp_overrides(os.environ),
}
