// osFoundry's service worker. The server serves it at /sw.js (scope /),
// headed by SHELL, the content-hashed URLs of the app's shell (CSS, scripts,
// icons) and the offline page, and VERSION, which changes with any of them,
// so a new release installs a new worker and drops the old cache.
//
// It caches the shell, shows the offline page when a page cannot load,
// shows pushes (push/payload.go: title, one line, the note's or approval's
// tag and URL, a question's options or an approval's Allow and Deny as
// actions), opens the note on a click, and answers a question or decides an
// approval from an action with the owner's sign-in and the page's CSRF
// rules: the first answer wins; a later one is told who answered.
/* global SHELL, VERSION */
"use strict";

var CACHE = "osfoundry-shell-" + VERSION;
var OFFLINE = "/offline";

self.addEventListener("install", function (event) {
  // Where the browser has static routes, every request but a navigation and
  // the shell's goes to the network without waking the worker: the live
  // stream, polls and forms cost nothing extra.
  if (event.addRoutes) {
    try {
      event.addRoutes({ condition: { not: { or: [{ urlPattern: "/static/*" }, { requestMode: "navigate" }] } }, source: "network" })
        .catch(function () {});
    } catch (e) { /* an older browser: the fetch handler below passes them on */ }
  }
  event.waitUntil(caches.open(CACHE).then(function (c) { return c.addAll(SHELL); }).then(function () { return self.skipWaiting(); }));
});

self.addEventListener("activate", function (event) {
  event.waitUntil(caches.keys().then(function (keys) {
    return Promise.all(keys.filter(function (k) { return k.indexOf("osfoundry-shell-") === 0 && k !== CACHE; })
      .map(function (k) { return caches.delete(k); }));
  }).then(function () { return self.clients.claim(); }));
});

self.addEventListener("fetch", function (event) {
  var req = event.request;
  if (req.method !== "GET") return;
  var url = new URL(req.url);
  if (url.origin !== self.location.origin) return;
  if (url.pathname.indexOf("/static/") === 0) {
    // Hashed assets never change: the cache first.
    event.respondWith(caches.match(req).then(function (hit) { return hit || fetch(req); }));
    return;
  }
  if (req.mode === "navigate") {
    event.respondWith(fetch(req).catch(function () { return caches.match(OFFLINE); }));
  }
});

// ---- Pushes.

self.addEventListener("push", function (event) {
  var p = {};
  try { p = event.data ? event.data.json() : {}; } catch (e) { p = {}; }
  event.waitUntil(show(p));
});

// show shows a push's notification; a later one with the same tag
// replaces it.
function show(p) {
  var max = (self.Notification && Notification.maxActions) || 2;
  var actions = (p.actions || []).slice(0, max);
  return self.registration.showNotification(p.title || "osFoundry", {
    body: p.body || "",
    tag: p.tag || undefined,
    renotify: !!p.tag && !p.silent,
    silent: !!p.silent,
    icon: SHELL.find(function (u) { return /icon-192\.png$/.test(u); }),
    badge: SHELL.find(function (u) { return /badge-96\.png$/.test(u); }),
    actions: p.answer_url ? actions : [],
    requireInteraction: !!p.answer_url,
    data: { url: p.url || "/inbox", answer_url: p.answer_url || "", answer_field: p.answer_field || "option", actions: actions }
  });
}

self.addEventListener("notificationclick", function (event) {
  event.notification.close();
  event.waitUntil(event.action ? answer(event.notification, event.action) : openNote(event.notification));
});

// openNote opens the notification's note in place: in a window of the app
// already open when there is one, else in a new one.
function openNote(n) {
  var url = new URL((n.data && n.data.url) || "/inbox", self.location.origin).href;
  return self.clients.matchAll({ type: "window", includeUncontrolled: true }).then(function (list) {
    var win = list[0];
    if (!win) return self.clients.openWindow(url);
    return win.navigate(url).then(function (w) {
      var target = w || win;
      return target.focus ? target.focus().catch(function () { return target; }) : target;
    });
  });
}

// answer answers the notification's question with the option of action,
// or decides its approval with the verdict of action (allow, deny), as the
// page's form does: with the owner's sign-in and the sign-in's CSRF token.
// Signed out, it opens the note (which asks to sign in). The outcome
// replaces the notification: "Answered", "Allowed", "Denied", or who
// answered first.
function answer(n, action) {
  var d = n.data || {};
  if (!d.answer_url) return openNote(n);
  return fetch("/push/csrf", { credentials: "same-origin", redirect: "manual", headers: { Accept: "application/json" } })
    .then(function (res) {
      if (res.status !== 200) return openNote(n);
      return res.json().then(function (tok) {
        return fetch(d.answer_url, {
          method: "POST", credentials: "same-origin", redirect: "manual",
          headers: { "Content-Type": "application/x-www-form-urlencoded", "X-CSRF-Token": tok.csrf, Accept: "application/json" },
          body: (d.answer_field || "option") + "=" + encodeURIComponent(action)
        });
      }).then(function (res) {
        if (!res || res.type === "opaqueredirect") return openNote(n);
        return res.json().catch(function () { return {}; }).then(function (out) {
          var title = !res.ok ? (out.notice || "Not answered")
            : d.answer_field === "verdict" ? (out.state === "allowed" ? "Allowed" : "Denied")
            : "Answered: " + (out.answer || "");
          return self.registration.showNotification(title, {
            body: n.title, tag: n.tag || undefined, data: { url: d.url }, silent: true,
            icon: n.icon, badge: n.badge
          });
        });
      });
    })
    .catch(function () { return openNote(n); });
}

// For the browser tests, which cannot click a notification: the same
// functions the events call.
self.osfoundry = { show: show, openNote: openNote, answer: answer };
