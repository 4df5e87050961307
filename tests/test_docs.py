"""The docs site: docs/ builds strictly, every page is in the nav, and the site loads nothing from outside.

The site is built here as `make docs` builds it, `mkdocs build --strict`, into a temporary folder:
mkdocs.yml's `validation` makes a broken link or anchor, an absolute link and a page left out of
the nav warnings, which strict turns into a failure. The built HTML and CSS are then read for
anything a browser would fetch from another host on its own: a script, a stylesheet, an image, a
font, an `@import`. Links in a page's text to other sites (`<a href>`) are fine: a reader may
follow them; the page does not load them. MkDocs Material's script can fetch from outside only
for features this site does not use (a repository widget, diagrams), which the last tests hold.
The README's own links, which GitHub and the package page show, must reach files that exist.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
CONFIG = ROOT / "mkdocs.yml"
README = ROOT / "README.md"

ELSEWHERE = r"""["']?\s*(?:https?:)?//"""
"""The start of an address on another host: `http://`, `https://` or protocol-relative `//`."""
FETCHED_BY_A_TAG = re.compile(
    r"<(?:script|link|img|iframe|source|video|audio|embed|object)\b[^>]*?"
    rf"\b(?:src|href|srcset|data)\s*=\s*{ELSEWHERE}[^>]*>",
    re.IGNORECASE,
)
"""A tag whose address the browser loads with the page (never `<a>`, which a reader follows)."""
FETCHED_BY_CSS = re.compile(rf"(?:@import\s+(?:url\(\s*)?|url\(\s*){ELSEWHERE}[^)'\";]*", re.I)
"""`@import` or `url(...)` naming another host, in a stylesheet or a page's own styles."""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(CONFIG), "-d", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=120,
        check=False,
    )
    assert built.returncode == 0, f"mkdocs build --strict failed:\n{built.stderr}"
    return out


def nav_pages(entries: Any) -> list[str]:
    """Every page the nav names, at any depth."""
    if isinstance(entries, str):
        return [entries]
    if isinstance(entries, list):
        return [page for entry in entries for page in nav_pages(entry)]
    if isinstance(entries, dict):
        return [page for value in entries.values() for page in nav_pages(value)]
    return []


def config() -> dict[str, Any]:
    loaded = yaml.safe_load(CONFIG.read_text())
    assert isinstance(loaded, dict)
    return loaded


def slug(heading: str) -> str:
    """A heading's anchor as GitHub and MkDocs both make it."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    without_code = re.sub(r"^```.*?^```", "", markdown, flags=re.MULTILINE | re.DOTALL)
    return {slug(m) for m in re.findall(r"^#+ (.+)$", without_code, re.MULTILINE)}


def test_the_site_builds_strictly_with_every_page(site: Path) -> None:
    pages = sorted(str(path.relative_to(DOCS)) for path in DOCS.rglob("*.md"))
    assert (site / "index.html").is_file()
    for page in pages:
        assert (site / page.removesuffix(".md")).with_suffix(".html").is_file(), page


def test_every_page_in_docs_is_in_the_nav_once() -> None:
    named = nav_pages(config()["nav"])
    pages = sorted(str(path.relative_to(DOCS)) for path in DOCS.rglob("*.md"))
    assert sorted(named) == pages
    assert len(named) == len(set(named))


def test_the_build_is_strict_about_links_anchors_and_pages_outside_the_nav() -> None:
    settings = config()
    assert settings["strict"] is True
    validation = settings["validation"]
    assert validation["nav"] == {
        "omitted_files": "warn",
        "not_found": "warn",
        "absolute_links": "warn",
    }
    assert validation["links"] == {
        "not_found": "warn",
        "absolute_links": "warn",
        "unrecognized_links": "warn",
        "anchors": "warn",
    }


def test_no_page_or_stylesheet_loads_anything_from_another_host(site: Path) -> None:
    found = []
    for path in sorted(site.rglob("*")):
        if path.suffix not in (".html", ".css"):
            continue
        text = path.read_text(errors="replace")
        hits = FETCHED_BY_CSS.findall(text)
        if path.suffix == ".html":
            hits += FETCHED_BY_A_TAG.findall(text)
        found += [f"{path.relative_to(site)}: {hit[:160]}" for hit in hits]
    assert found == []


def test_the_text_may_still_link_to_other_sites(site: Path) -> None:
    # The check above reads tags, not words: a page's own link out is left alone, and found.
    security = (site / "deploy" / "security.html").read_text()
    assert re.search(r'<a href="https://[^"]+"', security)
    assert not FETCHED_BY_A_TAG.search('<a href="https://example.com/">a link</a>')
    assert FETCHED_BY_A_TAG.search('<script src="//cdn.example.com/x.js"></script>')
    assert FETCHED_BY_A_TAG.search('<link rel="stylesheet" href="https://example.com/a.css">')
    assert FETCHED_BY_CSS.search("@import url('https://fonts.example.com/css');")
    assert not FETCHED_BY_CSS.search("""url("data:image/svg+xml,<svg xmlns='http://w'/>")""")


def test_the_theme_uses_no_web_font_and_no_feature_that_fetches_from_outside(site: Path) -> None:
    settings = config()
    assert settings["theme"]["font"] is False
    # Material's script asks a forge's API for a repository's stars when repo_url is set, and
    # loads a diagram library from a CDN when a page holds a diagram.
    assert "repo_url" not in settings
    assert [p for p in site.rglob("*.html") if 'class="mermaid"' in p.read_text()] == []
    plugins = [p if isinstance(p, str) else next(iter(p)) for p in settings.get("plugins", [])]
    assert "offline" not in plugins  # it adds a script from a CDN to every page


def test_the_readmes_links_reach_files_and_headings_that_exist() -> None:
    text = README.read_text()
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    assert links
    for link in links:
        if re.match(r"[a-z]+:", link):
            continue
        path, _, anchor = link.partition("#")
        target = ROOT / path if path else README
        assert target.is_file(), link
        if anchor:
            assert anchor in anchors(target.read_text()), link


def test_the_generated_tables_have_their_markers_once() -> None:
    # Another step fills these tables from the declarations; the markers say where.
    for page, name in (("reference/settings.md", "settings"), ("reference/checks.md", "checks")):
        text = (DOCS / page).read_text()
        lines = text.splitlines()
        assert lines.count(f"<!-- {name}-table:start -->") == 1, page
        assert lines.count(f"<!-- {name}-table:end -->") == 1, page
        assert lines.index(f"<!-- {name}-table:start -->") < lines.index(
            f"<!-- {name}-table:end -->"
        )


# ---------------------------------------------------------------- the architecture page

ARCHITECTURE = DOCS / "architecture.md"
NOT_PARTS = frozenset({"__init__", "conf", "py", "static", "templates"})
"""What sits in ask_mcp/ but is no layer: the package's own face, conf (beside the layers), and
the data folders the wheel carries."""


def table_rows(page: Path, marker: str) -> list[list[str]]:
    """The first cells of the table between `<!-- marker:start/end -->`, each a row's code names."""
    text = page.read_text()
    block = text.split(f"<!-- {marker}:start -->", 1)[1].split(f"<!-- {marker}:end -->", 1)[0]
    rows = [line for line in block.strip().splitlines()[2:] if line.startswith("|")]
    return [re.findall(r"`([\w.]+)`", row.split("|")[1]) for row in rows]


