// askserver's service worker, served at /sw.js so its scope is the whole inbox. It shows each
// pushed question as a notification (one per ask: the tag is the ask's id), acknowledges every
// push it gets so the server knows this device was reached (else the person is mailed), closes
// the notification when a push says the ask ended, and opens the ask's page when tapped.
"use strict";

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

function acknowledge(ack) {
  if (!ack || !ack.url || !ack.token) return Promise.resolve();
  // The signed token is the credential: no cookie, no CSRF token in a worker.
  return fetch(ack.url, {
    method: "POST",
    credentials: "omit",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ token: ack.token }),
  }).catch(() => undefined); // unacknowledged: the server mails the person after a while
}

async function closeTagged(tag) {
  const shown = await self.registration.getNotifications({ tag });
  for (const notification of shown) notification.close();
}

function answers(actions) {
  const tokens = {};
  for (const each of actions || []) tokens[each.action] = each.token;
  return tokens;
}

async function received(data) {
  const acked = acknowledge(data.ack);
  if (data.kind === "closed") {
    await closeTagged(data.tag);
  } else {
    await self.registration.showNotification(data.title || "askserver", {
      body: data.body || "",
      tag: data.tag,
      renotify: data.kind === "ask",
      icon: "/static/ask_mcp/icons/icon-192.png",
      data: { url: data.url || "/", answerUrl: data.answer_url, answers: answers(data.actions) },
      actions: (data.actions || []).slice(0, Notification.maxActions || 2)
        .map(({ action, title }) => ({ action, title })),
    });
  }
  await acked;
}

self.addEventListener("push", (event) => {
  let data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch (error) {
    data = { title: "askserver", body: "A question is waiting in your inbox." };
  }
  event.waitUntil(received(data));
});

async function open(url) {
  const target = new URL(url, self.location.origin).href;
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  for (const client of windows) {
    if (client.url === target && "focus" in client) return client.focus();
  }
  return self.clients.openWindow(target);
}

// An answer button: POST its token (never a GET, never in a URL); the server answers the ask as
// the person the token was made for, or says who answered first. The outcome replaces the
// notification (same tag).
async function answer(notification, token, url) {
  let said = "Not sent; open the inbox to answer.";
  try {
    const response = await fetch(url, {
      method: "POST",
      credentials: "omit",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ token }),
    });
    said = (await response.json()).said || said;
  } catch (error) {
    // offline: the fallback words stay
  }
  await self.registration.showNotification(said, {
    tag: notification.tag,
    icon: "/static/ask_mcp/icons/icon-192.png",
    data: { url: notification.data.url },
  });
}

self.addEventListener("notificationclick", (event) => {
  const notification = event.notification;
  notification.close();
  const data = notification.data || {};
  const token = event.action && data.answers ? data.answers[event.action] : undefined;
  if (token && data.answerUrl) {
    event.waitUntil(answer(notification, token, data.answerUrl));
    return;
  }
  event.waitUntil(open(data.url || "/"));
});
