// Progressive enhancement: like buttons work as plain forms; with JavaScript they
// call the API and update in place, without reloading the page.
(function () {
  function csrfToken(form) {
    var input = form.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  function render(button, state) {
    button.classList.toggle("liked", state.liked);
    button.setAttribute("aria-pressed", state.liked ? "true" : "false");
    button.value = state.liked ? "unlike" : "like";
    button.querySelector(".heart").textContent = state.liked ? "♥" : "♡";
    button.querySelector(".count").textContent = state.like_count;
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.classList.contains("like-form") || !window.fetch) return;
    event.preventDefault();
    var button = form.querySelector("button.like");
    var liking = button.value !== "unlike";
    button.disabled = true;
    fetch("/api/comments/" + form.dataset.commentId + "/like/", {
      method: liking ? "PUT" : "DELETE",
      headers: { "X-CSRFToken": csrfToken(form), Accept: "application/json" },
      credentials: "same-origin",
    })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.json();
      })
      .then(function (state) {
        render(button, state);
        document.dispatchEvent(new CustomEvent("social:changed"));
      })
      .catch(function () {
        form.submit(); // fall back to the plain form
      })
      .finally(function () {
        button.disabled = false;
      });
  });
})();
