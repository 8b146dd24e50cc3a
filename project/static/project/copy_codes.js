// The recovery codes page: a "Copy the codes" button (shown only where the clipboard can be
// written); the download link next to it works without JavaScript.
(function () {
  "use strict";
  const button = document.querySelector("button.copy-codes");
  if (!button || !navigator.clipboard) return;
  const status = document.querySelector(".copy-status");
  button.hidden = false;
  button.addEventListener("click", function () {
    navigator.clipboard.writeText(button.dataset.copy).then(
      function () { status.textContent = "Copied: paste them somewhere safe."; },
      function () { status.textContent = "Could not copy: use the download link, or select the codes."; }
    );
  });
})();
