"""An agent's Markdown as HTML: structure and code kept, raw HTML and unsafe links never passed."""

from __future__ import annotations

from ask_mcp.web.markdown import plain_title, render_markdown


def test_headings_lists_code_and_links_render() -> None:
    html = render_markdown(
        "## Plan\n\n- one\n- two\n\n```\n  indented\n```\n\nsee https://example.com"
    )
    assert "<h2>Plan</h2>" in html
    assert "<li>one</li>" in html
    assert "<pre tabindex=\"0\"><code>  indented\n</code></pre>" in html
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
