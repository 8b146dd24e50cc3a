// The unread badge in the header of every page. It is rendered with the count at
// page load; project/live.js (every 2 s while visible) and the inbox report new counts
// with a `notifications:count` event.
(function () {
  var badges = document.querySelectorAll("[data-unread-badge]");
  if (!badges.length) return;

  function show(count) {
    badges.forEach(function (badge) {
      var label = badge.querySelector(".visually-hidden"); // " unread", for screen readers
      badge.textContent = String(count);
      if (label) badge.appendChild(label);
      badge.hidden = !(count > 0);
    });
  }

  document.addEventListener("notifications:count", function (event) {
    if (event.detail && typeof event.detail.unread_count === "number") show(event.detail.unread_count);
  });
})();
