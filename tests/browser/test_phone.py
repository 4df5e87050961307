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
import datetime as dt
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
from playwright.async_api import (
    Browser,
    BrowserContext,
    CDPSession,
    Page,
    async_playwright,
    expect,
)

from tests.support.axe import assert_accessible
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, Person, add_user, open_card, signed_in
from tests.support.clients import authed
from tests.support.inbox_http import held_call, signed_in_http
from tests.support.live import LiveServer, LiveServers
from tests.support.pushservice import Device, PushService, unb64url
from tests.support.reach import REACH_CONFIG, Crew, ask
from tests.support.shell import shell
from tests.support.tasks import INBOX_CAPS, TaskClient

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


async def notifications(page: Page) -> list[dict[str, Any]]:
    shown: list[dict[str, Any]] = await page.evaluate(
        """async () => (await (await navigator.serviceWorker.ready).getNotifications())
            .map((n) => ({ title: n.title, body: n.body, tag: n.tag,
                           actions: n.actions.map((a) => a.title) }))"""
    )
    return shown


async def ask_with(server: LiveServer, token: str, message: str, questions: list[Any]) -> Any:
    async with asyncio.timeout(60), authed(server.mcp_url, token) as client:
        return await client.call_tool("user_ask", {"message": message, "questions": questions})


async def shown_until(page: Page, test: Any) -> list[dict[str, str]]:
    for _ in range(300):  # bounded (30 s): the worker shows it within moments of the push
        shown = await notifications(page)
        if test(shown):
            return shown
        await asyncio.sleep(0.1)  # poll interval of the bounded wait above
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


async def answer_from_the_notification(
    server: LiveServer, crew: Crew, erin: Person, page: Page, deliver: Any
) -> None:
    """A choice between two: the notification carries them as buttons, and one answers."""
    phone = page.context
    choice = f"Ship or hold the release? [{crew.tag}]"
    questions = [{"name": "verdict", "prompt": "Your call", "options": ["ship", "hold"]}]
    held = asyncio.create_task(ask_with(server, crew.token, choice, questions))
    offered = await deliver()
    assert [each["title"] for each in offered["actions"]] == ["ship", "hold"]
    assert all(each["token"] not in offered["url"] for each in offered["actions"])
    shown = await shown_until(page, lambda found: len(found) == 1)
    assert shown[0]["actions"] == ["ship", "hold"]
    [worker] = phone.service_workers
    await worker.evaluate(
        """async (tag) => {
          const [shown] = await self.registration.getNotifications({ tag });
          self.dispatchEvent(new NotificationEvent("notificationclick",
            { notification: shown, action: "answer-0" }));
        }""",
        offered["tag"],
    )
    result = await held
    assert not result.is_error
    assert json.loads(result.content[0].text) == {"verdict": "ship"}
    told = await shown_until(page, lambda found: found and found[0]["title"] != offered["title"])
    assert told[0]["title"] == "Answered: ship"
    answered_by = shell(
        server,
        "import json; from ask_mcp.models import AskEvent;"
        "print(json.dumps([[e.actor.username, e.actor_label] for e in AskEvent.objects.filter("
        f"ask__message={choice!r}, kind='answered')]))",
    )
    assert answered_by == [[erin.username, "from a notification"]]
    again = offered["actions"][1]["token"]  # the other button, after the ask ended
    async with httpx2.AsyncClient(base_url=server.base_url) as client:
        late = await client.post(offered["answer_url"], json={"token": again})
    assert late.status_code == 409 and late.json()["said"] == f"Answered by {erin.username}"


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
    await page.goto("/")  # the card says where the push got to, beside who has seen it
    shown_card = await open_card(page, message)
    await expect(shown_card.locator(".reached")).to_have_text(
        re.compile(rf"Erin's phone \({erin.username}\) (just now|\d+\s+minutes? ago)")
    )
    await assert_accessible(page, "an inbox card at phone size saying where its push got to")
    shown = await shown_until(page, lambda found: len(found) == 1)
    assert shown == [
        {"title": pushed["title"], "body": message, "tag": pushed["tag"], "actions": []}
    ]
    # The asker as the mail names it since the inbox's second round: the agent, for whom.
    assert re.fullmatch(rf"Question from \S+ for {crew.alice.username}\b.*", pushed["title"])
    assert service.of(device)[0].vapid == "ok"

    async with signed_in_http(server, erin) as session:
        answered = await session.answer(ask_id, component="ui", severity="1")
        assert answered.status_code == 200
    assert not (await call).is_error
    closing = await deliver()
    assert closing["kind"] == "closed" and closing["tag"] == pushed["tag"]
    assert await shown_until(page, lambda found: found == []) == []

    await answer_from_the_notification(server, crew, erin, page, deliver)


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


