// The service worker of Web Push, served from the site's root (/push-worker.js) so that its
// scope is the whole site. It shows what a push carries (notifications/push/content.py): the
// notification's sentence as the title, the excerpt the inbox shows as its text, one
// notification per feed entry (`tag`: a rolled-up entry replaces its earlier notification).
// A click closes it, marks the entry read (POST /api/push/read/ with the signed token the push
// carries: a service worker has no CSRF token) and opens the entry, or focuses a tab on it.
self.addEventListener("push", function (event) {
  var data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch (error) {
    data = { title: event.data ? event.data.text() : "" };
  }
  var title = data.title || "Dynamo Social";
  event.waitUntil(
    self.registration.showNotification(title, {
      body: data.body || "",
      icon: data.icon || undefined,
      tag: data.tag || undefined,
      renotify: Boolean(data.tag),
      data: { url: data.url || "/notifications/", read: data.read || "" },
    })
  );
});

// What a click on a shown notification does (the handler below; callable alone, as the browser
// tests do from the worker's context, where no real click can be made).
self.notificationOpen = function (notification) {
  var data = notification.data || {};
  notification.close();
  var url = data.url || "/notifications/";
  var marked = data.read
    ? fetch("/api/push/read/", {
        method: "POST",
        credentials: "omit",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ token: data.read }),
      }).catch(function () {})
    : Promise.resolve();
  var opened = self.clients.matchAll({ type: "window", includeUncontrolled: true }).then(function (windows) {
    for (var i = 0; i < windows.length; i++) {
      if (windows[i].url === url && "focus" in windows[i]) return windows[i].focus();
    }
    return self.clients.openWindow(url);
  });
  return Promise.all([marked, opened]);
};

self.addEventListener("notificationclick", function (event) {
  event.waitUntil(self.notificationOpen(event.notification));
});
