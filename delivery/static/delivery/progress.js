// The delivery page follows its progress while the delivery is being sent: it polls
// the staff API (GET /api/deliveries/<id>/, the same live counts the page shows) and
// updates the figures; when the status changes it reloads, so the chunks and buttons
// are redrawn (a finished delivery's page has no poller). Without JavaScript a
// <noscript> meta refresh does the same every 5 s.
(function () {
  var INTERVAL_MS = 2000;
  var INTERVAL_MAX_MS = 30000;

  function start() {
    var table = document.getElementById("delivery-progress");
    if (!table || !table.dataset.progressUrl || !window.fetch) return;
    var interval = INTERVAL_MS;
    var timer = null;
    var busy = false;

    function show(field, value) {
      var node = table.querySelector('[data-field="' + field + '"]');
      if (!node) return;
      if (node.tagName === "PROGRESS") {
        node.value = value;
        node.textContent = value + "%";
      } else {
        node.textContent = String(value);
      }
    }

    function render(data) {
      var total = data.total_targets;
      var reached = data.delivered_count + data.skipped_count;
      var percent = total ? Math.floor((100 * reached) / total) : data.status === "done" ? 100 : 0;
      show("total", total);
      show("delivered", data.delivered_count);
      show("skipped", data.skipped_count);
      show("pending", Math.max(0, total - reached));
      show("percent", percent);
      show("progress", percent);
      show("chunks_done", data.chunks_done);
    }

    function schedule() {
      clearTimeout(timer);
      if (!document.hidden) timer = setTimeout(poll, interval);
    }

    function poll() {
      if (busy) return;
      busy = true;
      fetch(table.dataset.progressUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (response) {
          if (!response.ok) throw new Error("HTTP " + response.status);
          return response.json();
        })
        .then(function (data) {
          busy = false;
          if (data.status !== table.dataset.status) {
            window.location.reload();
            return;
          }
          render(data);
          interval = INTERVAL_MS;
          schedule();
        })
        .catch(function () {
          busy = false;
          interval = Math.min(INTERVAL_MAX_MS, interval * 2);
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
