"""The data folder: where it is, made owner-only with its empty database and its secret key, once."""

from __future__ import annotations

import stat
from pathlib import Path

from askserver.var import SECRET_KEY_FILE, SQLITE_FILE, prepare_var_dir, secret_key, var_dir


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_folder_is_the_variables_choice_else_var_beside_manage_py() -> None:
    assert var_dir({"ASKSERVER_VAR_DIR": "~/askdata"}) == Path("~/askdata").expanduser()
    assert var_dir({}).name == "var" and (var_dir({}).parent / "manage.py").exists()


def test_preparing_makes_an_owner_only_folder_an_empty_database_and_a_key_once(
    tmp_path: Path,
) -> None:
    environ = {"ASKSERVER_VAR_DIR": str(tmp_path / "var")}
    folder = prepare_var_dir(environ)
    assert folder == tmp_path / "var" and mode(folder) == 0o700
    database, key_file = folder / SQLITE_FILE, folder / SECRET_KEY_FILE
    assert database.stat().st_size == 0 and mode(database) == 0o600
    assert mode(key_file) == 0o600 and len(secret_key(folder)) >= 50
    key = secret_key(folder)
    prepare_var_dir(environ)
    assert secret_key(folder) == key  # made once, never replaced


def test_a_folder_an_earlier_release_left_readable_is_tightened(tmp_path: Path) -> None:
    folder = tmp_path / "var"
    (folder / "media").mkdir(parents=True)
    loose = folder / "media" / "old.log"
    loose.write_text("x")
    folder.chmod(0o755)
    loose.chmod(0o644)
    prepare_var_dir({"ASKSERVER_VAR_DIR": str(folder)})
    assert mode(folder) == 0o700 and mode(folder / "media") == 0o700 and mode(loose) == 0o600


def test_with_a_database_url_and_a_secret_key_set_neither_file_is_made(tmp_path: Path) -> None:
    environ = {
        "ASKSERVER_VAR_DIR": str(tmp_path),
        "DATABASE_URL": "postgres://127.0.0.1/ask",
        "ASKSERVER_SECRET_KEY": "set-by-the-operator",
    }
    prepare_var_dir(environ)
    assert not (tmp_path / SQLITE_FILE).exists() and secret_key(tmp_path) == ""
