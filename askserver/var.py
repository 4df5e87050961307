"""askserver's data folder (ASKSERVER_VAR_DIR): where it is, and preparing it, the one step that writes there before Django starts.

The settings only compute its path and read the secret key kept in it (:func:`secret_key`); they
write nothing. :func:`prepare_var_dir` creates the folder owner-only, the empty SQLite database
0600, and the secret key once, and tightens what an earlier release left looser. Every entry
point calls it before Django loads the settings:

- `askserver` (:mod:`askserver.__main__`) and `manage.py`, so every command (`migrate`,
  `quickstart`, `make run`'s first steps) finds the folder ready;
- :mod:`askserver.asgi`, which daphne and uvicorn import: a server started on its own (a
  deploy's workers, `make run`'s last step) prepares it too;
- ask_mcp's `ask-mcp` command when it runs askserver's settings (it names this function, as it
  names the settings, without importing askserver).

Preparing is idempotent and cheap, so each entry point calls it rather than trusting another
ran first. A process that imports the settings without an entry point (a test importing them,
the type checker) reads an empty SECRET_KEY while no key was generated yet, and Django refuses
to sign with it, naming the setting.
"""

from __future__ import annotations

import base64
import os
import secrets
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final

from cryptography.hazmat.primitives.asymmetric import ec

from askserver import environment

BASE_DIR: Final = Path(__file__).resolve().parent.parent
"""The checkout's root when askserver runs from one (manage.py sits there)."""
SECRET_KEY_FILE: Final = "secret_key"
"""The generated key's file in the data folder."""
SQLITE_FILE: Final = "db.sqlite3"
"""The SQLite database's file in the data folder."""
VAPID_KEY_FILE: Final = "vapid_private_key"
"""The generated VAPID key's file in the data folder: a P-256 private key, raw, base64url."""


def var_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """ASKSERVER_VAR_DIR; else var/ beside manage.py in a checkout, or the user's data folder."""
    if chosen := environment.get("VAR_DIR", environ):
        return Path(chosen).expanduser()
    if (BASE_DIR / "manage.py").exists():
        return BASE_DIR / "var"
    data_home = Path(environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return data_home / "askserver"


def secret_key(folder: Path) -> str:
    """The key generated into `folder` by :func:`prepare_var_dir`; empty until it ran once."""
    path = folder / SECRET_KEY_FILE
    return path.read_text().strip() if path.exists() else ""


def vapid_private_key(folder: Path) -> str:
    """The VAPID key generated into `folder` by :func:`prepare_var_dir`; empty until it ran once."""
    path = folder / VAPID_KEY_FILE
    return path.read_text().strip() if path.exists() else ""


def prepare_var_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """Make the data folder ready before Django starts, and return it.

    Creates it owner-only, the empty SQLite database (unless DATABASE_URL is set) and, unless
    ASKSERVER_SECRET_KEY is set, the secret key, once (0600); likewise the VAPID key that signs
    Web Push, unless ASKSERVER_VAPID_PRIVATE_KEY is set.
    """
    folder = var_dir(environ)
    _owner_only(folder, environ)
    if not environment.get("SECRET_KEY", environ):
        _write_once(folder / SECRET_KEY_FILE, lambda: secrets.token_urlsafe(50))
    if not environment.get("VAPID_PRIVATE_KEY", environ):
        _write_once(folder / VAPID_KEY_FILE, _new_vapid_key)
    return folder


def _write_once(path: Path, make: Callable[[], str]) -> None:
    """Write `make()` to `path` owner-only (0600), unless it exists; two processes racing write once."""
    if path.exists():
        return
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return  # another process made it between the check and the open
    with open(descriptor, "w") as file:
        file.write(make())


def _new_vapid_key() -> str:
    """A new P-256 private key, its 32 raw bytes in base64url (what VAPID_PRIVATE_KEY takes)."""
    number = ec.generate_private_key(ec.SECP256R1()).private_numbers().private_value
    return base64.urlsafe_b64encode(number.to_bytes(32, "big")).rstrip(b"=").decode()


def _owner_only(folder: Path, environ: Mapping[str, str]) -> None:
    """Make `folder` and everything in it readable by its owner only (0700 directories, 0600 files).

    The database holds session keys, tokens' digests and every answer; it was created 0644, so
    anyone on the machine could read it. SQLite gives its -wal and -shm files the database's
    own mode, so the empty database is created 0600 first (an empty file is a valid one). What
    an earlier release left looser is tightened too.
    """
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    database = folder / SQLITE_FILE
    if not database.exists() and not environ.get("DATABASE_URL"):
        os.close(os.open(database, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    for path in [folder, *folder.rglob("*")]:
        mode = path.lstat().st_mode
        if path.is_symlink() or mode & 0o077 == 0 or path.lstat().st_uid != os.getuid():
            continue
        path.chmod(0o700 if path.is_dir() else mode & 0o700 | 0o600)
