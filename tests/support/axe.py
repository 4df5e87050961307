"""axe-core in the test browser: every accessibility rule it runs by default, on the page as shown.

axe-core is vendored in tests/support/vendor/axe.min.js (version 4.14.1, MPL-2.0, its licence
beside it), taken unchanged from the npm registry's `axe-core` package (`npm pack axe-core`), so
the tests need no network. To update it: `npm pack axe-core@<version>`, copy `package/axe.min.js`
and `package/LICENSE` over the two files, and change the version here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from playwright.async_api import Page

AXE: Final = Path(__file__).parent / "vendor" / "axe.min.js"
AXE_VERSION: Final = "4.14.1"
"""The vendored axe-core; its default rule set is WCAG 2.0-2.2 A and AA plus best practices."""

_RUN: Final = """async () => {
  const result = await axe.run(document, { resultTypes: ["violations"] });
  return result.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 5).map((n) => [n.target.join(" "), n.failureSummary]),
  }));
}"""


async def violations(page: Page) -> list[dict[str, Any]]:
    """axe-core's violations on `page` now, at every impact level (none is ignored)."""
    if not await page.evaluate("typeof window.axe !== 'undefined'"):
        # Evaluated through the DevTools protocol, not as a <script>: the pages' own
        # Content-Security-Policy allows no inline script, and must not be loosened for a test.
        await page.evaluate(AXE.read_text(encoding="utf-8") + "\n;undefined")
    found: list[dict[str, Any]] = await page.evaluate(_RUN)
    return found


async def assert_accessible(page: Page, where: str) -> None:
    found = await violations(page)
    assert found == [], f"axe-core {AXE_VERSION} found violations on {where}: {found}"
