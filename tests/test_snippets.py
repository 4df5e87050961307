"""Every code block in the README and the docs is checked against the code it shows, so none can rot.

A block is read by what it shows (:func:`kind_of`): a command line, a `user_ask` call and what
comes back, a client's or a server's configuration, a webhook's body and headers, a log line, a
Python example. Each kind has its check below, which runs the block the way a reader would
(the call against a live server with the official wire, the example through `exec`, the command's
own argument parser on its flags, the variable's own reader on its value). A block no rule
recognises fails the first test: a new block needs a check before it lands. Placeholders a reader
replaces (`/srv/notes`, `askmcp_…`) are swapped for real values where the check runs the block.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import dataclasses
import json
import logging
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from tests.support.wire import FORM_CAPS, assert_valid, post, request_body

ROOT = Path(__file__).resolve().parents[1]
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")))


@dataclasses.dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    text: str

    def __str__(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    def json(self) -> Any:
        return json.loads(self.text)


def blocks_of(page: Path) -> Iterator[Block]:
    lines = page.read_text().splitlines()
    start: int | None = None
    lang = ""
    for number, line in enumerate(lines, 1):
        if start is None and (opened := re.match(r"^```(\w*)\s*$", line)):
            start, lang = number, opened.group(1)
        elif start is not None and line.startswith("```"):
            yield Block(page, start, lang, "\n".join(lines[start : number - 1]))
            start = None


BLOCKS = [block for page in PAGES for block in blocks_of(page)]


def json_kind(data: dict[str, Any]) -> str | None:
    """What a JSON block shows, by its keys."""
    rules: list[tuple[str, bool]] = [
        ("user_ask call", data.get("name") == "user_ask" and "arguments" in data),
        ("input_required", data.get("resultType") == "input_required"),
        ("tool text", set(data) == {"component", "notes", "severity"}),
        ("client config", "mcpServers" in data or data.get("command") == "ask-mcp"),
        ("ask-mcp config", "tools" in data and "name" in data),
        ("url elicitation", data.get("method") == "elicitation/create"),
        ("webhook body", "blocks" in data and "ask" in data),
        ("readiness", data.get("status") == "unavailable"),
    ]
    return next((kind for kind, matches in rules if matches), None)


TEXT_KINDS: list[tuple[str, str]] = [
    ("webhook headers", r"Askserver-Signature: "),
    ("unauthorized", r"HTTP/1\.1 401 "),
    ("log line", r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} [A-Z]+ "),
    ("layout", r"askserver/ "),
]
"""What a block with no language shows, by how it starts."""
LANGUAGE_KINDS = {"sh": "commands", "python": "python", "nginx": "nginx", "yaml": "prometheus"}


def kind_of(block: Block) -> str | None:
    """What a block shows, by its language and its first words; None when no rule knows it."""
    if block.lang == "json":
        return json_kind(block.json())
    if block.lang:
        return LANGUAGE_KINDS.get(block.lang)
    text = block.text.lstrip()
    return next((kind for kind, start in TEXT_KINDS if re.match(start, text)), None)


def of_kind(kind: str) -> list[Any]:
    return [pytest.param(b, id=str(b)) for b in BLOCKS if kind_of(b) == kind]


def test_every_block_in_the_readme_and_the_docs_has_a_check() -> None:
    assert len(BLOCKS) > 25  # the reader found them (a broken fence would hide the rest)
    unchecked = [str(block) for block in BLOCKS if kind_of(block) is None]
    assert unchecked == [], "blocks no test reads; add a rule to kind_of and its check"


# ---------------------------------------------------------------- commands


def commands(block: Block) -> Iterator[list[str]]:
    """Each command of a shell block as argv: comments dropped, `&&` chains split."""
    for line in block.text.splitlines():
        words = shlex.split(line, comments=True)
        if words and words[-1] == "&":  # started in the background: the same command
            words.pop()
        while words:
            cut = words.index("&&") if "&&" in words else len(words)
            yield words[:cut]
            words = words[cut + 1 :]


def help_of(*argv: str) -> str:
    done = subprocess.run(
        [*argv, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, f"{' '.join(argv)} --help failed: {done.stderr[-600:]}"
    return done.stdout


def flags_of(argv: list[str]) -> list[str]:
    """The options a command line passes to its program (past `python -m module`)."""
    words = argv[3:] if argv[1:2] == ["-m"] else argv[1:]
    return [word.split("=", 1)[0] for word in words if word.startswith("-")]


def check_flags(command: list[str], argv: list[str], *help_argv: str) -> None:
    usage = help_of(*help_argv)
    for flag in flags_of(argv):
        assert re.search(rf"(?<![\w-]){re.escape(flag)}\b", usage), (command, flag)


def check_make(argv: list[str]) -> None:
    makefile = (ROOT / "Makefile").read_text()
    for word in argv[1:]:
        if "=" in word:
            name = word.split("=", 1)[0]
            assert re.search(rf"^{name} \?=", makefile, re.MULTILINE), f"make has no {name}"
        else:
            assert re.search(rf"^{word}:", makefile, re.MULTILINE), f"no make target {word}"


def check_export(word: str) -> None:
    from askserver import environment

    name, _, value = word.partition("=")
    outside = {  # not askserver's: the convention each follows reads them
        "DATABASE_URL": ROOT / "askserver" / "settings.py",
        "PROMETHEUS_MULTIPROC_DIR": ROOT / "ask_mcp" / "ops" / "metrics.py",
    }
    if name in outside:
        assert f'"{name}"' in outside[name].read_text(), name
        return
    variable = environment.variable(name)
    assert variable.name == name, f"{name} is an old name of {variable.name}"
    if value != "...":  # a value the reader fills in
        _, problems = environment.read({name: value})
        assert problems == {}, problems


def check_asgi_target(target: str) -> None:
    module, _, attribute = target.partition(":")
    path = ROOT / (module.replace(".", "/") + ".py")
    assert re.search(rf"^{attribute}\b.*=", path.read_text(), re.MULTILINE), target


def check_command(argv: list[str]) -> None:  # one branch per program shown
    python = sys.executable
    program = Path(argv[0]).name
    if program == "make":
        check_make(argv)
    elif program == "export":
        check_export(argv[1])
    elif program in ("python", "python3") and argv[1] == "manage.py":
        check_flags(argv, argv, python, "manage.py", argv[2])
    elif program in ("python", "python3") and argv[1] == "-m":
        assert (ROOT / (argv[2].replace(".", "/") + ".py")).is_file(), argv
        check_flags(argv, argv, python, "-m", argv[2])
        if argv[2] == "bench.run":
            assert argv[3] in help_of(python, "-m", "bench.run"), argv
    elif program in ("python", "python3"):
        assert (ROOT / argv[1]).is_file(), argv
        check_flags(argv, argv, python, argv[1])
    elif program == "askserver":
        check_flags(argv, argv, python, "-m", "askserver", argv[1])
    elif program == "ask-mcp":
        from ask_mcp.cli import parser
        from ask_mcp.cli.config import read_tool_flag

        options = parser().parse_args(argv[1:])
        for flag in options.tool or []:
            read_tool_flag(flag)
    elif program in ("daphne", "uvicorn"):
        check_flags(argv, argv, str(Path(python).parent / program))
        check_asgi_target(next(word for word in argv if word.endswith(":application")))
    elif program == "pip":
        assert argv[1] == "install" and argv[2] == "/path/to/askserver", argv
        assert 'name = "askserver"' in (ROOT / "pyproject.toml").read_text()
    else:
        pytest.fail(f"a command nobody checks: {argv}")


@pytest.mark.parametrize("block", of_kind("commands"))
def test_each_command_shown_runs_as_written(block: Block) -> None:
    shown = list(commands(block))
    assert shown, block
    for argv in shown:
        check_command(argv)


# ---------------------------------------------------------------- a call and its answer


def first(kind: str, page: Path) -> Block:
    return next(b for b in BLOCKS if b.page == page and kind_of(b) == kind)


def pages_showing(kind: str) -> list[Path]:
    return sorted({b.page for b in BLOCKS if kind_of(b) == kind})


@pytest.mark.parametrize("page", pages_showing("user_ask call"), ids=lambda p: p.name)
def test_the_call_shown_gets_the_result_shown_and_its_answer_the_text_shown(
    page: Path, mcp_url: str
) -> None:
    call = first("user_ask call", page).json()
    shown = first("input_required", page).json()
    text = first("tool text", page).json()

    reply = post(mcp_url, request_body("tools/call", call, caps=FORM_CAPS)).json()
    result = dict(assert_valid("tools/call", reply)["result"])
    state = result.pop("requestState")
    result.pop("_meta")  # the server's name and version, which the pages leave out
    assert isinstance(state, str) and shown.pop("requestState") == "<sealed>"
    assert result == shown

    # The page's answer is what the person typed, the optional note left empty.
    retry = {**call, "inputResponses": {"user_ask": {"action": "accept", "content": text}}}
    retry["requestState"] = state
    done = post(mcp_url, request_body("tools/call", retry, caps=FORM_CAPS)).json()
    answered = assert_valid("tools/call", done)["result"]
    expected = first("tool text", page).text.strip()
    assert answered["content"] == [{"type": "text", "text": expected}]


def test_the_readme_and_the_user_ask_page_show_the_same_call() -> None:
    readme, page = ROOT / "README.md", ROOT / "docs" / "agents" / "user-ask.md"
    for kind in ("user_ask call", "input_required", "tool text"):
        assert first(kind, readme).json() == first(kind, page).json(), kind


@pytest.mark.parametrize("block", of_kind("url elicitation"))
def test_a_url_mode_request_shown_is_a_valid_elicitation_request(block: Block) -> None:
    from django.test import override_settings
    from mcp_types import ElicitRequestURLParams

    from ask_mcp.web.elicit import answer_url

    params = block.json()["params"]
    ElicitRequestURLParams.model_validate({**params, "elicitationId": "e1"})
    ask_id = "3f2c9e0a-4b1d-4e6f-8a7b-5c3d2e1f0a9b"
    with override_settings(ASK_MCP={"PUBLIC_URL": "http://127.0.0.1:8000/"}):
        url = answer_url(ask_id)
    assert url is not None and url.replace(ask_id, "<id>") == params["url"]


# ---------------------------------------------------------------- configurations


@pytest.mark.parametrize("block", of_kind("client config"))
def test_a_client_configuration_shown_names_what_the_server_serves(
    block: Block, tmp_path: Path
) -> None:
    from ask_mcp.cli import parser
    from ask_mcp.cli.runner import server_from_options
    from ask_mcp.team.auth import TOKEN_PREFIX

    data = block.json()
    if "mcpServers" in data:
        (server,) = data["mcpServers"].values()
        assert server["type"] == "http"
        assert server["url"] == "http://127.0.0.1:8000/mcp"
        scheme, token = server["headers"]["Authorization"].split(" ")
        assert scheme == "Bearer" and token == f"{TOKEN_PREFIX}…"
        return
    args = [arg.replace("/srv/notes", str(tmp_path)) for arg in data["args"]]
    built = server_from_options(parser().parse_args(args))
    assert "user_ask" in built.tools and "fs_read" in built.tools


@pytest.mark.parametrize("block", of_kind("ask-mcp config"))
def test_an_ask_mcp_config_file_shown_builds_its_server(block: Block, tmp_path: Path) -> None:
    from ask_mcp.cli import parser
    from ask_mcp.cli.runner import server_from_options

    config = tmp_path / "assistant.json"
    config.write_text(block.text.replace("/srv/notes", str(tmp_path)))
    built = server_from_options(parser().parse_args([f"--config={config}"]))
    assert built.name == block.json()["name"]
    assert {"user_ask", "fs_read"} <= set(built.tools)


@pytest.mark.parametrize("block", of_kind("prometheus"))
def test_the_prometheus_job_shown_scrapes_the_metrics_path_with_a_token(block: Block) -> None:
    (job,) = yaml.safe_load(block.text)["scrape_configs"]
    assert job.get("metrics_path", "/metrics") == "/metrics"
    assert "credentials_file" in job["authorization"]
    from ask_mcp.routing import http_urlpatterns

    assert any("metrics" in str(pattern.pattern) for pattern in http_urlpatterns)


@pytest.mark.parametrize("block", of_kind("nginx"))
def test_the_proxy_block_shown_is_the_one_the_nginx_suite_runs(block: Block) -> None:
    from tests.support.nginx import DEPLOY_PAGE, documented_block

    assert block.page == DEPLOY_PAGE
    assert documented_block().strip() == block.text.strip()


# ---------------------------------------------------------------- what the server sends


@pytest.mark.parametrize("block", of_kind("webhook headers"))
def test_the_webhook_headers_shown_are_the_ones_sent_and_verify(block: Block) -> None:
    from ask_mcp.reach.webhooks import DELIVERY_HEADER, SIGNATURE_HEADER

    names = [line.split(":", 1)[0] for line in block.text.splitlines()]
    assert names == [SIGNATURE_HEADER, DELIVERY_HEADER]


@pytest.mark.parametrize("block", of_kind("webhook body"))
def test_the_webhook_body_shown_has_the_shape_the_server_sends(block: Block) -> None:
    from ask_mcp.reach import webhooks

    shown = block.json()
    ask = {key: value for key, value in shown["ask"].items() if key != "url"}
    sent = json.loads(
        webhooks.body_of(webhooks.announcement(ask, shown["ask"]["url"], shown["kind"]))
    )
    assert sent == shown


@pytest.mark.parametrize("block", of_kind("readiness"))
def test_the_readiness_answer_shown_names_the_checks_the_server_runs(block: Block) -> None:
    from ask_mcp.transports import health

    shown = block.json()
    assert set(shown) == {"status", "failed", "checks"}
    source = Path(health.__file__).read_text()
    for name in shown["checks"]:
        assert f'"{name}"' in source, name
    assert set(shown["failed"]) <= set(shown["checks"])


@pytest.mark.parametrize("block", of_kind("unauthorized"))
def test_the_refusal_shown_for_an_unknown_token_is_what_the_server_answers(
    block: Block, live_servers: Any
) -> None:
    from tests.support.live import SECURED

    server = live_servers.get(SECURED)
    head, _, body = block.text.partition("\n\n")
    status_line, *header_lines = head.splitlines()
    headers = dict(line.split(": ", 1) for line in header_lines)
    call = request_body("tools/list")
    wire_headers = {"authorization": "Bearer askmcp_unknown"}
    reply = post(server.mcp_url, call, {**_modern_headers(call), **wire_headers})
    assert f"HTTP/1.1 {reply.status_code} {reply.reason_phrase}" == status_line
    for name, value in headers.items():
        assert reply.headers[name] == value, name
    assert reply.json() == json.loads(body)


def _modern_headers(call: dict[str, Any]) -> dict[str, str]:
    from tests.support.wire import headers_for

    return headers_for(call)


@pytest.mark.parametrize("block", of_kind("log line"))
def test_a_log_line_shown_is_the_format_and_message_the_server_writes(block: Block) -> None:
    from django.utils.module_loading import import_string

    from ask_mcp.transports import access_log
    from askserver import settings

    spec = settings.LOGGING["formatters"]["plain"]
    formatter = import_string(spec["()"])() if "()" in spec else logging.Formatter(spec["format"])
    record = logging.LogRecord("ask_mcp.requests", logging.INFO, "", 0, "%s", ("x",), None)
    prefix = formatter.format(record).removesuffix(" x")
    shape = re.sub(r"\d", "9", prefix.split(" INFO ")[0])
    line = block.text.strip()
    assert re.sub(r"\d", "9", line[: len(shape)]) == shape
    assert line[len(shape) :].startswith(" INFO ask_mcp.requests: ")
    message = line.split("ask_mcp.requests: ", 1)[1]
    source = Path(access_log.__file__).read_text()
    template = re.search(r'"(%s %s by %s: %s in %\.1f ms)"', source)
    assert template, "the request line's format moved; update this check"
    pattern = re.escape(template.group(1)).replace("%s", r"\S+").replace(r"%\.1f", r"\d+\.\d")
    assert re.fullmatch(pattern, message), message


@pytest.mark.parametrize("block", of_kind("layout"))
def test_the_layout_shown_names_paths_that_exist_and_every_part(block: Block) -> None:
    named: set[str] = set()
    for line in block.text.splitlines():
        if line[:1] in (" ", ""):
            continue
        head = line.split("  ", 1)[0]
        first_word = head.split()[0]
        base = Path(first_word.rstrip("/")).parent  # later words on the line sit beside it
        for word in head.split():
            path = word if word == first_word else str(base / word)
            assert (ROOT / path.rstrip("/")).exists(), path
            named.add(path.rstrip("/"))
    parts = {
        f"ask_mcp/{p.name}"
        for p in (ROOT / "ask_mcp").iterdir()
        if p.name not in ("__init__.py", "py.typed", "static", "templates", "__pycache__")
    }
    assert parts <= named, sorted(parts - named)


# ---------------------------------------------------------------- Python examples


def run_python(source: str, namespace: dict[str, Any]) -> None:
    code = compile(source, "<snippet>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    outcome = eval(code, namespace)  # the docs' own example, run as a reader would
    if asyncio.iscoroutine(outcome):
        asyncio.run(outcome)


def python_blocks(name: str) -> list[str]:
    return [b.text for b in BLOCKS if b.page.name == name and b.lang == "python"]


PYTHON_CHECKS: dict[str, Callable[..., None]] = {}


def checks(page: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    def register(check: Callable[..., None]) -> Callable[..., None]:
        PYTHON_CHECKS[page] = check
        return check

    return register


def test_every_page_with_python_has_its_example_run() -> None:
    pages = {b.page.name for b in BLOCKS if b.lang == "python"}
    assert pages == set(PYTHON_CHECKS)


@checks("toolkits.md")
def _toolkits() -> None:
    from ask_mcp.protocol.forms import ElicitResult
    from tests.support.scripted import ScriptedElicit

    namespace: dict[str, Any] = {}
    for source in python_blocks("toolkits.md"):
        run_python(source, namespace)
    server = namespace["server"]
    server.on_elicit = ScriptedElicit(ElicitResult("accept", {"ok": True}))
    server.plug(namespace["Notes"]())
    assert {"deploy_start", "user_ask"} <= set(server.tools)
    assert "notes_summary" in server.prompts and "notes://index" in server.resources
    call = {"id": "c1", "type": "function", "function": {"name": "deploy_start"}}
    call["function"]["arguments"] = '{"env": "staging"}'
    (message,) = asyncio.run(server.execute_tool_calls([call]))
    assert message["content"] == "deploying"


@checks("servers.md")
def _servers() -> None:
    from ask_mcp import MCPServer

    ran: list[MCPServer] = []
    with _patched(MCPServer, "run", lambda self, *a, **k: ran.append(self)):
        (source,) = python_blocks("servers.md")
        run_python(source, {})
    (server,) = ran
    assert server.name == "assistant" and "user_ask" in server.tools


@checks("llm-bridge.md")
def _llm_bridge() -> None:
    from pydantic import BaseModel

    from ask_mcp.protocol.forms import ElicitResult
    from tests.support.scripted import ScriptedElicit

    class ToolCall(BaseModel):  # the shape of the OpenAI SDK's ChatCompletionMessageToolCall
        id: str
        type: str
        function: dict[str, str]

    call = ToolCall(
        id="call_1",
        type="function",
        function={"name": "user_ask", "arguments": '{"message": "C?"}'},
    )
    response = SimpleNamespace(
        choices=[SimpleNamespace(message=SimpleNamespace(tool_calls=[call]))]
    )
    namespace: dict[str, Any] = {
        "ask_someone": ScriptedElicit(ElicitResult("accept", {"answer": "blue"})),
        "messages": [],
        "response": response,
    }
    (source,) = python_blocks("llm-bridge.md")
    run_python("from ask_mcp import MCPServer\n" + source, namespace)
    assert [t["function"]["name"] for t in namespace["tools"]] == ["user_ask"]
    assert namespace["messages"] == [
        {"role": "tool", "tool_call_id": "call_1", "content": '{"answer":"blue"}'}
    ]


@checks("embedding.md")
def _embedding() -> None:
    from django.core.asgi import get_asgi_application

    from ask_mcp.transports import shutdown

    installed: list[bool] = []
    with _patched(shutdown, "install", lambda: installed.append(True) or False):
        namespace: dict[str, Any] = {"get_asgi_application": get_asgi_application}
        (source,) = python_blocks("embedding.md")
        run_python(source, namespace)
    assert callable(namespace["application"]) and installed == [True]


@checks("reach.md")
def _reach() -> None:
    import time

    from ask_mcp.reach.webhooks import signature

    namespace: dict[str, Any] = {}
    (source,) = python_blocks("reach.md")
    run_python(source, namespace)
    verify = namespace["verify"]
    body, now = b'{"kind":"asked"}', int(time.time())
    header = signature("whsec_test", body, now)
    assert verify("whsec_test", header, body)
    assert not verify("whsec_test", header, body + b" ")
    assert not verify("whsec_other", header, body)
    assert not verify("whsec_test", signature("whsec_test", body, now - 301), body)


@pytest.mark.django_db
@pytest.mark.parametrize("page", sorted(PYTHON_CHECKS))
def test_each_python_example_runs_and_does_what_its_page_says(page: str) -> None:
    PYTHON_CHECKS[page]()


@contextlib.contextmanager
def _patched(owner: Any, name: str, value: Any) -> Iterator[None]:
    old = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, old)
