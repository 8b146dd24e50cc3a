// The new-delivery form shows only the fields of the chosen audience kind (the group
// picker for "One group", the username fields for "A list of usernames"). Without
// JavaScript every field shows and the server ignores the ones of other kinds.
(function () {
  function start() {
    var radios = document.querySelectorAll('input[type="radio"][name="audience"]');
    var fields = document.querySelectorAll("[data-audience]");
    if (!radios.length || !fields.length) return;

    function chosen() {
      for (var i = 0; i < radios.length; i++) if (radios[i].checked) return radios[i].value;
      return "";
    }

    function update() {
      var kind = chosen();
      for (var i = 0; i < fields.length; i++) {
        var row = fields[i].closest(".form-row") || fields[i];
        row.hidden = fields[i].dataset.audience !== kind;
      }
    }

    for (var i = 0; i < radios.length; i++) radios[i].addEventListener("change", update);
    update();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
