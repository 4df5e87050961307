// The inbox's small behaviours: the pending count in the tab title, opt-in notifications for
// new questions, the live-status mark, and the browser's UTC offset for date-time answers.
(() => {
  "use strict";
  const STORE = "askmcp.notify";
  const baseTitle = document.title.replace(/^\(\d+\) /, "");

  const cards = () => Array.from(document.querySelectorAll("#ask-list .ask-card"));
  let known = new Set();

  function recount() {
    const list = document.getElementById("ask-list");
    if (!list) return;
    const now = cards();
    document.title = now.length ? `(${now.length}) ${baseTitle}` : baseTitle;
    const badge = document.getElementById("ask-count");
    if (badge) badge.textContent = String(now.length);
    for (const card of now) {
      if (!known.has(card.dataset.ask)) notify(card);
    }
    known = new Set(now.map((card) => card.dataset.ask));
  }

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

  document.addEventListener("DOMContentLoaded", () => {
    known = new Set(cards().map((card) => card.dataset.ask));
    recount();
    setUpToggle();
  });
  document.addEventListener("htmx:wsAfterMessage", recount);
  document.addEventListener("htmx:afterSwap", recount);
  document.addEventListener("htmx:wsClose", () => {
    const mark = document.getElementById("live-status");
    if (mark) { mark.textContent = "reconnecting…"; mark.classList.remove("on"); }
  });
  // The server could not be reached (down, restarting): say so at the form, and leave every
  // input as typed, so the answer can be sent again as it is once the server is back.
  document.addEventListener("htmx:sendError", (event) => {
    const form = event.detail.elt.closest("form");
    if (!form) return;
    let note = form.querySelector(".send-failed");
    if (!note) {
      note = document.createElement("p");
      note.className = "outcome failed send-failed";
      note.setAttribute("role", "alert");
      form.prepend(note);
    }
    note.textContent = "Could not reach the server: your answer was not sent. What you typed " +
      "is kept here; send it again when the server is back.";
  });
  document.addEventListener("htmx:beforeRequest", (event) => {
    const note = event.detail.elt.closest("form")?.querySelector(".send-failed");
    if (note) note.remove();
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
