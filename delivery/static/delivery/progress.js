// Delivery pages follow the deliveries still being sent: every element with
// data-progress-url (the detail page's table, a running row of the list) polls the
// staff API (GET /api/deliveries/<id>/, the same live counts the page shows) and
// updates its [data-field] figures (after an error it waits twice as long each time, and
// never less than a busy server's Retry-After); when a delivery's status changes the page
// reloads, so chunks and buttons are redrawn (a finished delivery is not polled).
// Polling pauses while the tab is hidden. Without JavaScript a <noscript> meta
// refresh reloads the page instead.
(function () {
  var INTERVAL_MS = 2000;
  var INTERVAL_MAX_MS = 30000;

  function percentOf(data) {
    var total = data.total_targets;
    var reached = data.delivered_count + data.skipped_count;
    return total ? Math.floor((100 * reached) / total) : data.status === "done" ? 100 : 0;
  }

  function render(container, data) {
    var values = {
      total: data.total_targets,
      delivered: data.delivered_count,
      skipped: data.skipped_count,
      pending: Math.max(0, data.total_targets - data.delivered_count - data.skipped_count),
      percent: percentOf(data),
      progress: percentOf(data),
      chunks_done: data.chunks_done,
    };
    var nodes = container.querySelectorAll("[data-field]");
    for (var i = 0; i < nodes.length; i++) {
      var value = values[nodes[i].dataset.field];
      if (value === undefined) continue;
      if (nodes[i].tagName === "PROGRESS") {
        nodes[i].value = value;
        nodes[i].textContent = value + "%";
      } else {
        nodes[i].textContent = String(value);
      }
    }
  }

  function start() {
    var containers = document.querySelectorAll("[data-progress-url]");
    if (!containers.length || !window.fetch) return;
    var interval = INTERVAL_MS;
    var timer = null;
    var busy = false;

    function read(container) {
      return fetch(container.dataset.progressUrl, {
        credentials: "same-origin",
        headers: { Accept: "application/json" },
      }).then(function (response) {
        if (!response.ok) {
          var error = new Error("HTTP " + response.status);
          error.retryAfter = retryAfterMs(response);
          throw error;
        }
        return response.json();
      });
    }

    // A busy server (429, 503) says when to ask again: not before its Retry-After seconds.
    function retryAfterMs(response) {
      if (response.status !== 429 && response.status !== 503) return 0;
      var value = (response.headers.get("Retry-After") || "").trim();
      if (/^\d+$/.test(value)) return Number(value) * 1000;
      var at = Date.parse(value);
      return isNaN(at) ? 0 : Math.max(0, at - Date.now());
    }

    function schedule() {
      clearTimeout(timer);
      if (!document.hidden) timer = setTimeout(poll, interval);
    }

    function poll() {
      if (busy) return;
      busy = true;
      Promise.all(Array.prototype.map.call(containers, read))
        .then(function (answers) {
          busy = false;
          for (var i = 0; i < answers.length; i++) {
            if (answers[i].status !== containers[i].dataset.status) {
              window.location.reload();
              return;
            }
            render(containers[i], answers[i]);
          }
          interval = INTERVAL_MS;
          schedule();
        })
        .catch(function (error) {
          busy = false;
          interval = Math.min(INTERVAL_MAX_MS, Math.max(interval * 2, (error && error.retryAfter) || 0));
          schedule();
        });
    }

    document.addEventListener("visibilitychange", function () {
      if (!document.hidden) poll();
    });
    schedule();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
