// Progressive enhancement: like buttons work as plain forms; with JavaScript they call the
// API and update in place. Nothing typed on a page is lost: a like that cannot be done in
// place keeps the page's unsent text in this tab's storage before falling back to the form,
// and the text is put back in its box when the page is shown again. The post and reply
// boxes count characters and say when the text is too long; their buttons say "Posting…".
(function () {
  var DRAFT_PREFIX = "draft:";

  function csrfToken(form) {
    var input = form.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  function storage() {
    try {
      return window.sessionStorage;
    } catch (error) {
      return null; // storage blocked: the server's own draft keeping still works
    }
  }

  // A like button shows {like_count, liked}; live.js draws the hearts it follows with it too.
  function render(button, state) {
    button.classList.toggle("liked", state.liked);
    button.setAttribute("aria-pressed", state.liked ? "true" : "false");
    button.value = state.liked ? "unlike" : "like";
    button.querySelector(".heart").textContent = state.liked ? "♥" : "♡";
    button.querySelector(".count").textContent = state.like_count;
  }
  window.renderLikeButton = render;

  function note(form, text) {
    var element = form.querySelector(".like-error");
    if (!text) {
      if (element) element.remove();
      return;
    }
    if (!element) {
      element = document.createElement("span");
      element.className = "like-error";
      element.setAttribute("role", "alert");
      form.appendChild(element);
    }
    element.textContent = text;
  }

  function keepDrafts() {
    var store = storage();
    if (!store) return;
    document.querySelectorAll("form.post-form textarea[name=body]").forEach(function (box) {
      if (box.value.trim()) store.setItem(DRAFT_PREFIX + location.pathname, box.value);
    });
  }

  // The server answered but could not do it here (the session ended, too many requests,
  // an error): the plain form does it, or says why, with the action that was clicked.
  function fallBack(form, action) {
    var field = form.querySelector("input[type=hidden][name=action]");
    if (!field) {
      field = document.createElement("input");
      field.type = "hidden";
      field.name = "action";
      form.appendChild(field);
    }
    field.value = action;
    keepDrafts();
    form.submit();
  }

  function like(form, button) {
    if (button.getAttribute("aria-busy") === "true") return;
    var action = button.value === "unlike" ? "unlike" : "like";
    // Busy, not disabled: a disabled button would drop the keyboard focus to the page.
    button.setAttribute("aria-busy", "true");
    fetch("/api/comments/" + form.dataset.commentId + "/like/", {
      method: action === "like" ? "PUT" : "DELETE",
      headers: { "X-CSRFToken": csrfToken(form), Accept: "application/json" },
      credentials: "same-origin",
    })
      .then(
        function (response) {
          if (!response.ok) {
            fallBack(form, action);
            return null;
          }
          return response.json();
        },
        function () {
          note(form, "Not saved: no connection. Nothing changed; try again when you are online.");
          return null;
        }
      )
      .then(function (state) {
        if (!state) return;
        note(form, "");
        render(button, state);
        document.dispatchEvent(new CustomEvent("social:changed"));
      })
      .catch(function () {
        note(form, "Not saved: something went wrong. Try again.");
      })
      .finally(function () {
        // The live poll drops answers it asked for before this moment (project/live.js):
        // they were read before this like or unlike had committed.
        button.dataset.likedAt = String(Date.now());
        button.removeAttribute("aria-busy");
      });
  }

  function counter(box) {
    var limit = Number(box.dataset.maxLength);
    var element = document.createElement("p");
    element.className = "counter";
    element.id = box.id + "-counter";
    var alert = document.createElement("p");
    alert.className = "counter-error";
    alert.setAttribute("role", "alert");
    box.insertAdjacentElement("afterend", alert);
    box.insertAdjacentElement("afterend", element);
    var described = box.getAttribute("aria-describedby");
    box.setAttribute("aria-describedby", (described ? described + " " : "") + element.id);
    function update() {
      var length = box.value.length;
      element.textContent = length.toLocaleString() + " / " + limit.toLocaleString() + " characters";
      var over = length - limit;
      element.classList.toggle("over", over > 0);
      box.setAttribute("aria-invalid", over > 0 ? "true" : "false");
      var text =
        over > 0
          ? "Too long by " + over.toLocaleString() + " characters: shorten it to " + limit.toLocaleString() + " to post it."
          : "";
      if (alert.textContent !== text) alert.textContent = text;
    }
    box.addEventListener("input", update);
    update();
    return function () {
      update();
      return box.value.length <= limit;
    };
  }

  function startPostForm(form) {
    var box = form.querySelector("textarea[name=body]");
    var button = form.querySelector("button[type=submit]");
    if (!box || !button) return;
    var store = storage();
    var kept = store && store.getItem(DRAFT_PREFIX + location.pathname);
    if (kept) {
      store.removeItem(DRAFT_PREFIX + location.pathname);
      if (!box.value.trim()) {
        box.value = kept;
        var message = document.createElement("p");
        message.className = "draft-note";
        message.setAttribute("role", "status");
        message.textContent = "Your unsent text is back in the box: press " + button.textContent.trim() + " to send it.";
        form.insertBefore(message, form.firstChild);
      }
    }
    var fits = box.dataset.maxLength ? counter(box) : null;
    var label = button.textContent;
    var sending = false;
    form.addEventListener("submit", function (event) {
      if (sending || (fits && !fits())) {
        event.preventDefault(); // one post per press, however slow the network
        if (!sending) box.focus();
        return;
      }
      sending = true;
      button.textContent = "Posting…";
      button.setAttribute("aria-disabled", "true");
    });
    // Back to this page from the next one (the browser's page cache): ready again.
    window.addEventListener("pageshow", function (event) {
      if (event.persisted) {
        sending = false;
        button.textContent = label;
        button.removeAttribute("aria-disabled");
      }
    });
  }

  // Times on pages in the browser's time zone (project/timezones.py reads the cookie). A page
  // that shows times in another zone is drawn again once, in this one.
  function keepTimeZone() {
    var zone = window.Intl && Intl.DateTimeFormat().resolvedOptions().timeZone;
    // A zone name ("Europe/Paris") is a valid cookie value as it is; anything else is left out.
    if (!zone || !/^[A-Za-z0-9_+\-\/]+$/.test(zone)) return;
    if (document.cookie.split("; ").indexOf("tz=" + zone) !== -1) return;
    document.cookie = "tz=" + zone + "; path=/; max-age=31536000; SameSite=Lax";
    var shown = document.querySelector("[data-time-zone]");
    if (shown && shown.dataset.timeZone !== zone) location.reload();
  }

  keepTimeZone();
  document.querySelectorAll("form.post-form").forEach(startPostForm);

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.classList.contains("like-form") || !window.fetch) return;
    event.preventDefault();
    like(form, event.submitter || form.querySelector("button.like"));
  });
})();
