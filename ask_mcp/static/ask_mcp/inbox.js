// The inbox's behaviours. Nothing a person typed is ever lost: drafts are kept in session
// storage, cards pushed live are merged (a card on screen is never redrawn), an ask that ends
// greys its form and says why, and a failed send keeps the values and offers a retry. Also:
// the pending count, announcements for screen readers, focus on outcomes, polling when
// WebSockets are blocked, opt-in notifications, the UTC offset of date-time answers.
(() => {
  "use strict";
  const STORE = "askmcp.notify";
  const DRAFT = "askmcp.draft.";
  const FALLBACK_MS = 4000; // no socket after 4 s (a proxy refusing upgrades fails in <1 s)
  const POLL_MS = 5000; // polling every 5 s: a card appears within 5 s, one request per 5 s
  const baseTitle = document.title.replace(/^\(\d+\) /, "");
  const $ = (selector, root = document) => root.querySelector(selector);
  const $$ = (selector, root = document) => Array.from(root.querySelectorAll(selector));

  const list = () => document.getElementById("ask-list");
  const cards = () => $$("#ask-list > .ask-card:not(.ended)");
  let known = new Set();

  // ------------------------------------------------------------------ announcements and count

  function announce(text) {
    const region = document.getElementById("announcer");
    if (!region) return;
    region.textContent = "";
    setTimeout(() => { region.textContent = text; }, 50); // a change, so it is read again
  }

  // Waiting asks the page does not draw (past INBOX_LIMIT): the server's total less the cards it
  // sent, so the badge, the title and the note count every waiting ask, not the cards drawn.
  let undrawn = 0;

  function readUndrawn(total) {
    undrawn = Math.max(0, (Number(total) || 0) - cards().length);
  }

  function recount() {
    if (!list()) return;
    const now = cards();
    const waiting = now.length + undrawn;
    document.title = waiting ? `(${waiting}) ${baseTitle}` : baseTitle;
    const badge = document.getElementById("ask-count");
    if (badge) badge.textContent = String(waiting);
    const note = document.getElementById("more-note");
    if (note) {
      note.hidden = !undrawn;
      $(".shown", note).textContent = String(now.length);
      $(".total", note).textContent = String(waiting);
    }
    for (const card of now) {
      if (!known.has(card.dataset.ask)) notify(card);
    }
    known = new Set(now.map((card) => card.dataset.ask));
  }

  // ------------------------------------------------------------------ drafts

  function controls(form) {
    return Array.from(form.elements).filter((el) =>
      el.name && el.name.startsWith("f:") && el.type !== "hidden");
  }

  function dirty(form) {
    for (const el of controls(form)) {
      if (el.type === "checkbox" || el.type === "radio") {
        if (el.checked !== el.defaultChecked) return true;
      } else if (el.tagName === "SELECT") {
        if (Array.from(el.options).some((o) => o.selected !== o.defaultSelected)) return true;
      } else if (el.value !== el.defaultValue) {
        return true;
      }
    }
    return false;
  }

  function saveDraft(form) {
    const values = {};
    for (const el of controls(form)) {
      values[el.name] ??= [];
      if (el.type === "checkbox" || el.type === "radio") {
        if (el.checked) values[el.name].push(el.value);
      } else if (el.tagName === "SELECT") {
        values[el.name].push(...Array.from(el.selectedOptions, (o) => o.value));
      } else {
        values[el.name].push(el.value);
      }
    }
    try { sessionStorage.setItem(DRAFT + form.dataset.ask, JSON.stringify(values)); } catch { /* full */ }
  }

  function restoreDraft(form) {
    let values;
    try { values = JSON.parse(sessionStorage.getItem(DRAFT + form.dataset.ask) || "null"); } catch { values = null; }
    if (!values) return;
    for (const el of controls(form)) {
      const kept = values[el.name];
      if (!kept) continue;
      if (el.type === "checkbox" || el.type === "radio") el.checked = kept.includes(el.value);
      else if (el.tagName === "SELECT") for (const o of el.options) o.selected = kept.includes(o.value);
      else el.value = kept[0] ?? "";
    }
    if (dirty(form)) form.closest("details")?.setAttribute("open", "");
  }

  function forget(hex) {
    try { sessionStorage.removeItem(DRAFT + hex); } catch { /* unavailable */ }
  }

  // ------------------------------------------------------------------ validation as people mean it

  function refreshValidity(form) {
    for (const el of $$("[data-not-blank]", form)) {
      el.setCustomValidity(el.value !== "" && el.value.trim() === "" ? "Type more than spaces." : "");
    }
    for (const group of $$("fieldset[data-required-group]", form)) {
      const boxes = $$("input[type=checkbox]", group);
      const none = !boxes.some((box) => box.checked);
      boxes.forEach((box, index) => box.setCustomValidity(none && index === 0 ? "Choose at least one." : ""));
    }
  }

  function prepare(root) {
    for (const form of $$("form.ask-form", root)) {
      restoreDraft(form);
      refreshValidity(form);
    }
    window.askmcpTimes?.localise(root);
  }

  // ------------------------------------------------------------------ cards pushed live

  function insertSorted(card) {
    const expires = new Date(card.dataset.expires).getTime();
    const later = cards().find((other) => new Date(other.dataset.expires).getTime() > expires);
    list().insertBefore(card, later || null);
  }

  function merge() {
    const incoming = document.getElementById("ask-incoming");
    if (!incoming || !list()) return;
    const mark = $(".sync-mark", incoming);
    const arrived = $$(":scope > .ask-card", incoming);
    for (const card of arrived) {
      const existing = document.getElementById(card.id);
      if (existing && existing !== card) { card.remove(); continue; } // keep the one being read
      insertSorted(card);
      card.dataset.prepared = "";
      prepare(card);
      if (!mark) announce(`New question: ${card.dataset.title}`);
    }
    if (mark) {
      const ids = new Set(arrived.map((card) => card.dataset.ask));
      const missing = cards().filter((card) => !ids.has(card.dataset.ask));
      readUndrawn(mark.dataset.total);
      if (missing.length) poll(missing.map((card) => card.dataset.ask)); // they ended meanwhile
    }
    incoming.textContent = "";
    handleEnded();
    recount();
  }

  // ------------------------------------------------------------------ asks that end

  function handleEnded() {
    for (const status of $$(".ask-status[data-ended]:not([data-handled])")) {
      status.dataset.handled = "";
      const holder = status.closest(".ask-card, .ask-page");
      const form = holder && $("form.ask-form", holder);
      if (!holder || !form) continue;
      const title = holder.dataset.title || $(".ask-title", holder)?.textContent || "A question";
      const reason = status.textContent.trim();
      const busy = form.classList.contains("htmx-request") || form.dataset.sending;
      if (!dirty(form) && !busy) {
        announce(`${title}: ${reason}`);
        if (holder.classList.contains("ask-card")) holder.remove();
        else form.hidden = true;
        forget(form.dataset.ask);
        continue;
      }
      // Someone was typing: keep the card and the draft, greyed, and say why it ended.
      holder.classList.add("ended");
      for (const el of controls(form)) {
        if (el.type === "checkbox" || el.type === "radio" || el.tagName === "SELECT") el.disabled = true;
        else el.readOnly = true;
      }
      for (const button of $$("button[type=submit]", form)) button.disabled = true;
      const note = document.createElement("p");
      note.className = "ended-note";
      note.textContent = "This question no longer waits. What you typed is kept below to copy.";
      status.append(note);
      if (holder.classList.contains("ask-card")) {
        const dismiss = document.createElement("button");
        dismiss.type = "button";
        dismiss.className = "dismiss";
        dismiss.dataset.dismiss = "";
        dismiss.textContent = "Dismiss";
        status.append(dismiss);
      }
      announce(`${title}: ${reason} Your draft is kept.`);
    }
    recount();
  }

  // ------------------------------------------------------------------ outcomes of a send

  function afterSwap(target) {
    // An outerHTML swap leaves `target` detached: look for what the swap brought in.
    const outcome = $(".outcome-card:not([data-seen])");
    if (outcome) {
      outcome.dataset.seen = "";
      for (const old of $$(".outcome-card")) if (old !== outcome) old.remove(); // no pile-up
      forget(outcome.dataset.ask);
      outcome.focus();
      return;
    }
    for (const card of $$(".ask-card:not([data-prepared])")) {
      card.dataset.prepared = "";
      if (!card.closest("#ask-list")) continue;
      prepare(card); // a card re-shown by the server: invalid, or a send that failed
      const invalid = $("[aria-invalid=true]", card);
      if (invalid) { invalid.focus(); return; }
      $(".ask-status .failed", card) && $("button[value=accept]", card)?.focus();
    }
    const page = $(".ask-page");
    if (page && target && page.contains(target)) {
      const invalid = $("[aria-invalid=true]", page);
      if (invalid) { invalid.focus(); return; }
      const pageOutcome = $(".page-outcome", page);
      if (pageOutcome && $(".outcome", pageOutcome)) {
        if ($(".outcome.sent, .outcome.late", pageOutcome)) forget(page.dataset.ask);
        pageOutcome.focus();
      }
    }
  }

  function sendFailed(form, text) {
    delete form.dataset.sending;
    const holder = form.closest(".ask-card, .ask-page");
    const status = holder && $(".ask-status", holder);
    if (!status) return;
    status.replaceChildren();
    const message = document.createElement("p");
    message.className = "failed";
    message.setAttribute("role", "alert");
    message.textContent = `${text} Your answer is kept here. `;
    const retry = document.createElement("button");
    retry.type = "button";
    retry.className = "retry";
    retry.textContent = "Try again";
    retry.addEventListener("click", () => {
      status.replaceChildren();
      // A click, not requestSubmit(): htmx reads the action from the button that was clicked.
      (form.askmcpSubmitter || $("button[value=accept]", form))?.click();
    });
    message.append(retry);
    status.append(message);
    retry.focus();
  }

  // ------------------------------------------------------------------ when the socket cannot connect

  let opened = false;
  let pollTimer = null;
  const openSockets = new Set(); // a reconnect's old socket may close after the new one opened

  function setLive(text, on) {
    const mark = document.getElementById("live-status");
    if (mark) { mark.textContent = text; mark.classList.toggle("on", on); }
  }

  function startPolling() {
    if (pollTimer || opened || !document.querySelector("[data-poll-url]")) return;
    setLive("checking every 5 s", false);
    const note = document.getElementById("connection-note");
    if (note) note.textContent = "Live updates are blocked (the WebSocket could not connect), so this page checks for changes every 5 seconds.";
    // An ask's page asks only how its own ask ended; the inbox asks for its whole list.
    const page = document.querySelector(".ask-page[data-ask]");
    const each = () => poll(page ? [page.dataset.ask] : []);
    each();
    pollTimer = setInterval(each, POLL_MS);
  }

  function stopPolling() {
    if (pollTimer) clearInterval(pollTimer);
    pollTimer = null;
    const note = document.getElementById("connection-note");
    if (note) note.textContent = "";
  }

  async function poll(ask) {
    const source = document.querySelector("[data-poll-url]");
    if (!source) return;
    const ids = ask.length ? ask : cards().map((card) => card.dataset.ask);
    const url = new URL(source.dataset.pollUrl, location.href);
    url.searchParams.set("known", ids.join(","));
    if (ask.length) url.searchParams.set("list", "0"); // only how these ended
    let html;
    try {
      const response = await fetch(url, { headers: { "HX-Request": "true" }, credentials: "same-origin" });
      if (!response.ok) throw new Error(String(response.status));
      html = await response.text();
    } catch {
      if (pollTimer) setLive("server unreachable: retrying", false);
      return;
    }
    if (pollTimer) setLive("checking every 5 s", false);
    const parsed = new DOMParser().parseFromString(`<body>${html}</body>`, "text/html");
    const arrived = parsed.getElementById("ask-incoming");
    const incoming = document.getElementById("ask-incoming");
    if (arrived && incoming && !ask.length) {
      incoming.replaceChildren(...Array.from(arrived.childNodes, (node) => document.importNode(node, true)));
      htmx.process(incoming);
    }
    for (const status of $$(".ask-status[data-ended]", parsed)) {
      const here = document.getElementById(status.id);
      if (here && !here.dataset.ended) {
        status.removeAttribute("hx-swap-oob");
        here.replaceWith(document.importNode(status, true));
      }
    }
    handleEnded();
    if (arrived && !ask.length) merge();
  }

  // ------------------------------------------------------------------ who is answering
  // An unfolded card (or an ask's own page, open to answer) is said over the socket, so the
  // others who may answer it see "alice is answering" on their cards. Said again every 20 s while it stays open: the server forgets it 45 s
  // after the last (ask_mcp.web.presence), and at once when it is folded or this page leaves.

  const PRESENCE_MS = 20000;
  let socket = null;

  function sayPresence(hex, open) {
    if (socket && hex) socket.send(JSON.stringify({ presence: open ? "open" : "closed", ask: hex }));
  }

  function openCards() {
    const page = $(".ask-page[data-ask]");
    if (page) return $("form.ask-form:not([hidden])", page) ? [page.dataset.ask] : []; // its own page
    return cards().filter((card) => $("details.fold", card)?.open).map((card) => card.dataset.ask);
  }

  // ------------------------------------------------------------------ notifications (opt-in)

  function notifying() {
    return "Notification" in window && Notification.permission === "granted" &&
      localStorage.getItem(STORE) === "on";
  }

  function notify(card) {
    if (!notifying() || document.hasFocus()) return;
    const note = new Notification("A question is waiting for you", {
      body: card.dataset.title || "", tag: card.dataset.ask,
    });
    note.onclick = () => { window.focus(); card.scrollIntoView(); };
  }

  function setUpToggle() {
    const toggle = document.getElementById("notify-toggle");
    if (!toggle || !("Notification" in window)) return;
    const label = () => {
      toggle.textContent = notifying() ? "Stop notifications" : "Notify me of new questions";
    };
    toggle.hidden = false;
    label();
    toggle.addEventListener("click", async () => {
      if (notifying()) {
        localStorage.setItem(STORE, "off");
      } else if (await Notification.requestPermission() === "granted") {
        localStorage.setItem(STORE, "on");
      }
      label();
    });
  }

  // ------------------------------------------------------------------ wiring

  document.addEventListener("DOMContentLoaded", () => {
    known = new Set(cards().map((card) => card.dataset.ask));
    readUndrawn(document.getElementById("more-note")?.querySelector(".total")?.textContent);
    for (const card of $$(".ask-card")) card.dataset.prepared = "";
    prepare(document);
    recount();
    setUpToggle();
    if (document.querySelector("[ws-connect]")) setTimeout(() => { if (!opened) startPolling(); }, FALLBACK_MS);
  });
  document.addEventListener("input", (event) => {
    const form = event.target.closest?.("form.ask-form");
    if (form) { saveDraft(form); refreshValidity(form); }
  });
  document.addEventListener("change", (event) => {
    const form = event.target.closest?.("form.ask-form");
    if (form) { saveDraft(form); refreshValidity(form); }
  });
  document.addEventListener("click", (event) => {
    const dismiss = event.target.closest?.("[data-dismiss]");
    if (!dismiss) return;
    const holder = dismiss.closest(".outcome-card, .ask-card");
    if (!holder) return;
    forget(holder.dataset.ask);
    const next = holder.nextElementSibling || holder.previousElementSibling;
    holder.remove();
    recount();
    (next?.querySelector("summary, button") || document.querySelector("h1"))?.focus();
  });
  document.addEventListener("askmcp:expiring", (event) => {
    const card = event.target.closest(".ask-card, .ask-page");
    if (!card || card.classList.contains("ended")) return;
    card.classList.add("expiring");
    announce(`${card.dataset.title || "This question"} expires in under a minute.`);
  });
  document.addEventListener("htmx:wsOpen", (event) => {
    openSockets.add(event.detail.event?.target);
    opened = true;
    stopPolling();
    socket = event.detail.socketWrapper;
    for (const hex of openCards()) sayPresence(hex, true); // a new socket knows nothing yet
  });
  document.addEventListener("toggle", (event) => {
    const details = event.target;
    if (!(details instanceof HTMLDetailsElement) || !details.matches(".fold")) return;
    const card = details.closest("#ask-list > .ask-card:not(.ended)");
    if (card) sayPresence(card.dataset.ask, details.open);
  }, true); // toggle does not bubble
  setInterval(() => { for (const hex of openCards()) sayPresence(hex, true); }, PRESENCE_MS);
  document.addEventListener("htmx:wsAfterMessage", merge);
  document.addEventListener("htmx:wsAfterMessage", handleEnded);
  document.addEventListener("htmx:wsClose", (event) => {
    openSockets.delete(event.detail.event?.target);
    if (openSockets.size) return;
    if (opened) setLive("reconnecting…", false);
    opened = false;
    setTimeout(() => { if (!opened) startPolling(); }, FALLBACK_MS);
  });
  document.addEventListener("submit", (event) => {
    if (event.target.matches?.("form.ask-form") && event.submitter) event.target.askmcpSubmitter = event.submitter;
  }, true);
  document.addEventListener("htmx:beforeRequest", (event) => {
    const form = event.detail.elt.closest?.("form.ask-form");
    if (form) form.dataset.sending = "1";
  });
  document.addEventListener("htmx:afterRequest", (event) => {
    const form = event.detail.elt.closest?.("form.ask-form");
    if (form) delete form.dataset.sending;
  });
  document.addEventListener("htmx:afterSwap", (event) => { afterSwap(event.detail.target); recount(); });
  document.addEventListener("htmx:sendError", (event) => {
    const form = event.detail.elt.closest?.("form.ask-form");
    if (form) sendFailed(form, "Not sent: the server could not be reached.");
  });
  document.addEventListener("htmx:responseError", (event) => {
    const form = event.detail.elt.closest?.("form.ask-form");
    if (form) sendFailed(form, `Not sent: the server answered ${event.detail.xhr.status}.`);
  });
  // datetime-local inputs carry no zone: send the browser's offset at that date and time,
  // in minutes east of UTC, as "tz:<field name>".
  document.addEventListener("htmx:configRequest", (event) => {
    const form = event.detail.elt.closest("form");
    if (!form) return;
    for (const input of form.querySelectorAll("input[type=datetime-local]")) {
      if (!input.value) continue;
      const offset = -new Date(input.value).getTimezoneOffset();
      event.detail.parameters["tz:" + input.name.slice(2)] = String(offset);
    }
  });
})();
