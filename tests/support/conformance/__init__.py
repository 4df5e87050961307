"""The official MCP conformance suite's fixture: its toolkit, its Tasks tools and the settings that load them.

A test fixture, not the product: it lives in the checkout, beside the tests, and is never part
of the wheel. `make conformance` (.ci/conformance.py) starts a server with
:mod:`tests.support.conformance.settings`, from the repository root on PYTHONPATH; the tests
plug the toolkit directly or name it by :data:`TOOLKIT` in a live server's settings.
"""

from __future__ import annotations

from typing import Final

TOOLKIT: Final = "tests.support.conformance.toolkit:Conformance"
"""The fixture's dotted path, the name a configuration loads it by (it is no built-in)."""
