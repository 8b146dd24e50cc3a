// Keeps an open page current: the unread badge, the like counts of the comments on screen
// and the viewer's own hearts on them follow changes made elsewhere within about 2 seconds.
//
// One GET /api/live/?comments=<ids on screen> every X-Poll-Interval seconds (the server's
// say, 2 by default) while the tab is visible (nothing while it is hidden; at once when it
// comes back). After 10 minutes without any input the page asks every 30 s instead, and at
// once on the next input. Each poll is conditional: it sends as If-None-Match the ETag of
// the answer (or of the page, `data-live-cursor`) that the oldest of the values it asks
// about came from, and a 304 means nothing it shows changed; the server reads nothing for
// it. A refusal (429 throttled, 503 busy or data store down) or no answer at all waits for
// its Retry-After (else 5 s), doubled with each refusal in a row up to 2 minutes, plus up
// to a quarter more at random, so a crowd refused together does not come back together.
// Pages work the same without JavaScript (counts as of load).
(function () {
  if (!window.fetch || !document.body) return;
  var badge = document.querySelector("[data-unread-badge]");
  var liveUrl = document.body.dataset.liveUrl;
  if (!liveUrl) return;
  var FAST_MS = 2000; // until the server says otherwise (X-Poll-Interval)
  var IDLE_MS = 30000;
  var IDLE_AFTER_MS = 10 * 60 * 1000;
  var BACKOFF_MAX_MS = 120000;
  var lastInput = Date.now();
  var refusals = 0;
  var timer = null;
  var inFlight = false;
  var visible = new Set();
  // Where each value shown comes from: per comment and for the badge, the ETag of the answer
  // it was read in and that answer's order; before any answer, the page's own cursor.
  var pageCursor = document.body.dataset.liveCursor ? { etag: document.body.dataset.liveCursor, n: 0 } : null;
  var cursors = new Map();
  var badgeCursor = pageCursor;
  var answers = 0;
  var status = document.getElementById("live-status");
  var lastUnread = badge ? Number(badge.firstChild ? badge.firstChild.nodeValue : 0) || 0 : null;

  // Only comments on screen are followed: a page of 20 asks for the 3-6 in view.
  var observer = window.IntersectionObserver
    ? new IntersectionObserver(function (entries) {
        entries.forEach(function (entry) {
          var id = entry.target.dataset.likeCount;
          if (entry.isIntersecting) visible.add(id);
          else visible.delete(id);
        });
      })
    : null;
  function watch(root) {
    root.querySelectorAll("[data-like-count]").forEach(function (element) {
      if (observer) observer.observe(element);
      else visible.add(element.dataset.likeCount);
    });
  }
  watch(document);
  if (!badge && !document.querySelector("[data-like-count]")) return; // nothing to follow

  function announce(text) {
    if (status) status.textContent = text;
  }

  function showUnread(count) {
    if (lastUnread !== null && count > lastUnread) {
      announce(count + (count === 1 ? " unread notification" : " unread notifications"));
    }
    document.dispatchEvent(new CustomEvent("notifications:count", { detail: { unread_count: count, live: true } }));
  }
  // Every new count, ours or the inbox's after it marks read, is the one to compare with.
  // A count from elsewhere (the inbox's mark-read answer) is newer than any poll asked
  // before it: such a poll's answer may have read the count before the marking.
  var countSetAt = 0;
  document.addEventListener("notifications:count", function (event) {
    if (!event.detail || typeof event.detail.unread_count !== "number") return;
    lastUnread = event.detail.unread_count;
    if (!event.detail.live) countSetAt = Date.now();
  });

  // The viewer's own heart follows too: liked or unliked in another tab, or a page from
  // the browser's history.
  // `askedAt`: when the poll was sent. An answer asked for before the viewer's own like or
  // unlike on a button had finished may have read part of the state before it and part
  // after: that button keeps what its own like answered until the next poll.
  function showCounts(counts, liked, askedAt) {
    Object.keys(counts).forEach(function (id) {
      document.querySelectorAll('[data-like-count="' + id + '"]').forEach(function (element) {
        var button = element.closest("button");
        if (button && button.getAttribute("aria-busy") === "true") return; // the viewer's own like is on its way
        if (button && Number(button.dataset.likedAt || 0) >= askedAt) return;
        if (button && typeof liked[id] === "boolean" && window.renderLikeButton) {
          window.renderLikeButton(button, { like_count: counts[id], liked: liked[id] });
        } else {
          element.textContent = String(counts[id]);
        }
      });
    });
  }

  function schedule(ms) {
    clearTimeout(timer);
    timer = setTimeout(poll, ms);
  }

  function nextDelay() {
    return Date.now() - lastInput > IDLE_AFTER_MS ? Math.max(IDLE_MS, FAST_MS) : FAST_MS;
  }

  // The server sets the pace (an operator slows every tab down under load): 1 s to 10 min.
  function obeyInterval(response) {
    var seconds = Number(response.headers.get("X-Poll-Interval"));
    if (seconds > 0) FAST_MS = Math.min(600000, Math.max(1000, seconds * 1000));
  }

  // The oldest source of what this poll asks about; null when one has none (a full answer).
  function oldestCursor(ids) {
    var oldest = badge ? badgeCursor : undefined;
    for (var i = 0; i < ids.length; i++) {
      var cursor = cursors.get(ids[i]) || pageCursor;
      if (!cursor) return null;
      if (!oldest || cursor.n < oldest.n) oldest = cursor;
    }
    return oldest || pageCursor;
  }

  function remember(response, ids) {
    var etag = response.headers.get("ETag");
    if (!etag) return;
    var cursor = { etag: etag, n: ++answers };
    ids.forEach(function (id) {
      cursors.set(id, cursor);
    });
    if (badge) badgeCursor = cursor;
  }

  // After a refusal: Retry-After seconds (5 when absent), doubled per refusal in a row.
  function backoff(retryAfter) {
    refusals += 1;
    var base = (Number(retryAfter) > 0 ? Number(retryAfter) : 5) * 1000;
    var wait = Math.min(BACKOFF_MAX_MS, base * Math.pow(2, refusals - 1));
    return wait + Math.random() * wait * 0.25;
  }

  function poll() {
    if (document.hidden) return; // visibilitychange starts it again
    if (inFlight) return schedule(nextDelay());
    inFlight = true;
    var ids = Array.from(visible).slice(0, 50);
    // The hearts cost nothing unless something changed: a signed-in page (it has a badge) always asks.
    var url = liveUrl + (ids.length ? "?comments=" + ids.join(",") + (badge ? "&hearts=1" : "") : "");
    var headers = { Accept: "application/json" };
    var since = oldestCursor(ids);
    if (since) headers["If-None-Match"] = since.etag;
    var askedAt = Date.now();
    var delay = null;
    fetch(url, { credentials: "same-origin", cache: "no-store", headers: headers })
      .then(function (response) {
        obeyInterval(response);
        if (response.status === 429 || response.status >= 500) {
          delay = Math.max(nextDelay(), backoff(response.headers.get("Retry-After")));
          return null;
        }
        refusals = 0;
        if (response.status === 304) {
          remember(response, ids); // nothing it shows changed
          return null;
        }
        if (!response.ok) return null;
        return response.json().then(function (data) {
          remember(response, ids);
          return data;
        });
      })
      .then(function (data) {
        if (!data) return;
        if (badge && typeof data.unread_count === "number" && askedAt > countSetAt) showUnread(data.unread_count);
        if (data.like_counts) showCounts(data.like_counts, data.liked || {}, askedAt);
      })
      .catch(function () {
        delay = Math.max(nextDelay(), backoff(null)); // no answer: the server or the network is down
      })
      .finally(function () {
        inFlight = false;
        schedule(delay === null ? nextDelay() : delay);
      });
  }

  function onInput() {
    var wasIdle = Date.now() - lastInput > IDLE_AFTER_MS;
    lastInput = Date.now();
    if (wasIdle) schedule(0);
  }
  ["pointerdown", "keydown", "scroll", "focus", "mousemove", "touchstart"].forEach(function (name) {
    window.addEventListener(name, onInput, { passive: true });
  });
  document.addEventListener("visibilitychange", function () {
    if (document.hidden) return;
    schedule(0);
  });
  // Back to this page from the browser's history: its counts and hearts may be old (its
  // cursors say since when; past LIVE_FULL_EVERY the server answers in full).
  window.addEventListener("pageshow", function (event) {
    if (!event.persisted) return;
    schedule(0);
  });
  document.addEventListener("social:changed", function () {
    schedule(0);
  });
  schedule(FAST_MS);
})();
