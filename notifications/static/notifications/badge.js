// The unread badge in the header of every page. It is rendered with the count at
// page load, then refreshed from /api/notifications/unread-count/ every 30 seconds
// while the tab is visible, when the tab comes back, after a like or unlike on the
// page (`social:changed`), and at once when the inbox reports a new count
// (`notifications:count`).
(function () {
  var badges = document.querySelectorAll("[data-unread-badge]");
  if (!badges.length || !window.fetch) return;
  var url = badges[0].dataset.countUrl;
  var POLL_MS = 30000;
  var inFlight = false;

  function show(count) {
    badges.forEach(function (badge) {
      var label = badge.querySelector(".visually-hidden"); // " unread", for screen readers
      badge.textContent = String(count);
      if (label) badge.appendChild(label);
      badge.hidden = !(count > 0);
    });
  }

  function refresh() {
    if (inFlight) return;
    inFlight = true;
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        return response.ok ? response.json() : null;
      })
      .then(function (data) {
        if (data && typeof data.unread_count === "number") show(data.unread_count);
      })
      .catch(function () {})
      .finally(function () {
        inFlight = false;
      });
  }

  setInterval(function () {
    if (!document.hidden) refresh();
  }, POLL_MS);
  document.addEventListener("visibilitychange", function () {
    if (!document.hidden) refresh();
  });
  document.addEventListener("social:changed", refresh);
  document.addEventListener("notifications:count", function (event) {
    if (event.detail && typeof event.detail.unread_count === "number") show(event.detail.unread_count);
  });
})();