def import_layers(container: str | None) -> list[list[str]]:
    """The layers of the import-linter contract for `container` (None: the top-level one)."""
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    for contract in contracts["contracts"]:
        if contract["type"] == "layers" and contract.get("containers", [None]) == [container]:
            return [[name.strip() for name in layer.split(":")] for layer in contract["layers"]]
    raise AssertionError(f"no layers contract for {container}")


def children(package: Path) -> set[str]:
    """The modules and subpackages directly inside a package, by name."""
    return {
        path.stem
        for path in package.iterdir()
        if (path.suffix == ".py" or (path / "__init__.py").is_file()) and path.stem != "__init__"
    }


def test_the_architecture_pages_parts_are_the_import_contracts_layers_in_order() -> None:
    rows = table_rows(ARCHITECTURE, "parts")
    assert rows[0] == ["askserver"]  # the project, above every part of the app
    assert rows[1:] == import_layers(None)


def test_the_architecture_page_names_every_part_of_the_package_once() -> None:
    named = [
        name.removeprefix("ask_mcp.")
        for row in table_rows(ARCHITECTURE, "parts")[1:]
        for name in row
    ]
    assert len(named) == len(set(named))
    assert set(named) == children(ROOT / "ask_mcp") - NOT_PARTS
    assert "`ask_mcp.conf` sits beside the layers" in ARCHITECTURE.read_text()


def test_the_architecture_pages_engine_rooms_are_the_servers_contract_and_modules() -> None:
    rows = table_rows(ARCHITECTURE, "rooms")
    assert rows == import_layers("ask_mcp.server")
    assert {name for row in rows for name in row} == children(ROOT / "ask_mcp" / "server")


def test_the_glossary_names_each_word_of_the_project_with_code_that_exists() -> None:
    glossary = ARCHITECTURE.read_text().split("## Glossary", 1)[1]
    rows = [line.split("|")[1:-1] for line in glossary.splitlines() if line.startswith("| ")]
    rows = rows[2:]  # the header and its rule
    words = [word.strip() for word, _, _ in rows]
    assert words == [
        "park", "hold", "attach", "collect", "settle", "detached", "withdrawn",
        "route", "reach", "seen", "people-only",
    ]  # fmt: skip
    source = "\n".join(path.read_text() for path in (ROOT / "ask_mcp").rglob("*.py"))
    for word, _, code in rows:
        names = re.findall(r"`([\w.\"]+)`", code)
        assert names, word
        for name in names:
            last = name.strip('"').rsplit(".", 1)[-1]
            assert re.search(rf"\b{re.escape(last)}\b", source), (word, name)


# ---------------------------------------------------------------- the changelog

CHANGELOG = ROOT / "CHANGELOG.md"


def test_the_changelog_opens_each_release_with_what_operators_must_know() -> None:
    text = CHANGELOG.read_text()
    releases = re.split(r"^## ", text, flags=re.MULTILINE)[1:]
    assert releases and releases[0].startswith("Unreleased")
    for release in releases:
        headings = re.findall(r"^### (.+)$", release, re.MULTILINE)
        assert headings and headings[0] == "For operators", release.splitlines()[0]


def test_the_changelog_names_only_check_ids_and_settings_the_reference_knows() -> None:
    # An id or a variable named in the changelog is documented, or the line says it is gone.
    text = CHANGELOG.read_text()
    checks = (DOCS / "reference" / "checks.md").read_text()
    settings = (DOCS / "reference" / "settings.md").read_text()
    for line in text.splitlines():
        gone = re.search(r"\b(removed|no longer|gone|old name)\b", line, re.IGNORECASE)
        for check_id in re.findall(r"`((?:ask_mcp|askserver)\.[EW]\d{3})`", line):
            assert gone or f"`{check_id}`" in checks, check_id
        for name in re.findall(r"`(ASKSERVER_[A-Z0-9_]+)`", line):
            assert gone or name in settings, name


def test_the_readme_points_at_the_changelog() -> None:
    assert "(CHANGELOG.md)" in README.read_text()
