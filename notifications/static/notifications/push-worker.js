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

// A click on a shown notification: close it, mark its entry read, open (or focus) the entry.
function notificationOpen(notification) {
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
}

self.addEventListener("notificationclick", function (event) {
  var opening = notificationOpen(event.notification);
  try {
    event.waitUntil(opening); // keeps the worker alive until the entry is open and marked read
  } catch (error) {
    // An event the page's own code dispatched (the browser tests': a headless browser has no
    // notification to click) cannot extend the worker's life; the click's work goes on.
  }
});
