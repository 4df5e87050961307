// Decisions held for an undo window, and fields kept clear of the sticky send bar (issue 32).
// Apart from inbox.js on purpose: it only reacts to what the server draws (held cards, the
// ended status slot) and to focus, and never redraws a card.
//
// - A held card (a refusal or a one-tap answer, kept UNDO_SECONDS) counts down to when the
//   agent is told, puts focus on Undo, and when its ask ends says whether that was this
//   person's decision or someone else's answer that came first (then theirs was not sent).
// - After Undo, focus goes to the question's card again.
// - An ask's page stops counting down once its ask is answered or ended.
// - A focused field (by Tab, a tap, the browser's own validation or the server's) is scrolled
//   so that neither it nor its message sits under the sticky send bar (WCAG 2.4.11).
(() => {
  "use strict";
  const TICK_MS = 1000; // the countdown shows whole seconds
  const CLEARANCE = 8; // px between a field's message and the sticky bar
  const $$ = (selector, root = document) => Array.from(root.querySelectorAll(selector));

  // ------------------------------------------------------------------ held decisions

  function tick() {
    const now = Date.now();
    for (const span of $$(".undo-countdown[data-due]")) {
      const left = Math.ceil((new Date(span.dataset.due).getTime() - now) / 1000);
      span.textContent = left > 0 ? `in ${left} s` : "now";
    }
  }

  function heldEnded() {
    for (const status of $$(".ask-card.held .ask-status[data-ended]:not([data-held-done])")) {
      status.dataset.heldDone = "";
      const card = status.closest(".ask-card");
      const line = card.querySelector(".held-line");
      card.querySelector("form.undo")?.remove();
      card.classList.add("ended");
      if (line) {
        if ("mine" in status.dataset) {
          line.textContent = "Sent: the agent has been told.";
        } else {
          line.textContent = "Your decision was not sent: this question was answered first elsewhere.";
          line.classList.add("gone-first");
        }
      }
      const dismiss = document.createElement("button");
      dismiss.type = "button";
      dismiss.className = "dismiss";
      dismiss.dataset.dismiss = "";
      dismiss.textContent = "Dismiss";
      card.querySelector(".held-body")?.append(dismiss);
    }
  }

  let undone = null; // the card whose Undo was just sent

  document.addEventListener("htmx:beforeRequest", (event) => {
    const form = event.detail.elt.closest?.("form.undo");
    undone = form ? form.closest(".ask-card")?.id : null;
  });

  // htmx:load fires on what a swap brought in (an outerHTML swap's old target is detached).
  document.addEventListener("htmx:load", (event) => {
    const card = event.detail.elt;
    if (!card.matches?.(".ask-card") || !card.closest("#ask-list")) return;
    tick();
    if (card.matches(".held") && !("heldSeen" in card.dataset)) {
      card.dataset.heldSeen = "";
      if (!undone) card.querySelector("form.undo button")?.focus();
    } else if (undone === card.id) {
      card.querySelector("summary")?.focus();
    }
    if (undone === card.id) undone = null;
    heldEnded();
  });
  document.addEventListener("htmx:wsAfterMessage", heldEnded);

  // ------------------------------------------------------------------ an ended ask stops counting

  // An ask's page whose ask was answered (here or elsewhere) or ended no longer counts down
  // to an expiry that will not come: its "waits until" line goes.
  function stopCountdowns() {
    for (const page of $$(".ask-page")) {
      if (!page.querySelector(".ask-closed, .ask-status[data-ended], .page-outcome .outcome.sent")) continue;
      for (const el of $$(".countdown[data-expires]", page)) {
        delete el.dataset.expires;
        el.textContent = "";
        el.closest(".ask-meta > div")?.remove();
      }
    }
  }

  document.addEventListener("htmx:afterSettle", stopCountdowns);
  document.addEventListener("htmx:wsAfterMessage", stopCountdowns);

  // ------------------------------------------------------------------ clear of the sticky bar

  function stickyCover(form) {
    const bar = form.querySelector(".actions");
    if (!bar || getComputedStyle(bar).position !== "sticky") return null;
    return bar.getBoundingClientRect();
  }

  function reveal(control) {
    const form = control.closest("form.ask-form");
    const field = control.closest(".field");
    if (!form || !field || form.querySelector(".actions")?.contains(control)) return;
    const bar = stickyCover(form);
    if (!bar) return;
    const bottom = field.getBoundingClientRect().bottom;
    if (bottom + CLEARANCE > bar.top) window.scrollBy(0, bottom + CLEARANCE - bar.top);
  }

  // After the browser's own scrolling for the focus has happened.
  document.addEventListener("focusin", (event) => {
    const control = event.target;
    if (control.closest?.("form.ask-form .field")) requestAnimationFrame(() => reveal(control));
  });

  document.addEventListener("DOMContentLoaded", () => {
    tick();
    heldEnded();
    stopCountdowns();
    setInterval(() => { tick(); heldEnded(); stopCountdowns(); }, TICK_MS);
  });
})();
