"""Test settings: the project's settings with a fixed key; live servers read their config from the environment."""

from __future__ import annotations

import json
import os

from ask_mcp import conf
from askserver.settings import *  # noqa: F403

SECRET_KEY = "tests-only-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

if (db := os.environ.get("ASKSERVER_TEST_DB")) and not os.environ.get("DATABASE_URL"):
    DATABASES = {"default": {**DATABASES["default"], "NAME": db}}  # noqa: F405
    if timeout := os.environ.get("ASKSERVER_TEST_SQLITE_TIMEOUT"):  # the lock tests wait less
        DATABASES["default"]["OPTIONS"] = {
            **DATABASES["default"]["OPTIONS"],
            "timeout": float(timeout),
        }

# In-process tests act as loopback clients without tokens; the auth tests configure their own.
# The ASKSERVER_ variables still apply beneath it, as in askserver's own settings.
ASK_MCP = {
    # The VAPID key the var step generated (askserver's settings read it); push stays off
    # until a test's config names a VAPID_SUBJECT.
    "VAPID_PRIVATE_KEY": ASK_MCP["VAPID_PRIVATE_KEY"],  # noqa: F405
    **conf.from_environment(os.environ),
    **json.loads(os.environ.get("ASKSERVER_TEST_CONFIG", '{"ALLOW_ANONYMOUS_LOOPBACK": true}')),
}
