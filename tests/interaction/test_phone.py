"""The inbox on a phone, in real Chromium: installable (manifest, icons, root service worker), notifications turned on in Settings, a pushed question shown and acknowledged by the service worker, and closed when answered.

Headless Chromium cannot subscribe to a real push service here, so one thing is substituted: an
init script replaces `PushManager.subscribe` with what a push service would give, a P-256 key
pair and an auth secret made with WebCrypto and an endpoint on the loopback push service
(tests/support/pushservice.py). Settings' own script posts it as it would a real one. The
service verifies and decrypts what the server pushes, and the test hands the plaintext to
Chromium through DevTools' `ServiceWorker.deliverPushMessage`, as a push service's connection
to the browser would; the service worker does the rest.
"""

from __future__ import annotations

import asyncio
import json
import queue
import re
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
import pytest_asyncio
from cryptography.hazmat.primitives.asymmetric import ec
from playwright.async_api import BrowserContext, CDPSession, Page, async_playwright, expect

from tests.support.axe import assert_accessible
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, Person, add_user
from tests.support.inbox_http import signed_in_http
from tests.support.live import LiveServer, LiveServers
from tests.support.pushservice import Device, PushService, unb64url
from tests.support.reach import REACH_CONFIG, Crew, ask
from tests.support.shell import shell

pytestmark = pytest.mark.asyncio(loop_scope="session")

PHONE: dict[str, Any] = {"viewport": {"width": 390, "height": 844}, "is_mobile": True}
"""A phone's screen (390 by 844 CSS pixels)."""
SUBSCRIBE = """
(endpoint) => {
  const b64 = (bytes) => btoa(String.fromCharCode(...bytes))
    .replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
  PushManager.prototype.subscribe = async function (options) {
    const pair = await crypto.subtle.generateKey(
      { name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"]);
    const raw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
    const auth = crypto.getRandomValues(new Uint8Array(16));
    const keys = { p256dh: b64(raw), auth: b64(auth) };
    const made = {
      endpoint, keys, jwk: await crypto.subtle.exportKey("jwk", pair.privateKey),
      serverKey: b64(new Uint8Array(options.applicationServerKey)),
    };
    localStorage.setItem("test.pushMade", JSON.stringify(made));
    return { endpoint, expirationTime: null, options,
             toJSON: () => ({ endpoint, expirationTime: null, keys }) };
  };
}
"""
"""The one substitution: `subscribe` makes the keys a push service would, here, with WebCrypto."""


@pytest.fixture(scope="module")
def service() -> Iterator[PushService]:
    made = PushService()
    yield made
    made.close()


@pytest.fixture(scope="module")
def server(live_servers: LiveServers) -> Iterator[LiveServer]:
    live = live_servers.start({**REACH_CONFIG, "VAPID_SUBJECT": "https://ops.example.com"})
    yield live
    live_servers.stop(live)


@pytest.fixture(scope="module")
def crew(server: LiveServer) -> Crew:
    return Crew(server)


@pytest_asyncio.fixture(loop_scope="session")
async def phone(server: LiveServer, tmp_path: Path) -> AsyncIterator[BrowserContext]:
    """A persistent Chromium profile at phone size (installability is judged in one)."""
    async with async_playwright() as playwright:
        context = await playwright.chromium.launch_persistent_context(
            str(tmp_path / "profile"),
            executable_path=CHROMIUM,
            args=CHROMIUM_ARGS,
            base_url=server.base_url,
            **PHONE,
        )
        await context.grant_permissions(["notifications"], origin=server.base_url)
        yield context
        await context.close()


async def sign_in(page: Page, person: Person) -> None:
    await page.goto("/accounts/login/")
    await page.get_by_label("Username").fill(person.username)
    await page.get_by_label("Password").fill(person.password)
    await page.get_by_role("button", name="Sign in").click()
    await expect(page).to_have_url(re.compile(r"/$"))


def device_of(made: dict[str, Any]) -> Device:
    """The subscription the browser made, as the push service holds it."""
    number = int.from_bytes(unb64url(made["jwk"]["d"]), "big")
    return Device(
        endpoint=made["endpoint"],
        private_key=ec.derive_private_key(number, ec.SECP256R1()),
        auth=unb64url(made["keys"]["auth"]),
        server_key=made["serverKey"],
    )


async def notifications(page: Page) -> list[dict[str, str]]:
    shown: list[dict[str, str]] = await page.evaluate(
        """async () => (await (await navigator.serviceWorker.ready).getNotifications())
            .map((n) => ({ title: n.title, body: n.body, tag: n.tag }))"""
    )
    return shown


async def shown_until(page: Page, test: Any) -> list[dict[str, str]]:
    for _ in range(300):  # bounded (30 s): the worker shows it within moments of the push
        shown = await notifications(page)
        if test(shown):
            return shown
        await asyncio.sleep(0.1)
    return await notifications(page)