async def test_a_person_unfolding_a_card_is_told_to_the_agent_in_the_tasks_status_and_the_held_calls_progress(
    server: LiveServer, crew: Crew, browser: Browser
) -> None:
    message = f"Which region fails over first? [{crew.tag}-seen]"
    tasks = TaskClient(server.mcp_url, crew.token)
    task = await tasks.ask({"message": message}, caps=INBOX_CAPS)
    held_message = f"Page the on-call now? [{crew.tag}-held]"
    auth = {"authorization": f"Bearer {crew.token}"}
    async with held_call(server.mcp_url, headers=auth, message=held_message) as call:
        before = await tasks.get(task["taskId"])
        assert not before.get("statusMessage", "").startswith("Seen")  # nobody looked yet

        page = await signed_in(browser, server, crew.carol)
        try:
            await open_card(page, message)
            await open_card(page, held_message)
            seen = f"Seen by {crew.carol.username} at "
            async with asyncio.timeout(30):  # the progress notification comes at once
                async for line in call.lines:
                    if line.startswith("data:") and seen in line:
                        said = json.loads(line[5:])
                        break
            assert said["method"] == "notifications/progress"
            assert re.fullmatch(
                rf"Seen by {crew.carol.username} at \d\d:\d\d UTC; not answered yet\. Answer at "
                rf"{re.escape(server.base_url)}/asks/[0-9a-f-]{{36}}/",
                said["params"]["message"],
            )
            status = ""
            for _ in range(50):  # bounded: the look is kept before the view answers
                status = (await tasks.get(task["taskId"])).get("statusMessage", "")
                if status.startswith("Seen"):
                    break
            assert re.fullmatch(
                rf"Seen by {crew.carol.username} at \d\d:\d\d UTC; not answered yet\.", status
            )
            await page.reload()
            shown = await open_card(page, message)  # a second look is not a second event
            looked = re.compile(rf"{crew.carol.username} (just now|\d+\s+minutes? ago)")
            await expect(shown.locator(".seen-by")).to_have_text(looked)
            kept = shell(
                server,
                "import json; from ask_mcp.models import AskEvent;"
                "print(json.dumps([e.actor.username for e in AskEvent.objects.filter("
                f"ask__message={message!r}, kind='seen')]))",
            )
            assert kept == [crew.carol.username]
        finally:
            await page.context.close()
    await tasks.cancel(task["taskId"])


async def test_away_set_from_the_inbox_with_no_escalation_says_nobody_else_is_offered_it(
    server: LiveServer, crew: Crew, browser: Browser
) -> None:
    asker = await signed_in(browser, server, crew.alice, **PHONE)
    answerer = await signed_in(browser, server, crew.carol, **PHONE, color_scheme="dark")
    call: asyncio.Task[Any] | None = None
    try:
        await asker.locator(".away-fold summary").click()
        until = (dt.datetime.now(dt.UTC) + dt.timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M")
        await asker.get_by_label("Away until (UTC)").fill(until)
        await asker.get_by_role("button", name="Set away").click()
        await expect(asker.locator(".away-fold summary")).to_contain_text("You are away until")
        await assert_accessible(asker, "the inbox at phone size while away")

        message = f"Renew the certificate? [{crew.tag}-away]"
        call = asyncio.create_task(ask(server, crew.token, message))
        words = (
            f"{crew.alice.username} is away until {until.replace('T', ' ')} UTC and team "
            f"{crew.team} has no escalation: nobody else is offered it"
        )
        shown = await open_card(answerer, message)
        await expect(shown.locator(".nobody-else")).to_have_text(words)
        await assert_accessible(answerer, "a card at phone size (dark) offered to nobody else")
        history: list[str] = []
        for _ in range(40):  # bounded: the reach task's pass (every 0.2 s here) notes it once
            history = shell(
                server,
                "import json; from ask_mcp.models import AskEvent;"
                "print(json.dumps([e.actor_label for e in AskEvent.objects.filter("
                f"ask__message={message!r}, kind='escalated')]))",
            )
            if history:
                break
        assert history == [f"nobody ({words})"]
        await shown.get_by_role("link", name="Open on its own page").click()
        await expect(answerer.locator(".history")).to_contain_text(f"to nobody ({words})")

        await asker.get_by_role("button", name="I am back").click()
        await expect(asker.locator(".away-fold summary")).to_have_text("Away")
    finally:
        if call is not None:
            call.cancel()
        server.manage(
            "shell",
            "-c",
            "from ask_mcp.models import ReachPreference;"
            f"ReachPreference.objects.filter(user__username={crew.alice.username!r})"
            ".update(away_until=None)",
        )
        await asker.context.close()
        await answerer.context.close()


async def test_a_bad_away_from_the_inbox_is_refused_in_words_and_changes_nothing(
    server: LiveServer, crew: Crew
) -> None:
    past = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M")
    async with signed_in_http(server, crew.dave) as dave:
        for value, said in [
            ("soon", "'soon' is not a date and time such as 2026-12-24T18:00 (UTC)."),
            (past, "Choose when you are back: a time in the future (UTC)."),
            ("", "Choose when you are back: a time in the future (UTC)."),
        ]:
            refused = await dave.client.post(
                "/away/", data={"away_until": value, "csrfmiddlewaretoken": dave.csrf}
            )
            assert (refused.status_code, refused.text) == (400, said)
        assert (await dave.client.get("/away/")).status_code == 405
    async with httpx2.AsyncClient(base_url=server.base_url) as anonymous:
        signed_out = await anonymous.post("/away/", data={"away_until": "2099-01-01T00:00"})
        assert signed_out.status_code == 403  # no CSRF cookie: refused before the view
    kept = shell(
        server,
        "import json; from ask_mcp.models import ReachPreference;"
        "print(json.dumps([str(p.away_until) for p in ReachPreference.objects.filter("
        f"user__username={crew.dave.username!r})]))",
    )
    assert kept == ["None"]
