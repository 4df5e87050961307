// Times in the reader's own clock: <time class="local"> in local time to the second, <time
// class="ago"> as "3 minutes ago" kept current, and .countdown[data-expires] as the time left.
// The inbox and the admin both load this file; the server's text stays when JavaScript is off.
(() => {
  "use strict";
  const TICK_MS = 1000; // countdowns move by the second: a minute's warning must be exact
  const AGO_EVERY = 15; // relative times are redrawn every 15 ticks: they read in minutes
  const WARN_SECONDS = 60; // the "a card warns a minute before its ask expires"
  const local = new Intl.DateTimeFormat(undefined, {
    year: "numeric", month: "short", day: "numeric",
    hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short",
  });
  const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });

  function ago(seconds) {
    const steps = [[60, "second"], [60, "minute"], [24, "hour"], [7, "day"], [Infinity, "week"]];
    let value = -seconds;
    for (const [size, unit] of steps) {
      if (Math.abs(value) < size) return relative.format(Math.round(value), unit);
      value /= size;
    }
    return "";
  }

  function left(seconds) {
    if (seconds <= 0) return "expired";
    const m = Math.floor(seconds / 60), s = Math.floor(seconds % 60);
    if (m >= 60) return `expires in ${Math.floor(m / 60)} h ${m % 60} min`;
    if (m >= 5) return `expires in ${m} min`;
    return m ? `expires in ${m} min ${s} s` : `expires in ${s} s`;
  }

  function localise(root) {
    for (const el of root.querySelectorAll("time.local:not([data-localised])")) {
      const at = new Date(el.getAttribute("datetime"));
      if (isNaN(at)) continue;
      el.title = el.textContent.trim(); // the server's own (UTC) rendering, on hover
      el.textContent = local.format(at);
      el.dataset.localised = "";
    }
  }

  let ticks = 0;
  function tick() {
    const now = Date.now();
    if (ticks++ % AGO_EVERY === 0) {
      for (const el of document.querySelectorAll("time.ago")) {
        const at = new Date(el.getAttribute("datetime"));
        if (!isNaN(at)) el.textContent = ago((now - at) / 1000);
      }
    }
    for (const el of document.querySelectorAll(".countdown[data-expires]")) {
      const seconds = (new Date(el.dataset.expires) - now) / 1000;
      if (isNaN(seconds)) continue;
      el.textContent = left(seconds);
      const soon = seconds > 0 && seconds <= WARN_SECONDS;
      el.classList.toggle("soon", soon);
      if (soon && !el.dataset.warned) {
        el.dataset.warned = "";
        el.dispatchEvent(new CustomEvent("askmcp:expiring", { bubbles: true }));
      }
    }
    localise(document);
  }

  window.askmcpTimes = { localise, tick };
  document.addEventListener("DOMContentLoaded", () => { tick(); setInterval(tick, TICK_MS); });
})();
