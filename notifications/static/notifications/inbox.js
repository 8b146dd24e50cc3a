// The inbox page says one thing at a time, and follows what arrives while it is open.
//
// Shown is read: the unread notifications on the page are marked read (POST
// /api/notifications/read/ with the field and id each card carries). Each keeps its
// highlight, its "New" becoming "New, now read", so that no card says "New" beside
// "Nothing unread". "Mark all as read" and its note follow the header badge's count
// (every `notifications:count` event: this page's own answers, project/live.js's polls).
//
// When the count says something is unread that this page does not show (live.js asks
// every 2 s; each new count), the page fetches its first page again and offers "Show N new notifications"
// above the list, as GitHub does: nothing moves under the reader until they ask. Shown,
// the new cards go on top (an updated one replaces its old card), get the focus, and are
// marked read like the others. Without JavaScript the page is as it was drawn and the
// "Mark all as read" button is a plain form.
(function () {
  var pageText = window.pageText; // project/static/project/page_texts.js
  var inbox = document.querySelector(".inbox[data-read-url]");
  var tokenInput = document.querySelector("#mark-all-read input[name=csrfmiddlewaretoken]");
  if (!inbox || !tokenInput || !window.fetch) return;
  // project/site.js's fetch that asks again after a busy server's Retry-After (both may be sent twice).
  var send = window.fetchRetrying || fetch;
  var button = document.querySelector("#mark-all-read button");
  var note = document.getElementById("mark-all-note");
  var news = document.querySelector(".inbox-news");
  var showNew = document.getElementById("show-new");
  var waiting = []; // cards fetched, not shown yet
  var fetching = false;
  var checkedFor = null; // the count the last fetch was for
  var latest = null; // the last count heard

  function cards(root) {
    return Array.prototype.slice.call(root.querySelectorAll("article.notification[data-key]"));
  }

  function shownKeys() {
    var keys = {};
    cards(inbox).forEach(function (card) {
      keys[card.dataset.key] = true;
    });
    return keys;
  }

  function unreadOnPage() {
    return inbox.querySelectorAll("article.notification.unread").length;
  }

  // The button and its note say what the badge says.
  function follow(count) {
    if (!button) return;
    button.disabled = count === 0;
    if (note) note.hidden = count !== 0;
  }

  function markShown(list) {
    var body = {};
    list.forEach(function (card) {
      if (!card.dataset.readField) return;
      (body[card.dataset.readField] = body[card.dataset.readField] || []).push(card.dataset.readId);
    });
    if (!Object.keys(body).length) return;
    send(inbox.dataset.readUrl, {
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
        list.forEach(function (card) {
          card.classList.remove("unread");
          card.classList.add("arrived");
          card.removeAttribute("data-read-field");
          var label = card.querySelector(".new");
          if (label) label.textContent = pageText("New, now read");
        });
        document.dispatchEvent(new CustomEvent("notifications:count", { detail: data }));
      })
      .catch(function () {});
  }

  function offer(found) {
    waiting = found;
    if (!news || !showNew) return;
    news.hidden = !found.length;
    if (found.length) {
      showNew.textContent = pageText("Show %(count)s new notifications", { count: found.length });
    }
  }

  // Something unread that the page does not show: fetch the first page and keep its new cards.
  // Every count is looked at: one that arrives while a fetch is on its way is checked when it
  // ends, and a count back to what the page shows (all read) forgets the last fetch, so the
  // next arrival, even to the same count as before, is fetched and offered.
  function check(count) {
    latest = count;
    if (count === 0 || count <= unreadOnPage()) {
      checkedFor = null;
      return;
    }
    if (fetching || count === checkedFor) return;
    fetching = true;
    checkedFor = count;
    send(inbox.dataset.firstPage, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (response) {
        return response.ok ? response.text() : null;
      })
      .then(function (html) {
        if (!html) return;
        var page = new DOMParser().parseFromString(html, "text/html");
        var keys = shownKeys();
        offer(
          cards(page).filter(function (card) {
            return card.classList.contains("unread") && !keys[card.dataset.key];
          })
        );
      })
      .catch(function () {
        checkedFor = null; // try again with the next count
      })
      .finally(function () {
        fetching = false;
        if (latest !== checkedFor) check(latest); // more arrived meanwhile
      });
  }

  if (showNew) {
    showNew.addEventListener("click", function () {
      if (inbox.hasAttribute("data-later-page")) {
        location.assign(inbox.dataset.firstPage); // new ones go on the first page
        return;
      }
      var added = waiting.map(function (card) {
        return document.importNode(card, true);
      });
      offer([]);
      if (!added.length) return;
      var empty = inbox.querySelector(":scope > p.muted");
      if (empty) empty.remove();
      added
        .slice()
        .reverse()
        .forEach(function (card) {
          var id = card.dataset.key.split("@")[0];
          cards(inbox).forEach(function (old) {
            if (old.dataset.key.split("@")[0] === id) old.remove(); // its older state
          });
          inbox.insertBefore(card, inbox.firstChild);
        });
      added[0].setAttribute("tabindex", "-1");
      added[0].focus();
      markShown(added);
    });
  }

  document.addEventListener("notifications:count", function (event) {
    if (!event.detail || typeof event.detail.unread_count !== "number") return;
    follow(event.detail.unread_count);
    check(event.detail.unread_count);
  });

  markShown(cards(inbox).filter(function (card) {
    return card.classList.contains("unread");
  }));
})();
