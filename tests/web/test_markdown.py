"""An agent's Markdown as HTML: structure and code kept, raw HTML and unsafe links never passed, every link showing its host."""

from __future__ import annotations

from django.test import override_settings

from ask_mcp.web.markdown import plain_title, render_markdown


def test_headings_lists_code_and_links_render() -> None:
    html = render_markdown(
        "## Plan\n\n- one\n- two\n\n```\n  indented\n```\n\nsee https://example.com"
    )
    assert "<h2>Plan</h2>" in html
    assert "<li>one</li>" in html
    assert '<pre tabindex="0"><code>  indented\n</code></pre>' in html
    assert '<a href="https://example.com" rel="noopener nofollow noreferrer">' in html


def test_raw_html_is_text_and_unsafe_links_lose_their_address() -> None:
    html = render_markdown("<script>x()</script><img src=x onerror=y> [a](javascript:alert(1))")
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;" in html
    assert "javascript:" not in html.split("[a]")[0]
    assert 'href="javascript' not in html


def test_a_title_drops_markdown_marks_but_keeps_words() -> None:
    assert plain_title("## **Deploy** `api` now?") == "Deploy api now?"
    assert plain_title("snake_case stays") == "snake_case stays"


@override_settings(
    ASK_MCP={"PUBLIC_URL": "https://ask.example.com"},
    ALLOWED_HOSTS=["ask.example.com", "127.0.0.1"],
)
def test_links_to_another_port_of_the_servers_own_host_and_without_a_host_are_text() -> None:
    for text in (
        "[logs](https://ask.example.com:8443/x)",
        "[logs](http://ask.example.com/x)",  # port 80, not PUBLIC_URL's 443
        "http://127.0.0.1:9999/steal",
        "[p](//evil.example/x)",
        "[r](/admin/)",
        "[b](http:\\\\evil.example/x)",
    ):
        html = render_markdown(text)
        assert "<a " not in html, (text, html)
    kept = render_markdown("[inbox](https://ask.example.com/mine/)")
    assert (
        '<a href="https://ask.example.com/mine/"' in kept and "inbox</a> (ask.example.com)" in kept
    )


@override_settings(ASK_MCP={}, ALLOWED_HOSTS=["127.0.0.1"])
def test_without_public_url_no_link_to_the_servers_own_host_renders() -> None:
    assert "<a " not in render_markdown("http://127.0.0.1:8000/asks/")
    assert "<a " in render_markdown("https://example.com/")


def test_every_link_shows_its_real_host_unless_its_text_is_that_address() -> None:
    disguised = render_markdown("[https://bank.example](https://bank.example@evil.example/)")
    assert "https://bank.example</a> (evil.example)" in disguised
    assert "your bank</a> (evil.example:8080)" in render_markdown(
        "[your bank](https://evil.example:8080/login)"
    )
    bare = render_markdown("see https://example.com/a and www.example.org")
    assert "(example.com)" not in bare and "(www.example.org)" not in bare
    assert "write</a> (ops@example.com)" in render_markdown("[write](mailto:ops@example.com)")
