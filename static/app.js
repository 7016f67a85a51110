// osFoundry page behaviour that htmx attributes cannot express without eval
// (the CSP forbids it): pause polls while the tab is hidden, keep Team mail
// cursors and rows consistent, dismiss inline composers, show htmx errors,
// and keep relative times current.
(function () {
  "use strict";

  // The newest note id shown on the page.
  function newestNoteId() {
    var max = 0;
    document.querySelectorAll("#mail-list > [data-note-id]").forEach(function (el) {
      var id = parseInt(el.getAttribute("data-note-id"), 10);
      if (id > max) max = id;
    });
    return max;
  }

  // Polls ([data-poll]) do not run while the tab is hidden.
  document.addEventListener("htmx:beforeRequest", function (e) {
    if (document.hidden && e.detail.elt.hasAttribute("data-poll")) e.preventDefault();
  });

  // Shown again: catch up at once instead of waiting for the next tick.
  document.addEventListener("visibilitychange", function () {
    if (document.hidden || !window.htmx) return;
    document.querySelectorAll("[data-poll]").forEach(function (el) {
      window.htmx.trigger(el, "pollnow");
    });
  });

  // Mail requests carry the newest id on the page, so the server sends only
  // what is missing: in the query of the poll, in the form of a post. The
  // poll also carries the newest read receipt the page has heard of.
  document.addEventListener("htmx:configRequest", function (e) {
    var elt = e.detail.elt;
    if (!elt.hasAttribute("data-mail-after")) return;
    var after = String(newestNoteId());
    if (e.detail.verb === "get") {
      var url = new URL(e.detail.path, location.href);
      if (Number(url.searchParams.get("after") || 0) < Number(after)) url.searchParams.set("after", after);
      var receipts = document.getElementById("receipts-cursor");
      if (receipts) url.searchParams.set("receipts", receipts.getAttribute("data-receipts-after") || "0");
      e.detail.path = url.pathname + url.search;
    } else if (e.detail.parameters.set) {
      e.detail.parameters.set("after", after);
    } else {
      e.detail.parameters.after = after;
    }
  });

  // A poll and a post answered at the same time may bring the same note
  // twice: keep the copy that was there first (the lower one).
  function dedupe() {
    var list = document.getElementById("mail-list");
    if (!list) return;
    var seen = {};
    var rows = list.querySelectorAll(":scope > [data-note-id]");
    for (var i = rows.length - 1; i >= 0; i--) {
      var id = rows[i].getAttribute("data-note-id");
      if (seen[id]) rows[i].remove();
      else seen[id] = true;
    }
  }
  document.addEventListener("htmx:afterSwap", dedupe);
  document.addEventListener("htmx:oobAfterSwap", dedupe);

  // Cancel links in inline composers remove the composer.
  document.addEventListener("click", function (e) {
    var a = e.target.closest && e.target.closest("[data-dismiss]");
    if (!a) return;
    var target = document.querySelector(a.getAttribute("data-dismiss"));
    if (!target) return;
    e.preventDefault();
    var row = target.closest("[data-note-id]");
    target.remove();
    var reply = row && row.querySelector("[data-testid=reply-button]");
    if (reply) reply.focus();
  });

  // Focus the first empty field of a composer that htmx just opened.
  document.addEventListener("htmx:afterSwap", function (e) {
    var t = e.detail.target;
    if (t && t.classList && t.classList.contains("reply-slot")) {
      var body = t.querySelector("textarea");
      if (body) body.focus();
    }
  });

  // Failed htmx requests say why, in the page's alert area, until one succeeds.
  document.addEventListener("htmx:responseError", function (e) {
    var box = document.getElementById("htmx-error");
    if (!box) return;
    var msg = "Something went wrong (" + e.detail.xhr.status + ").";
    try {
      var doc = new DOMParser().parseFromString(e.detail.xhr.responseText, "text/html");
      var alert = doc.querySelector("[role=alert], h1");
      if (alert && alert.textContent.trim()) msg = alert.textContent.trim();
    } catch (_) { /* keep the generic message */ }
    box.textContent = msg;
    box.hidden = false;
  });
  document.addEventListener("htmx:afterRequest", function (e) {
    var box = document.getElementById("htmx-error");
    if (box && e.detail.successful && !box.hidden) box.hidden = true;
  });

  // Relative times ("3 min ago") stay true while the page is open.
  function ago(ms) {
    var s = ms / 1000;
    if (s < 45) return "just now";
    if (s < 3600) return Math.round(s / 60) + " min ago";
    if (s < 86400) return Math.floor(s / 3600) + " h ago";
    return Math.floor(s / 86400) + " d ago";
  }
  setInterval(function () {
    if (document.hidden) return;
    var now = Date.now();
    document.querySelectorAll("time[data-relative]").forEach(function (t) {
      var at = Date.parse(t.getAttribute("datetime"));
      if (!isNaN(at)) t.textContent = ago(now - at);
    });
  }, 30000);
})();
