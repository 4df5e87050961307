// The inbox as an installable app with push notifications: registers the service worker
// (/sw.js, root scope) on every page, and on Settings turns notifications on for this device:
// the browser's permission, a push subscription signed for this server's VAPID key, posted to
// the server with the device's name. Without service workers or push (an iPhone's Safari
// outside a Home Screen app), the page says so and works as before.
(() => {
  "use strict";
  const supported = "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;
  const registered = "serviceWorker" in navigator
    ? navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch(() => null)
    : Promise.resolve(null);

  function key(base64url) {
    const text = atob(base64url.replace(/-/g, "+").replace(/_/g, "/") + "==".slice(0, (4 - base64url.length % 4) % 4));
    return Uint8Array.from(text, (c) => c.charCodeAt(0));
  }

  function guessName() {
    const agent = navigator.userAgent;
    for (const [pattern, name] of [[/iPhone/, "iPhone"], [/iPad/, "iPad"], [/Android/, "Android phone"],
      [/Mac OS X/, "Mac"], [/Windows/, "Windows computer"], [/Linux/, "Linux computer"]]) {
      if (pattern.test(agent)) return name;
    }
    return "This device";
  }

  async function turnOn(form) {
    const status = document.getElementById("device-status");
    const say = (text) => { status.textContent = text; };
    if (await Notification.requestPermission() !== "granted") {
      say("Notifications are blocked for this site; allow them in the browser's site settings, then try again.");
      return;
    }
    await registered;
    const registration = await navigator.serviceWorker.ready;
    let subscription;
    try {
      subscription = await registration.pushManager.subscribe({
        userVisibleOnly: true,
        applicationServerKey: key(form.dataset.key),
      });
    } catch (error) {
      say(`This browser could not subscribe: ${error.message}`);
      return;
    }
    const body = { ...subscription.toJSON(), name: form.elements.name.value };
    const response = await fetch(form.dataset.url, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRFToken": form.elements.csrfmiddlewaretoken.value },
      body: JSON.stringify(body),
    });
    if (!response.ok) {
      const problem = await response.json().catch(() => ({ error: response.statusText }));
      say(`Not turned on: ${problem.error}`);
      return;
    }
    window.location.assign(`${window.location.pathname}#devices`);
    window.location.reload();
  }

  function settings() {
    const form = document.getElementById("device-new");
    if (!form) return;
    if (!supported) return; // the page's own words say why
    document.getElementById("device-unsupported").hidden = true;
    form.hidden = false;
    if (!form.elements.name.value) form.elements.name.value = guessName();
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      turnOn(form);
    });
  }

  // "Seen": a person has looked at an ask when its card is unfolded, or its own page is shown
  // in a visible tab; the server keeps each person's first look and tells the agent.
  const seen = new Set();

  function csrf() {
    try {
      return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || "";
    } catch (error) {
      return "";
    }
  }

  function markSeen(hex) {
    if (!hex || seen.has(hex) || document.visibilityState !== "visible") return;
    seen.add(hex);
    const id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    fetch(`/asks/${id}/seen/`, { method: "POST", headers: { "X-CSRFToken": csrf() } })
      .catch(() => seen.delete(hex)); // tried again at the next look
  }

  function pageSeen() {
    const page = document.querySelector(".ask-page[data-ask]");
    if (page) markSeen(page.dataset.ask);
  }

  document.addEventListener("toggle", (event) => {
    const details = event.target;
    if (!(details instanceof HTMLDetailsElement) || !details.open) return;
    const card = details.closest(".ask-card[data-ask]");
    if (card) markSeen(card.dataset.ask);
  }, true); // toggle does not bubble
  document.addEventListener("visibilitychange", pageSeen);

  function start() {
    settings();
    pageSeen();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
