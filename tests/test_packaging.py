"""What the wheel is built from: every package on disk listed once, the top-level templates mapped in.

pyproject.toml lists the packages instead of finding them, because the project's templates live
at the top (templates/, as a Django project lays them out) and the wheel carries them as
`askserver.templates` through a package-dir mapping, which discovery cannot see. This keeps the
list equal to the packages on disk; tests/interaction/test_wheel.py builds the wheel and serves
the sign-in page, the 404 and the inbox from it.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def setuptools_table() -> dict[str, object]:
    table = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert isinstance(table, dict)
    return table


def test_the_wheel_lists_every_package_on_disk_once() -> None:
    on_disk = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for top in ("ask_mcp", "askserver")
        for init in (ROOT / top).rglob("__init__.py")
    }
    listed = setuptools_table()["packages"]
    assert isinstance(listed, list)
    assert len(listed) == len(set(listed))
    assert set(listed) == on_disk | {"askserver.templates"}


def test_the_projects_templates_live_at_the_top_and_the_wheel_maps_them_in() -> None:
    assert setuptools_table()["package-dir"] == {"askserver.templates": "templates"}
    assert not (ROOT / "askserver" / "templates").exists()
    for page in ("403.html", "404.html", "registration/login.html"):
        assert (ROOT / "templates" / page).is_file(), page


def test_the_settings_read_the_top_level_templates_in_a_checkout() -> None:
    from django.conf import settings

    assert [Path(d) for d in settings.TEMPLATES[0]["DIRS"]] == [ROOT / "templates"]
