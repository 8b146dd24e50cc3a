// The admin pages' tables scroll sideways inside themselves when the screen is narrower
// than they are (a phone), so the page itself never does. A table that scrolls can be
// focused and scrolled with the keyboard. Without JavaScript the page scrolls instead.
(function () {
  function label(table) {
    if (table.caption) return table.caption.textContent.trim();
    var heading = table.previousElementSibling;
    while (heading && !/^H[1-6]$/.test(heading.tagName)) heading = heading.previousElementSibling;
    return heading ? heading.textContent.trim() : document.title;
  }

  function focusable(box) {
    if (box.scrollWidth > box.clientWidth) {
      box.tabIndex = 0;
      box.setAttribute("role", "region");
      box.setAttribute("aria-label", box.dataset.label);
    } else {
      box.removeAttribute("tabindex");
      box.removeAttribute("role");
      box.removeAttribute("aria-label");
    }
  }

  function start() {
    var boxes = [];
    document.querySelectorAll("#content table").forEach(function (table) {
      if (table.closest(".results, .table-scroll")) return; // Django's own lists scroll already
      var box = document.createElement("div");
      box.className = "table-scroll";
      box.dataset.label = label(table);
      table.parentNode.insertBefore(box, table);
      box.appendChild(table);
      boxes.push(box);
    });
    boxes.forEach(focusable);
    window.addEventListener("resize", function () {
      boxes.forEach(focusable);
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
