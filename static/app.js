// osFoundry page behaviour that htmx attributes cannot express without eval
// (the CSP forbids it): follow the live stream's state and poll only while it
// is down, keep Team mail rows in order by note id whichever way they came
// (stream, replay, post answer, poll) and a thread's to its own, announce new
// notes, carry the unread count in the tab title, desktop notifications, live
// unread counts on the lists and the navigation's inbox, the inbox's live
// rows, dismiss inline composers, show htmx errors, copy buttons, times
// relative under a day then absolute in the browser's zone with a separator
// between days, and the keyboard shortcuts.
(function () {
  "use strict";

  function rowsOf(list) {
    return Array.prototype.slice.call(list.querySelectorAll(":scope > [data-note-id]"));
  }

  function noteId(el) {
    return parseInt(el.getAttribute("data-note-id"), 10) || 0;
  }

  // The newest note id shown on the page.
  function newestNoteId() {
    var max = 0;
    document.querySelectorAll("#mail-list > [data-note-id]").forEach(function (el) {
      max = Math.max(max, noteId(el));
    });
    return max;
  }

  // ---- The tab title carries the unread count: "(3) Fix rounding — osFoundry".

  var baseTitle = document.title.replace(/^\(\d+\+?\) /, "");
  function setTitleCount(n) {
    document.title = (n > 0 ? "(" + unreadShown(n) + ") " : "") + baseTitle;
  }
  // An unread count as the pages word it: past the store's cap, "99+".
  function unreadShown(n) {
    return n >= 100 ? "99+" : String(n);
  }

  // Signed out (in another tab, or on another replica): the page follows to
  // sign in, unless it is already leaving (this tab's own sign-out form).
  var leaving = false;
  window.addEventListener("beforeunload", function () { leaving = true; });
  function signedOut() {
    if (!leaving) location.reload();
  }

  // ---- The live stream (session page) and the polls that stand in for it.

  var streamEl = document.querySelector("[data-stream]");
  var streamUp = false;

  function setStreamUp(up) {
    streamUp = up;
    if (streamEl) streamEl.setAttribute("data-stream-state", up ? "up" : "down");
  }
  if (streamEl) setStreamUp(false);

  function pollNow() {
    if (document.hidden || !window.htmx) return;
    document.querySelectorAll("[data-poll]").forEach(function (el) {
      window.htmx.trigger(el, "pollnow");
    });
  }

  // Polls ([data-poll]) run only while the tab is visible and the stream is
  // down: the stream brings everything they would.
  document.addEventListener("htmx:beforeRequest", function (e) {
    if (e.detail.elt.hasAttribute("data-poll") && (document.hidden || streamUp)) e.preventDefault();
  });

  var sources = typeof WeakSet === "function" ? new WeakSet() : null;
  document.addEventListener("htmx:sseOpen", function (e) {
    setStreamUp(true);
    var source = e.detail && e.detail.source;
    if (!source || !sources || sources.has(source)) return;
    sources.add(source);
    source.addEventListener("reload", function (ev) { reloadList(ev.data); });
    source.addEventListener("signout", signedOut);
    source.addEventListener("unread", function (ev) { unreadHeard(JSON.parse(ev.data), ""); });
    // Newer pages of this sign-in took this one's place (the server bounds
    // the streams one holds): stop the stream for good; the polls take over.
    source.addEventListener("replaced", function () {
      source.close();
      if (!streamUp) return;
      setStreamUp(false);
      pollNow();
    });
  });
  function streamDown(e) {
    if (!streamUp) return;
    setStreamUp(false);
    if (leaving) return; // the page is unloading: the browser closed the stream
    // Catch up at once, then every 5 s until the stream is back; not when
    // the stream closed on its signout event (the page is leaving).
    if (!(e.type === "htmx:sseClose" && e.detail && e.detail.type === "message")) pollNow();
  }
  document.addEventListener("htmx:sseError", streamDown);
  document.addEventListener("htmx:sseClose", streamDown);

  // Shown again: catch up at once instead of waiting for the next tick, and
  // what arrived while hidden has now been seen.
  document.addEventListener("visibilitychange", function () {
    if (document.hidden) return;
    pollNow();
    if (unseen > 0) {
      unseen = 0;
      setTitleCount(0);
      markRead();
    }
  });

  // Mail requests carry the newest id on the page, so the server sends only
  // what is missing: in the query of the poll, in the form of a post, and in
  // the stream's URL for the extension's reconnects (the browser's own send
  // Last-Event-ID). The poll also carries the newest read receipt the page
  // has heard of.
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
  function keepStreamCursor(newest) {
    if (!streamEl) return;
    var url = new URL(streamEl.getAttribute("sse-connect"), location.href);
    if (Number(url.searchParams.get("after") || 0) >= newest) return;
    url.searchParams.set("after", String(newest));
    streamEl.setAttribute("sse-connect", url.pathname + url.search);
  }

  // ---- Rows in order by note id, each once.

  var list = document.getElementById("mail-list");
  var placedNewest = 0;
  if (list) {
    rowsOf(list).forEach(function (el) {
      el.setAttribute("data-placed", "");
      placedNewest = Math.max(placedNewest, noteId(el));
    });
  }

  // A thread page's list (data-thread) keeps, oldest first, only the notes
  // that answer one of its own; the stream brings it all the session's.
  var thread = list && list.hasAttribute("data-thread");

  // placeRows runs after anything was swapped into the list: a row already
  // there keeps its place (and any reply being written under it), a copy is
  // dropped, and every other new row moves to its place (newest first, or
  // oldest first in a thread).
  function placeRows() {
    if (!list) return;
    var placed = {};
    var fresh = [];
    rowsOf(list).forEach(function (el) {
      var id = noteId(el);
      if (el.hasAttribute("data-placed")) placed[id] = el;
    });
    rowsOf(list).forEach(function (el) {
      if (el.hasAttribute("data-placed")) return;
      var id = noteId(el);
      if (placed[id]) {
        el.remove();
        return;
      }
      fresh.push(el);
    });
    if (fresh.length === 0) return;
    fresh.sort(function (a, b) { return noteId(a) - noteId(b); });
    var seenNewest = placedNewest;
    var kept = [];
    fresh.forEach(function (el) {
      var id = noteId(el);
      seenNewest = Math.max(seenNewest, id);
      if (thread && !placed[Number(el.getAttribute("data-in-reply-to"))]) {
        el.remove();
        return;
      }
      placed[id] = el;
      kept.push(el);
    });
    kept.forEach(function (el) {
      var id = noteId(el);
      var before = null;
      var rows = rowsOf(list);
      for (var i = 0; i < rows.length; i++) {
        if (rows[i] === el || !rows[i].hasAttribute("data-placed")) continue;
        if (thread ? noteId(rows[i]) > id : noteId(rows[i]) < id) {
          before = rows[i];
          break;
        }
      }
      if (el.nextElementSibling !== before) list.insertBefore(el, before);
      el.setAttribute("data-placed", "");
    });
    var arrived = kept.filter(function (el) { return noteId(el) > placedNewest; });
    placedNewest = seenNewest;
    keepStreamCursor(placedNewest);
    arrived.forEach(countReply);
    arrived.reverse();
    if (arrived.length) noteArrived(arrived);
    refreshTimes(list);
  }

  // A reply that arrives adds one to "N replies" of every note above it in
  // its thread that the page shows.
  function countReply(row) {
    var seen = {};
    var parent = Number(row.getAttribute("data-in-reply-to"));
    while (parent && !seen[parent]) {
      seen[parent] = true;
      var up = document.getElementById("note-" + parent);
      if (!up) return;
      var link = up.querySelector(":scope > [data-testid=note-replies]");
      if (link) {
        var n = (Number(link.getAttribute("data-replies")) || 0) + 1;
        link.setAttribute("data-replies", String(n));
        link.textContent = n === 1 ? "1 reply" : n + " replies";
        link.hidden = false;
      }
      parent = Number(up.getAttribute("data-in-reply-to"));
    }
  }
  document.addEventListener("htmx:afterSwap", function (e) {
    if (e.detail.target === list || e.target === list) placeRows();
  });
  document.addEventListener("htmx:oobAfterSwap", placeRows);

  // ---- New notes: announced, counted while hidden, marked read while seen.

  var unseen = 0;
  function text(el, testid) {
    var t = el.querySelector("[data-testid=" + testid + "]");
    return t ? t.textContent.trim() : "";
  }

  function noteArrived(rows) {
    // New to this owner: not their own (the server marks those).
    var news = rows.filter(function (el) { return el.classList.contains("unread"); });
    if (news.length === 0) return;
    var newest = news[0];
    var who = text(newest, "note-sender-name");
    var subject = text(newest, "note-subject");
    announce(news.length === 1 ? "New note from " + who + ": " + subject
      : news.length + " new notes. Newest from " + who + ": " + subject);
    if (document.hidden) {
      unseen += news.length;
      setTitleCount(unseen);
      news.forEach(function (el) {
        if (el.classList.contains("from-agent")) desktopNotify(el, text(document, "session-title"));
      });
    } else {
      markRead();
    }
  }

  var announcer = document.getElementById("mail-announce");
  function announce(msg) {
    if (!announcer) return;
    announcer.textContent = "";
    setTimeout(function () { announcer.textContent = msg; }, 50);
  }

  function csrfToken() {
    try {
      return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRF-Token"] || "";
    } catch (_) {
      return "";
    }
  }

  // The page tells the server what is on a visible screen, so that the
  // unread counts elsewhere (lists, other tabs) drop: rows from the stream
  // are not marked read by the server, since a hidden tab has not shown them.
  var readTimer = null;
  function markRead() {
    var sid = streamEl && streamEl.getAttribute("data-session-id");
    if (!sid || readTimer) return;
    readTimer = setTimeout(function () {
      readTimer = null;
      if (document.hidden) return;
      var body = new URLSearchParams({ upto: String(newestNoteId()) });
      fetch("/sessions/" + sid + "/mail/read", {
        method: "POST", credentials: "same-origin", body: body,
        headers: { "X-CSRF-Token": csrfToken() },
      }).catch(function () { /* the next one will do */ });
    }, 500);
  }

  // More notes were missed than a reconnect replays: load the newest page
  // of rows, keep what is already there, drop what fell off the page (the
  // "older" link, replaced too, reaches it).
  function reloadList(url) {
    if (!list || !window.htmx) return;
    if (thread) {
      location.reload();
      return;
    }
    fetch(url, { credentials: "same-origin", headers: { "HX-Request": "true" } })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        var tpl = document.createElement("template");
        tpl.innerHTML = html;
        var oldest = 0;
        tpl.content.querySelectorAll("[data-note-id]").forEach(function (el) {
          var id = noteId(el);
          if (!oldest || id < oldest) oldest = id;
        });
        window.htmx.swap(list, html, { swapStyle: "afterbegin" });
        if (oldest) rowsOf(list).forEach(function (el) { if (noteId(el) < oldest) el.remove(); });
      })
      .catch(function () { location.reload(); });
  }

  // ---- Desktop notifications of agents' notes while the tab is hidden:
  // opt-in, remembered per browser.

  var NOTIFY_KEY = "osfoundry.notifications";
  var toggle = document.getElementById("notify-toggle");

  function stored() {
    try { return localStorage.getItem(NOTIFY_KEY); } catch (_) { return null; }
  }
  function store(v) {
    try { localStorage.setItem(NOTIFY_KEY, v); } catch (_) { /* private mode: this page only */ }
  }
  function notifyState() {
    if (!("Notification" in window)) return "unavailable";
    if (Notification.permission === "denied") return "blocked";
    if (stored() === "on" && Notification.permission === "granted") return "on";
    return "off";
  }
  var toggleWords = {
    on: "Desktop notifications: on",
    off: "Desktop notifications: off",
    blocked: "Desktop notifications: blocked by the browser",
    unavailable: "Desktop notifications: not available in this browser",
  };
  var toggleHints = {
    on: "Agents' notes pop up while this tab is hidden. Select to turn off.",
    off: "Select to get a desktop notification when an agent's note arrives while this tab is hidden.",
    blocked: "This browser blocks notifications from this site; allow them in the site's settings, then select again.",
    unavailable: "This browser cannot show desktop notifications.",
  };
  function renderToggle() {
    if (!toggle) return;
    var state = notifyState();
    toggle.hidden = false;
    toggle.textContent = toggleWords[state];
    toggle.title = toggleHints[state];
    toggle.setAttribute("aria-pressed", state === "on" ? "true" : "false");
    toggle.setAttribute("data-state", state);
    toggle.disabled = state === "unavailable";
  }
  if (toggle) {
    renderToggle();
    toggle.addEventListener("click", function () {
      var state = notifyState();
      if (state === "on") {
        store("off");
      } else if (state === "off" && Notification.permission === "granted") {
        store("on");
      } else if (state === "off" || state === "blocked") {
        // The browser asks (or answers at once when it blocks).
        Promise.resolve(Notification.requestPermission()).then(function (p) {
          if (p === "granted") store("on");
          renderToggle();
        });
      }
      renderToggle();
    });
  }

  // A row holding an open question: its answer box, or its state line.
  var OPEN_QUESTION = "[data-testid=question-box][data-state=open], [data-testid=question-state][data-state=open]";

  // A question names its session and says what is asked; other notes name
  // their sender and subject.
  function desktopNotify(row, session) {
    if (notifyState() !== "on") return;
    var who = text(row, "note-sender-name") + " (outside assistant)";
    var title = who, body = text(row, "note-subject") || text(row, "note-body").slice(0, 200);
    if (row.querySelector(OPEN_QUESTION)) {
      title = who + " asks you in " + session;
      body = text(row, "note-body").slice(0, 200);
    }
    try {
      var n = new Notification(title, { body: body, tag: "osfoundry-note-" + noteId(row) });
      n.onclick = function () { window.focus(); n.close(); };
    } catch (_) { /* some browsers allow notifications from service workers only */ }
  }

  // ---- Approvals: a new pending one pops up while the tab is hidden
  // ("@ada-claude asks to run `npm publish` in acme/shop fix/orders-total").
  var seenApprovals = {};
  function approvalsHeard(notify) {
    document.querySelectorAll("#approvals [data-testid=approval][data-state=pending]").forEach(function (el) {
      var id = el.getAttribute("data-approval-id");
      if (seenApprovals[id]) return;
      seenApprovals[id] = true;
      if (!notify || !document.hidden || notifyState() !== "on") return;
      try {
        var n = new Notification(el.getAttribute("data-headline"), { body: "Allow or deny it in osFoundry.", tag: "osfoundry-approval-" + id });
        n.onclick = function () { window.focus(); n.close(); };
      } catch (_) { /* some browsers allow notifications from service workers only */ }
    });
  }
  approvalsHeard(false);
  document.addEventListener("htmx:afterSettle", function () { approvalsHeard(true); });

  // ---- Live unread counts: the lists' badges, the navigation's inbox count,
  // the title, and the inbox's rows. A page with a session stream hears them
  // on it; any other opens the unread stream (the first [data-unread-stream]
  // on the page says what its title counts).

  var inboxList = document.getElementById("inbox-list");
  var inboxPoller = document.getElementById("inbox-poller");
  function newestInbox() {
    var max = 0;
    if (inboxList) rowsOf(inboxList).forEach(function (el) { max = Math.max(max, noteId(el)); });
    return max;
  }

  function unreadHeard(u, scope) {
    document.querySelectorAll("[data-unread]").forEach(function (b) {
      var key = b.getAttribute("data-unread").split(":");
      if (key[0] === "inbox") {
        b.textContent = unreadShown(u.inbox || 0);
        b.setAttribute("aria-label", (u.inbox || 0) + " unread");
        b.hidden = !u.inbox;
        return;
      }
      var n = (key[0] === "project" ? u.projects : u.sessions)[key[1]] || 0;
      b.textContent = unreadShown(n) + " unread";
      b.hidden = n === 0;
    });
    if (scope === "workspace") setTitleCount(u.total);
    else if (scope === "inbox") setTitleCount(u.inbox || 0);
    else if (scope.indexOf("project:") === 0) setTitleCount(u.projects[scope.split(":")[1]] || 0);
    if (!inboxList) return;
    // Read elsewhere: the rows of a session with nothing unread are read.
    rowsOf(inboxList).forEach(function (el) {
      if (!el.classList.contains("unread") || u.sessions[el.getAttribute("data-session-id")]) return;
      el.classList.remove("unread");
      var badge = el.querySelector("[data-testid=note-unread]");
      if (badge) badge.remove();
    });
    // An inbox note newer than any the page has heard of: fetch what is
    // newer than its newest row (which this view may not show at all).
    var newest = u.inbox_newest || 0;
    if (inboxPoller && window.htmx && newest > Math.max(inboxHeard, newestInbox())) {
      inboxHeard = newest;
      window.htmx.trigger(inboxPoller, "inboxnew");
    }
  }
  var inboxHeard = 0;

  var unreadEl = document.querySelector("[data-unread-stream]");
  if (unreadEl && !streamEl && window.EventSource) {
    var scope = unreadEl.getAttribute("data-unread-scope") || "";
    var retry = 1;
    var connect = function () {
      var es = new EventSource(unreadEl.getAttribute("data-unread-stream"));
      es.addEventListener("open", function () { retry = 1; });
      es.addEventListener("unread", function (ev) { unreadHeard(JSON.parse(ev.data), scope); });
      es.addEventListener("signout", function () { es.close(); signedOut(); });
      // Newer pages took this one's place: no reconnecting.
      es.addEventListener("replaced", function () { es.close(); });
      es.addEventListener("error", function () {
        // The browser retries by itself unless the server refused the stream.
        if (es.readyState !== EventSource.CLOSED) return;
        retry = Math.min(retry * 2, 64);
        setTimeout(connect, retry * 500);
      });
    };
    connect();
  }

  // The inbox's fetch asks for what is newer than its newest row; new rows
  // are announced.
  document.addEventListener("htmx:configRequest", function (e) {
    if (!e.detail.elt.hasAttribute("data-inbox-after")) return;
    var url = new URL(e.detail.path, location.href);
    url.searchParams.set("after", String(newestInbox()));
    e.detail.path = url.pathname + url.search;
  });
  document.addEventListener("htmx:afterSwap", function (e) {
    if (!inboxList || e.detail.target !== inboxList) return;
    var fresh = rowsOf(inboxList).filter(function (el) { return !el.hasAttribute("data-placed"); });
    fresh.forEach(function (el) { el.setAttribute("data-placed", ""); });
    // A question among them: the questions waiting at the top come again,
    // and a hidden tab pops it up.
    var asked = fresh.filter(function (el) { return el.querySelector(OPEN_QUESTION); });
    var waiting = document.getElementById("inbox-questions");
    if (asked.length && waiting && window.htmx) window.htmx.trigger(waiting, "questionsnew");
    if (document.hidden) asked.forEach(function (el) { desktopNotify(el, text(el, "inbox-session")); });
    if (fresh.length) {
      var who = text(fresh[0], "note-sender-name");
      announce(fresh.length === 1 ? "New in your inbox from " + who + ": " + text(fresh[0], "note-subject")
        : fresh.length + " new in your inbox. Newest from " + who + ".");
    }
    refreshTimes(inboxList);
  });
  if (inboxList) rowsOf(inboxList).forEach(function (el) { el.setAttribute("data-placed", ""); });

  // Filters that apply as soon as they change.
  document.addEventListener("change", function (e) {
    if (e.target.hasAttribute && e.target.hasAttribute("data-autosubmit") && e.target.form) e.target.form.submit();
  });

  // ---- Composers, errors, times.

  // Cancel links in inline composers remove the composer.
  document.addEventListener("click", function (e) {
    var a = e.target.closest && e.target.closest("[data-dismiss]");
    if (!a) return;
    var target = document.querySelector(a.getAttribute("data-dismiss"));
    if (!target) return;
    e.preventDefault();
    var row = target.closest("[data-note-id]");
    target.remove();
    if (row) row.focus();
  });

  // A reply sent (button or Ctrl/⌘+Enter): the keyboard goes on from the
  // note it answered once the composer is gone or its button is busy, so
  // r and j/k work from there.
  var answering = null;
  document.addEventListener("htmx:beforeRequest", function (e) {
    var f = e.detail.elt;
    var to = f && f.classList && f.classList.contains("composer") && f.querySelector("input[name=reply_to]");
    if (to) answering = to.value;
  });
  document.addEventListener("htmx:afterRequest", function (e) {
    if (!answering) return;
    var id = answering;
    answering = null;
    if (!e.detail.successful) return;
    var a = document.activeElement;
    if (a && a !== document.body && document.body.contains(a) && !a.disabled) return;
    var row = document.getElementById("note-" + id);
    if (row) row.focus({ preventScroll: true });
  });

  // Focus the first empty field of a composer that htmx just opened.
  document.addEventListener("htmx:afterSwap", function (e) {
    var t = e.detail.target;
    if (t && t.classList && t.classList.contains("reply-slot")) {
      var body = t.querySelector("textarea");
      if (body) body.focus();
    }
  });

  // A composer that stays on the page after it sent (a thread's) starts empty.
  document.addEventListener("htmx:afterRequest", function (e) {
    var f = e.detail.elt;
    if (e.detail.successful && f && f.classList && f.classList.contains("composer") && document.body.contains(f)) {
      var body = f.querySelector("textarea");
      if (body) body.value = "";
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

  // Copy buttons ([data-copy]): shown only where a copy can be made; the
  // button says "Copied" for a moment.
  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    return new Promise(function (resolve, reject) {
      var area = document.createElement("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.style.position = "fixed";
      area.style.opacity = "0";
      document.body.appendChild(area);
      area.select();
      var ok = false;
      try { ok = document.execCommand("copy"); } catch (_) { /* not allowed */ }
      document.body.removeChild(area);
      if (ok) resolve(); else reject(new Error("copy refused"));
    });
  }
  function showCopyButtons(root) {
    if (!root || !root.querySelectorAll) return;
    root.querySelectorAll("[data-copy]").forEach(function (b) { b.hidden = false; });
  }
  showCopyButtons(document);
  // The stream's swaps carry no target: the element swapped into is the
  // event's own.
  document.addEventListener("htmx:afterSwap", function (e) { showCopyButtons(e.detail.target || e.target); });
  document.addEventListener("click", function (e) {
    var b = e.target.closest && e.target.closest("[data-copy]");
    if (!b) return;
    copyText(b.getAttribute("data-copy")).then(function () {
      b.textContent = "Copied";
      setTimeout(function () { b.textContent = "Copy"; }, 1500);
    }, function () {
      b.textContent = "Select and copy";
    });
  });

  // Times: relative under a day ("3 min ago"), then the date and time in the
  // browser's own zone, the exact moment on hover; kept true while the page
  // is open. Lists of notes get a separator between days.
  function ago(ms) {
    var s = ms / 1000;
    if (s < 45) return "just now";
    if (s < 3600) return Math.round(s / 60) + " min ago";
    return Math.floor(s / 3600) + " h ago";
  }
  var dateFmt = { day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" };
  var yearFmt = { day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit" };
  var fullFmt = { dateStyle: "full", timeStyle: "long" };
  function when(at, now) {
    var d = new Date(at);
    if (now - at < 86400000) return ago(now - at);
    return d.toLocaleString(undefined, d.getFullYear() === new Date(now).getFullYear() ? dateFmt : yearFmt);
  }
  function refreshTimes(root) {
    var now = Date.now();
    (root || document).querySelectorAll("time[data-relative]").forEach(function (t) {
      var at = Date.parse(t.getAttribute("datetime"));
      if (isNaN(at)) return;
      t.textContent = when(at, now);
      if (!t.hasAttribute("data-titled")) {
        try { t.title = new Date(at).toLocaleString(undefined, fullFmt); } catch (_) { /* keep the UTC title */ }
        t.setAttribute("data-titled", "");
      }
    });
    document.querySelectorAll("ol.mail").forEach(daySeparators);
  }

  // daySeparators puts a separator before the first note of each day (the
  // browser's day) in a list of notes, and removes those that no longer fit.
  function dayOf(el) {
    var t = el.querySelector("time[datetime]");
    if (!t) return "";
    var d = new Date(Date.parse(t.getAttribute("datetime")));
    return isNaN(d) ? "" : d.toDateString();
  }
  function dayLabel(day) {
    var d = new Date(day);
    var today = new Date();
    var yesterday = new Date(today.getTime() - 86400000);
    if (day === today.toDateString()) return "Today";
    if (day === yesterday.toDateString()) return "Yesterday";
    return d.toLocaleDateString(undefined, { weekday: "long", day: "numeric", month: "long", year: "numeric" });
  }
  function daySeparators(ol) {
    ol.querySelectorAll(":scope > .day-sep").forEach(function (sep) { sep.remove(); });
    var last = "";
    rowsOf(ol).forEach(function (el) {
      var day = dayOf(el);
      if (!day || day === last) return;
      last = day;
      var sep = document.createElement("li");
      sep.className = "day-sep";
      sep.setAttribute("aria-hidden", "true");
      sep.setAttribute("data-testid", "day-separator");
      sep.textContent = dayLabel(day);
      ol.insertBefore(sep, el);
    });
  }
  refreshTimes(document);
  setInterval(function () { if (!document.hidden) refreshTimes(document); }, 30000);
  document.addEventListener("htmx:afterSettle", function (e) { refreshTimes(e.detail.target || document); });

  // ---- Keyboard: j/k move between notes, r replies, Enter opens (inbox,
  // search), Esc closes, Ctrl/⌘+Enter sends, / searches, g i opens the
  // inbox, ? lists them. Keys typed into a field are the field's, but for
  // Esc and Ctrl/⌘+Enter.

  var shortcuts = document.getElementById("shortcuts");
  function showShortcuts() {
    if (shortcuts && !shortcuts.open && shortcuts.showModal) shortcuts.showModal();
  }
  document.addEventListener("click", function (e) {
    if (e.target.closest && e.target.closest("[data-shortcuts-open]")) showShortcuts();
  });

  function noteRows() {
    var root = document.getElementById("mail-list") || inboxList || document.getElementById("search-list");
    return root ? rowsOf(root) : [];
  }
  function currentRow() {
    var el = document.activeElement;
    return el && el.closest ? el.closest("[data-note-id]") : null;
  }
  function move(step) {
    var rows = noteRows();
    if (!rows.length) return;
    var at = rows.indexOf(currentRow());
    var next = at < 0 ? (step > 0 ? 0 : rows.length - 1) : Math.min(rows.length - 1, Math.max(0, at + step));
    rows[next].focus();
    rows[next].scrollIntoView({ block: "nearest" });
  }
  function typing(el) {
    return el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }
  var pendingG = 0;
  document.addEventListener("keydown", function (e) {
    var el = e.target;
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey) && el.form && el.tagName === "TEXTAREA") {
      e.preventDefault();
      if (el.form.requestSubmit) el.form.requestSubmit(); else el.form.submit();
      return;
    }
    if (e.key === "Escape") {
      var form = el.closest && el.closest("form.composer");
      var cancel = form && form.querySelector("[data-dismiss]");
      if (cancel) {
        e.preventDefault();
        cancel.click();
      } else if (typing(el)) {
        el.blur();
      }
      return;
    }
    if (typing(el) || e.ctrlKey || e.metaKey || e.altKey) return;
    if (pendingG && Date.now() - pendingG < 1500 && e.key === "i") {
      pendingG = 0;
      e.preventDefault();
      location.href = "/inbox";
      return;
    }
    pendingG = 0;
    switch (e.key) {
      case "j": e.preventDefault(); move(1); break;
      case "k": e.preventDefault(); move(-1); break;
      case "g": pendingG = Date.now(); break;
      case "/": {
        var box = document.getElementById("search-q") || document.getElementById("nav-search");
        if (box) { e.preventDefault(); box.focus(); box.select(); }
        break;
      }
      case "?": e.preventDefault(); showShortcuts(); break;
      case "r": {
        var row = currentRow();
        var reply = row && row.querySelector("[data-testid=reply-button]");
        if (reply) { e.preventDefault(); reply.click(); }
        break;
      }
      case "Enter": {
        var open = el.matches && el.matches("[data-note-id]") && el.querySelector(".inbox-open");
        if (open) { e.preventDefault(); open.click(); }
        break;
      }
    }
  });

  // A thread is read whole: a note that joins it live opens its "Show more".
  function openWhole() {
    if (thread) list.querySelectorAll("details.more:not([open])").forEach(function (d) { d.open = true; });
  }
  document.addEventListener("htmx:afterSwap", openWhole);

  // Phone: the top bar is one row, the rest of the navigation behind Menu.
  var topbar = document.querySelector(".topbar");
  var menu = document.querySelector("[data-menu-toggle]");
  if (topbar && menu) {
    topbar.classList.add("menu-ready");
    menu.addEventListener("click", function () {
      var open = topbar.classList.toggle("menu-open");
      menu.setAttribute("aria-expanded", open ? "true" : "false");
      menu.textContent = open ? "Close" : "Menu";
    });
  }

  // A note opened in place (#note-N) is the one j/k start from.
  if (location.hash.indexOf("#note-") === 0) {
    var target = document.getElementById(location.hash.slice(1));
    if (target) target.focus({ preventScroll: true });
  }
})();

// The installable app (docs/push.md): register the service worker, which
// caches the shell and shows pushes; on Account, "Notify this device" asks
// the browser's permission (only on that click), subscribes it with the
// server's VAPID key and sends the subscription; the device list marks this
// browser's.
(function () {
  "use strict";
  if (!("serviceWorker" in navigator)) return;
  navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch(function () {});

  var box = document.querySelector("[data-push-subscribe]");
  if (!box) return;
  var button = box.querySelector("button");
  var status = box.querySelector("[data-push-status]");
  function say(text) { status.textContent = text; }
  if (!("PushManager" in window) || !("Notification" in window)) {
    button.disabled = true;
    say("This browser cannot receive notifications. On iPhone and iPad, add osFoundry to the home screen first (Share, then Add to Home Screen), and open it from there.");
    return;
  }
  function key(b64) {
    var s = atob(b64.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((b64.length + 3) % 4));
    var out = new Uint8Array(s.length);
    for (var i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  }
  function csrf() {
    try { return JSON.parse(document.body.getAttribute("hx-headers"))["X-CSRF-Token"]; } catch (e) { return ""; }
  }
  navigator.serviceWorker.ready.then(function (reg) {
    return reg.pushManager.getSubscription();
  }).then(function (sub) {
    if (!sub) return;
    document.querySelectorAll("[data-endpoint]").forEach(function (row) {
      if (row.getAttribute("data-endpoint") === sub.endpoint) {
        var badge = row.querySelector("[data-this-device]");
        if (badge) badge.hidden = false;
      }
    });
  }).catch(function () {});

  button.addEventListener("click", function () {
    button.disabled = true;
    say("Asking this browser…");
    Notification.requestPermission().then(function (permission) {
      if (permission !== "granted") throw new Error("Notifications are blocked for this site; allow them in the browser's site settings, then try again.");
      return navigator.serviceWorker.ready;
    }).then(function (reg) {
      return reg.pushManager.getSubscription().then(function (sub) {
        return sub || reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key(box.getAttribute("data-push-subscribe")) });
      });
    }).then(function (sub) {
      return fetch("/account/devices", {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf(), Accept: "application/json" },
        body: JSON.stringify(sub.toJSON ? sub.toJSON() : sub)
      });
    }).then(function (res) {
      return res.json().catch(function () { return {}; }).then(function (out) {
        if (!res.ok) throw new Error(out.error || "The server did not take this device (" + res.status + ").");
        location.assign("/account?done=device#devices");
      });
    }).catch(function (err) {
      button.disabled = false;
      say(err && err.message ? err.message : "This device could not be subscribed.");
    });
  });
})();