async def registration_id(cdp: CDPSession, scope: str) -> str:
    found: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def updated(event: dict[str, Any]) -> None:
        for registration in event["registrations"]:
            if registration["scopeURL"] == scope and not found.done():
                found.set_result(registration["registrationId"])

    cdp.on("ServiceWorker.workerRegistrationUpdated", updated)
    await cdp.send("ServiceWorker.enable")
    return await asyncio.wait_for(found, 20)


async def test_the_inbox_installs_and_a_pushed_question_is_shown_acknowledged_and_closed(
    server: LiveServer, crew: Crew, service: PushService, phone: BrowserContext
) -> None:
    erin = add_user(server, f"erin{crew.tag}", staff=False)
    server.manage(
        "shell",
        "-c",
        "from django.contrib.auth.models import Group, User;"
        f"Group.objects.get(name={crew.team!r}).user_set.add("
        f"User.objects.get(username={erin.username!r}))",
    )
    endpoint = f"{service.origin}/push/{uuid.uuid4().hex}"
    await phone.add_init_script(f"({SUBSCRIBE})({json.dumps(endpoint)})")
    page = phone.pages[0] if phone.pages else await phone.new_page()
    await sign_in(page, erin)

    cdp = await phone.new_cdp_session(page)
    scope = server.base_url + "/"
    registration = await registration_id(cdp, scope)  # the inbox registered /sw.js at the root
    installability = await cdp.send("Page.getInstallabilityErrors")
    assert installability["installabilityErrors"] == []

    await page.goto("/settings/")
    await assert_accessible(page, "settings at phone size, no device yet")
    await page.emulate_media(color_scheme="dark")
    await assert_accessible(page, "settings at phone size, no device yet, dark")
    await page.emulate_media(color_scheme="light")
    await page.get_by_label("This device's name").fill("Erin's phone")
    await page.get_by_role("button", name="Turn on notifications on this device").click()
    await expect(page.locator(".device-name")).to_have_text(["Erin's phone"])
    await assert_accessible(page, "settings at phone size, one device")
    await page.emulate_media(color_scheme="dark")
    await assert_accessible(page, "settings at phone size, one device, dark")
    made = json.loads(await page.evaluate("localStorage.getItem('test.pushMade')"))
    device = service.adopt(device_of(made))
    relayed: queue.Queue[bytes] = queue.Queue()
    service.forward = lambda to, plaintext: relayed.put(plaintext) if to is device else None

    async def deliver() -> dict[str, Any]:
        plaintext = await asyncio.to_thread(relayed.get, True, 30)
        await cdp.send(
            "ServiceWorker.deliverPushMessage",
            {"origin": server.base_url, "registrationId": registration, "data": plaintext.decode()},
        )
        payload: dict[str, Any] = json.loads(plaintext)
        return payload

    message = f"Deploy the hotfix now? [{crew.tag}]"
    call = asyncio.create_task(ask(server, crew.token, message))
    pushed = await deliver()
    ask_id = str(uuid.UUID(hex=pushed["tag"]))
    reached: list[Any] = []
    for _ in range(20):  # bounded: the worker acknowledges as it shows the notification
        reached = shell(
            server,
            "import json; from ask_mcp.models import AskEvent;"
            f"print(json.dumps([[e.actor.username, e.actor_label] for e in "
            f"AskEvent.objects.filter(ask_id={ask_id!r}, kind='reached')]))",
        )
        if reached:
            break
    assert reached == [[erin.username, "Erin's phone"]]
    shown = await shown_until(page, lambda found: len(found) == 1)
    assert shown == [
        {"title": pushed["title"], "body": message, "tag": pushed["tag"]}
    ]
    assert pushed["title"].startswith(f"Question from {crew.alice.username} via ")
    assert service.of(device)[0].vapid == "ok"

    async with signed_in_http(server, erin) as session:
        answered = await session.answer(ask_id, component="ui", severity="1")
        assert answered.status_code == 200
    assert not (await call).is_error
    closing = await deliver()
    assert closing["kind"] == "closed" and closing["tag"] == pushed["tag"]
    assert await shown_until(page, lambda found: found == []) == []


async def test_the_manifest_the_icons_and_the_worker_are_served_at_fixed_urls_under_the_csp(
    server: LiveServer,
) -> None:
    async with httpx2.AsyncClient(base_url=server.base_url) as client:
        manifest = await client.get("/manifest.webmanifest")
        worker = await client.get("/sw.js")
        assert manifest.headers["content-type"] == "application/manifest+json"
        body = manifest.json()
        assert body["start_url"] == "/" and body["display"] == "standalone"
        sizes = {icon["sizes"]: icon for icon in body["icons"]}
        assert set(sizes) == {"192x192", "512x512"}
        for size, icon in sizes.items():
            assert "maskable" in icon["purpose"].split()
            png = await client.get(icon["src"])
            width = int.from_bytes(png.content[16:20], "big")
            height = int.from_bytes(png.content[20:24], "big")
            assert png.content[:8] == b"\x89PNG\r\n\x1a\n" and f"{width}x{height}" == size
        assert worker.status_code == 200
        assert worker.headers["content-type"].startswith("text/javascript")
        assert "script-src 'self'" in worker.headers["content-security-policy"]
        assert 'addEventListener("push"' in worker.text
