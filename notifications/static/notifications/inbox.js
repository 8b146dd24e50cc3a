// After the inbox is shown, mark the unread notifications on it read: each item
// carries the field and id that POST /api/notifications/read/ takes. They stay
// highlighted on this page; the badge drops at once. Without JavaScript, the
// "Mark all as read" button does the same with a plain form.
(function () {
  var inbox = document.querySelector(".inbox[data-read-url]");
  var tokenInput = document.querySelector("#mark-all-read input[name=csrfmiddlewaretoken]");
  if (!inbox || !tokenInput || !window.fetch) return;
  var body = {};
  inbox.querySelectorAll("[data-read-field][data-read-id]").forEach(function (item) {
    var field = item.dataset.readField;
    (body[field] = body[field] || []).push(item.dataset.readId);
  });
  if (!Object.keys(body).length) return;
  fetch(inbox.dataset.readUrl, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRFToken": tokenInput.value, Accept: "application/json" },
    body: JSON.stringify(body),
  })
    .then(function (response) {
      return response.ok ? response.json() : null;
    })
    .then(function (data) {
      if (!data) return;
      document.dispatchEvent(new CustomEvent("notifications:count", { detail: data }));
      // Nothing unread is left to mark: the button would do nothing.
      var button = document.querySelector("#mark-all-read button");
      if (button && data.unread_count === 0) {
        button.disabled = true;
        var note = document.getElementById("mark-all-note");
        if (note) note.hidden = false;
      }
    })
    .catch(function () {});
})();
