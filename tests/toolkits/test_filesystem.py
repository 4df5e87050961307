"""FileSystem through the server's dispatch: listing, reading, searching, every way out of the root refused, and its settings.

The exact answer to each bad path and each search limit, on a live server through the official
client, is in the bad-input catalogue (tests/interaction/test_bad_input.py); a directory swapped
for a link while reads run, and a file swapped for a FIFO, are in the fault tests.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from django.core.checks import run_checks
from django.test import override_settings

from ask_mcp import MCPServer
from ask_mcp.toolkits import ToolkitConfigError
from ask_mcp.toolkits.filesystem import FileSystem
from tests.support.filesystem import text
from tests.support.scripted import call_tool


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """root/ with notes, a subdirectory, a binary file, and links in and out; secret/ beside it."""
    root = tmp_path / "root"
    (root / "docs").mkdir(parents=True)
    (root / "notes.md").write_text("# Notes\nDeploy on Friday.\nfriday is fine\n")
    (root / "docs" / "guide.txt").write_text("step one\nstep two: deploy\n")
    (root / "image.bin").write_bytes(b"\x89PNG\x00\x01\x02")
    (root / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "key.txt").write_text("deploy key: hunter2\n")
    (tmp_path / "root-sibling").mkdir()
    (tmp_path / "root-sibling" / "x.txt").write_text("deploy sibling\n")
    os.symlink(secret / "key.txt", root / "leak.txt")
    os.symlink(secret, root / "leakdir")
    os.symlink(root / "docs", root / "docs-link")
    os.symlink("../root-sibling", root / "sibling")
    return root


async def call(root: Path, name: str, arguments: dict[str, Any], **settings: Any) -> dict[str, Any]:
    server = MCPServer("fs", tools={"FileSystem": {"root": str(root), **settings}})
    return (await call_tool(server, name, arguments))["result"]


async def test_list_shows_entries_with_types_sizes_and_links_it_never_follows(tree: Path) -> None:
    result = await call(tree, "fs_list", {})
    listing = json.loads(text(result))
    assert result["isError"] is False
    assert listing["path"] == "." and listing["total"] == 8
    by_name = {entry["name"]: entry for entry in listing["entries"]}
    assert by_name["docs"] == {"name": "docs", "type": "directory"}
    assert (
        by_name["notes.md"]["type"] == "file"
        and by_name["notes.md"]["size"] == (tree / "notes.md").stat().st_size
    )
    # A link is named as one, pointing in or out: nothing is read through it, not even its kind.
    assert by_name["leak.txt"] == {"name": "leak.txt", "type": "symlink"}
    assert by_name["docs-link"] == {"name": "docs-link", "type": "symlink"}
    assert "next_offset" not in listing


async def test_long_listings_come_in_pages(tmp_path: Path) -> None:
    for index in range(7):
        (tmp_path / f"f{index}.txt").write_text("x")
    seen: list[str] = []
    offset: int | None = 0
    pages = 0
    while offset is not None:
        page = json.loads(text(await call(tmp_path, "fs_list", {"offset": offset}, page_size=3)))
        seen += [entry["name"] for entry in page["entries"]]
        offset = page.get("next_offset")
        pages += 1
    assert pages == 3
    assert seen == [f"f{index}.txt" for index in range(7)]


async def test_read_returns_the_text_of_a_file(tree: Path) -> None:
    result = await call(tree, "fs_read", {"path": "docs/guide.txt"})
    assert result["isError"] is False
    assert text(result) == "step one\nstep two: deploy\n"
    assert text(await call(tree, "fs_read", {"path": "./docs//guide.txt"})) == (
        "step one\nstep two: deploy\n"
    )


async def test_a_long_file_is_read_in_pieces_without_splitting_characters(tmp_path: Path) -> None:
    content = "ab" + "é" * 20  # 2 ASCII bytes then 2-byte characters
    (tmp_path / "long.txt").write_text(content)
    pieces: list[str] = []
    offset = 0
    while True:
        result = await call(
            tmp_path, "fs_read", {"path": "long.txt", "offset": offset}, max_read_bytes=7
        )
        blocks = result["content"]
        pieces.append(blocks[0]["text"])
        if len(blocks) == 1:
            break
        note = blocks[1]["text"]
        assert note.startswith("[Truncated: bytes ")
        offset = int(note.split("offset=")[1].split(" ")[0])
    assert "".join(pieces) == content


@pytest.mark.parametrize(
    "path, words",
    [
        ("/etc/passwd", "is an absolute path"),
        ("../secret/key.txt", "contains '..'"),
        ("docs/../../secret/key.txt", "contains '..'"),
        ("docs/../notes.md", "contains '..'"),
        ("leak.txt", "is a symbolic link; links under the file root are never followed"),
        ("leakdir/key.txt", "goes through 'leakdir', a symbolic link"),
        ("sibling/x.txt", "goes through 'sibling', a symbolic link"),
        ("docs-link/guide.txt", "goes through 'docs-link', a symbolic link"),
        ("missing.txt", "does not exist under the file root"),
        ("image.bin", "is a binary file (7 bytes)"),
        ("latin1.txt", "is not UTF-8 text"),
        ("docs", "is a directory"),
    ],
)
async def test_reads_outside_the_root_or_of_non_text_are_refused_clearly(
    tree: Path, path: str, words: str
) -> None:
    result = await call(tree, "fs_read", {"path": path})
    assert result["isError"] is True
    assert words in text(result)
    assert "hunter2" not in text(result)
    assert str(tree.parent) not in text(result)  # the real location is never shown


async def test_listing_through_an_escaping_link_is_refused(tree: Path) -> None:
    for path in ("leakdir", "..", "/tmp"):
        result = await call(tree, "fs_list", {"path": path})
        assert result["isError"] is True, path


async def test_search_finds_lines_case_insensitively_and_never_leaves_the_root(tree: Path) -> None:
    found = json.loads(text(await call(tree, "fs_search", {"query": "DEPLOY"})))
    assert found["matches"] == [  # a directory's own files first, then its subdirectories
        {"path": "notes.md", "line": 2, "text": "Deploy on Friday."},
        {"path": "docs/guide.txt", "line": 2, "text": "step two: deploy"},
    ]
    assert found["truncated"] is False and "stopped" not in found
    # the four links are counted, never opened
    assert found["skipped"] == {"binary": 1, "too_large": 0, "not_regular": 4, "unreadable": 0}


async def test_search_filters_by_glob_and_stops_at_the_match_limit(tree: Path) -> None:
    only_md = json.loads(text(await call(tree, "fs_search", {"query": "friday", "glob": "*.md"})))
    assert [(m["path"], m["line"]) for m in only_md["matches"]] == [
        ("notes.md", 2),
        ("notes.md", 3),
    ]
    limited = json.loads(text(await call(tree, "fs_search", {"query": "friday"}, max_matches=1)))
    assert len(limited["matches"]) == 1 and limited["truncated"] is True
    assert limited["stopped"].startswith("Search stopped at the limit max_matches=1 after ")
    escaping = await call(tree, "fs_search", {"query": "deploy", "path": "leakdir"})
    assert escaping["isError"] is True


@pytest.mark.parametrize(
    "arguments, words",
    [
        ({"path": 3}, "`path` must be a string"),
        ({"path": "notes.md", "offset": -1}, "`offset` must be a non-negative integer"),
        ({}, "`path` is missing"),
    ],
)
async def test_bad_arguments_are_error_results(
    tree: Path, arguments: dict[str, Any], words: str
) -> None:
    result = await call(tree, "fs_read", arguments)
    assert result["isError"] is True and words in text(result)


def test_configuration_mistakes_name_the_toolkit_and_its_settings(tmp_path: Path) -> None:
    with pytest.raises(ToolkitConfigError) as missing:
        MCPServer("fs", tools={"FileSystem": {}})
    assert str(missing.value) == (
        "Toolkit 'FileSystem' needs the setting(s) 'root'; valid settings: prefix, root, "
        "max_read_bytes, page_size, max_matches, max_search_file_bytes, max_search_files, "
        "max_search_bytes, max_search_seconds"
    )
    with pytest.raises(ToolkitConfigError, match="is not a directory"):
        MCPServer("fs", tools={"FileSystem": {"root": str(tmp_path / "nope")}})
    with pytest.raises(ToolkitConfigError, match="page_size must be a positive integer"):
        MCPServer("fs", tools={"FileSystem": {"root": str(tmp_path), "page_size": 0}})


def test_the_tools_are_read_only_and_prefixed_fs_by_default(tmp_path: Path) -> None:
    server = MCPServer("fs", tools={"FileSystem": {"root": str(tmp_path)}})
    assert list(server.tools) == ["fs_list", "fs_read", "fs_search"]
    for tool in server.tools.values():
        assert tool.annotations == {"readOnlyHint": True, "openWorldHint": False}
    bare = MCPServer("fs", tools={"FileSystem": {"root": str(tmp_path), "prefix": ""}})
    assert list(bare.tools) == ["list", "read", "search"]


@pytest.mark.parametrize(
    "option, value, words",
    [
        ("max_search_files", 0, "max_search_files must be a positive integer, got 0"),
        ("max_search_bytes", "64M", "max_search_bytes must be a positive integer, got '64M'"),
        (
            "max_search_seconds",
            0,
            "max_search_seconds must be a positive number of seconds, got 0",
        ),
        (
            "max_search_seconds",
            float("inf"),
            "max_search_seconds must be a positive number of seconds, got inf",
        ),
        (
            "max_search_seconds",
            True,
            "max_search_seconds must be a positive number of seconds, got True",
        ),
    ],
)
def test_a_bad_search_limit_is_named_by_the_system_check(
    tmp_path: Path, option: str, value: object, words: str
) -> None:
    toolkits = {"FileSystem": {"root": str(tmp_path), option: value}}
    with override_settings(ASK_MCP={"TOOLKITS": toolkits}):
        (message,) = [m for m in run_checks(databases=[]) if m.id == "ask_mcp.E006"]
    assert message.msg == f"ASK_MCP['TOOLKITS']: Toolkit 'FileSystem': FileSystem: {words}"


def test_the_search_limits_have_their_documented_defaults(tmp_path: Path) -> None:
    kit = FileSystem(root=str(tmp_path))
    assert (kit.max_search_files, kit.max_search_bytes, kit.max_search_seconds) == (
        10_000,
        64 * 1024 * 1024,
        10.0,
    )
