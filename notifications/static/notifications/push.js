// The notification settings page's "Push in this browser" box. Nothing is asked on page load:
// only a click on "Turn on push in this browser" asks the browser's permission, registers the
// service worker (/push-worker.js), subscribes with the site's key (GET /api/push/key/) and
// hands the subscription to POST /api/me/push-subscriptions/. "Turn off" removes it there and
// unsubscribes the browser. Without JavaScript, or in a browser without push, the box says so.
(function () {
  var pageText = window.pageText; // project/static/project/page_texts.js
  var box = document.getElementById("push-device");
  if (!box) return;
  var status = box.querySelector(".push-status");
  var on = box.querySelector("button[data-push=on]");
  var off = box.querySelector("button[data-push=off]");
  var token = document.querySelector("input[name=csrfmiddlewaretoken]");
  var STORED = "push-subscription-id";

  function say(text) {
    status.textContent = text;
  }
  function show(subscribed) {
    on.hidden = subscribed;
    off.hidden = !subscribed;
  }
  if (!("serviceWorker" in navigator) || !("PushManager" in window) || !("Notification" in window)) {
    say(pageText("This browser cannot receive push notifications."));
    return;
  }
  function key(base64) {
    var padded = (base64 + "===".slice((base64.length + 3) % 4)).replace(/-/g, "+").replace(/_/g, "/");
    var raw = atob(padded);
    var bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    return bytes;
  }
  function api(method, url, body) {
    return fetch(url, {
      method: method,
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": token ? token.value : "" },
      body: body ? JSON.stringify(body) : undefined,
    });
  }
  function current() {
    return navigator.serviceWorker.getRegistration("/").then(function (registration) {
      return registration ? registration.pushManager.getSubscription() : null;
    });
  }

  current().then(function (subscription) {
    var held = Boolean(subscription && localStorage.getItem(STORED));
    show(held);
    say(held ? pageText("Push is on in this browser.") : pageText("Push is off in this browser."));
  });
  box.hidden = false;

  on.addEventListener("click", function () {
    say(pageText("Asking your browser…"));
    Notification.requestPermission()
      .then(function (permission) {
        if (permission !== "granted") throw new Error("permission");
        return Promise.all([
          navigator.serviceWorker.register("/push-worker.js", { scope: "/" }).then(function () {
            return navigator.serviceWorker.ready;
          }),
          fetch("/api/push/key/").then(function (answer) {
            if (!answer.ok) throw new Error("key");
            return answer.json();
          }),
        ]);
      })
      .then(function (both) {
        return both[0].pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key(both[1].public_key) });
      })
      .then(function (subscription) {
        return api("POST", "/api/me/push-subscriptions/", subscription.toJSON());
      })
      .then(function (answer) {
        if (answer.status !== 201) throw new Error("refused");
        return answer.json();
      })
      .then(function (made) {
        localStorage.setItem(STORED, made.id);
        show(true);
        say(pageText("Push is on in this browser."));
      })
      .catch(function (error) {
        say(
          error && error.message === "permission"
            ? pageText("Your browser blocks notifications from this site: allow them in its site settings, then try again.")
            : pageText("Push could not be turned on here. Please try again later.")
        );
      });
  });

  off.addEventListener("click", function () {
    var id = localStorage.getItem(STORED);
    var removed = id ? api("DELETE", "/api/me/push-subscriptions/" + encodeURIComponent(id) + "/") : Promise.resolve();
    removed
      .then(current)
      .then(function (subscription) {
        return subscription ? subscription.unsubscribe() : true;
      })
      .then(function () {
        localStorage.removeItem(STORED);
        show(false);
        say(pageText("Push is off in this browser."));
      });
  });
})();
