"""A real SMTP server on loopback (aiosmtpd) that keeps every mail it is sent, parsed.

Tests read what arrived: who it was for, the subject, the plain and the HTML part, the link.
Waiting is bounded and event-driven (no polling sleeps).
"""

from __future__ import annotations

import email
import email.policy
import re
import threading
import time
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any, Self

from aiosmtpd.controller import Controller

from tests.support.ports import free_port

LINK = re.compile(r"https?://[^\s\"<>]+/link/[^\s\"<>]+/")


@dataclass
class Mail:
    to: list[str]
    message: EmailMessage

    @property
    def subject(self) -> str:
        return str(self.message["subject"])

    def part(self, kind: str) -> str:
        found = self.message.get_body(preferencelist=(kind,))
        assert found is not None, f"no {kind} part"
        return str(found.get_content())  # type: ignore[attr-defined]

    @property
    def text(self) -> str:
        return self.part("plain")

    @property
    def html(self) -> str:
        return self.part("html")

    @property
    def link(self) -> str:
        (found,) = set(LINK.findall(self.text))
        return found


class Mailbox:
    """An aiosmtpd server on 127.0.0.1 keeping every mail; `url` is its ASKSERVER_EMAIL_URL.

    Running from construction; `close()`, or leaving its `with` block, stops it.
    """

    def __init__(self) -> None:
        self.mails: list[Mail] = []
        self.arrived = threading.Condition()
        box = self

        class Handler:
            async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
                parsed = email.message_from_bytes(envelope.content, policy=email.policy.default)
                assert isinstance(parsed, EmailMessage)
                with box.arrived:
                    box.mails.append(Mail(list(envelope.rcpt_tos), parsed))
                    box.arrived.notify_all()
                return "250 OK"

        port = free_port()  # aiosmtpd's start-up check needs a real port
        self.controller = Controller(Handler(), hostname="127.0.0.1", port=port)
        self.controller.start()
        self.url = f"smtp://127.0.0.1:{port}"

    def to(self, address: str) -> list[Mail]:
        return [mail for mail in self.mails if address in mail.to]

    def wait(self, predicate: Any, timeout: float = 20.0) -> list[Mail]:
        """Wait (bounded) until `predicate(mails)` holds; returns the mails then."""
        deadline = time.monotonic() + timeout
        with self.arrived:
            while not predicate(self.mails):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"mail did not arrive in {timeout}s: {self.summary()}")
                self.arrived.wait(left)
            return list(self.mails)

    def summary(self) -> list[tuple[list[str], str]]:
        return [(mail.to, mail.subject) for mail in self.mails]

    def close(self) -> None:
        self.controller.stop()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
