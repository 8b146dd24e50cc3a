// Progressive enhancement: like and reaction buttons work as plain forms; with JavaScript they call the
// API and update in place (asked again after a busy server's Retry-After: fetchRetrying). Nothing typed on a page is lost: a like that cannot be done in
// place keeps the page's unsent text in this tab's storage before falling back to the form,
// and the text is put back in its box when the page is shown again. The post and reply
// boxes count characters and say when the text is too long; their buttons say "Posting…".
(function () {
  var DRAFT_PREFIX = "draft:";

  var pageText = window.pageText; // project/static/project/page_texts.js
  function number(value) {
    return value.toLocaleString(document.documentElement.lang || undefined);
  }

  // A 429 or 503 says when to ask again (Retry-After, in seconds or as a date): a request
  // that may be sent twice (a like's PUT or DELETE, a mark-read, a GET) is sent again then,
  // at most `tries` times, when the wait is at most RETRY_WAIT_MAX_S; the last answer is
  // returned as it is, for the caller to fall back. A small random share is added to the
  // wait, so that the tabs a busy server refused together do not come back together.
  var RETRY_WAIT_MAX_S = 10;

  function retryAfterSeconds(value) {
    if (!value) return null;
    if (/^\d+$/.test(value.trim())) return Number(value);
    var at = Date.parse(value);
    return isNaN(at) ? null : Math.max(0, (at - Date.now()) / 1000);
  }

  function fetchRetrying(url, options, tries) {
    var left = tries === undefined ? 2 : tries;
    return fetch(url, options).then(function (response) {
      if ((response.status !== 429 && response.status !== 503) || left <= 0) return response;
      var seconds = retryAfterSeconds(response.headers.get("Retry-After"));
      if (seconds === null || seconds > RETRY_WAIT_MAX_S) return response;
      return new Promise(function (resolve) {
        setTimeout(resolve, seconds * 1000 * (1 + Math.random() * 0.25));
      }).then(function () {
        return fetchRetrying(url, options, left - 1);
      });
    });
  }
  window.fetchRetrying = fetchRetrying;

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
  function fallBack(form, action, fieldName) {
    var name = fieldName || "action";
    var field = form.querySelector("input[type=hidden][name=" + name + "]");
    if (!field) {
      field = document.createElement("input");
      field.type = "hidden";
      field.name = name;
      form.appendChild(field);
    }
    field.value = action;
    keepDrafts();
    form.submit();
  }

  // One button's change in place (a like, a reaction): `change.method` to `change.url`, the
  // answer's state to `change.show`; the plain form when the server could not do it here
  // (`fallBack` with `change.value`, in the field `change.field`), a note when the request
  // never arrived. Busy meanwhile, not disabled: a disabled button would drop the keyboard
  // focus to the page. `change.done` runs last, whatever happened.
  function changeInPlace(form, button, change) {
    button.setAttribute("aria-busy", "true");
    fetchRetrying(change.url, {
      method: change.method,
      headers: { "X-CSRFToken": csrfToken(form), Accept: "application/json" },
      credentials: "same-origin",
    })
      .then(
        function (response) {
          if (!response.ok) {
            fallBack(form, change.value, change.field);
            return null;
          }
          return response.json();
        },
        function () {
          note(form, pageText("Not saved: no connection. Nothing changed; try again when you are online."));
          return null;
        }
      )
      .then(function (state) {
        if (!state) return;
        note(form, "");
        change.show(state);
      })
      .catch(function () {
        note(form, pageText("Not saved: something went wrong. Try again."));
      })
      .finally(function () {
        if (change.done) change.done();
        button.removeAttribute("aria-busy");
      });
  }

  function like(form, button) {
    if (button.getAttribute("aria-busy") === "true") return;
    var action = button.value === "unlike" ? "unlike" : "like";
    changeInPlace(form, button, {
      url: "/api/comments/" + form.dataset.commentId + "/like/",
      method: action === "like" ? "PUT" : "DELETE",
      value: action,
      show: function (state) {
        render(button, state);
        document.dispatchEvent(new CustomEvent("social:changed"));
      },
      done: function () {
        // The live poll drops answers it asked for before this moment (project/live.js):
        // they were read before this like or unlike had committed.
        button.dataset.likedAt = String(Date.now());
      },
    });
  }

  // The reaction buttons of one comment show {reactions: {name: count}, my_reactions: [name]}.
  function renderReactions(form, state) {
    form.querySelectorAll("button.reaction").forEach(function (button) {
      var name = button.dataset.reaction;
      var mine = state.my_reactions.indexOf(name) >= 0;
      var count = state.reactions[name] || 0;
      button.classList.toggle("reacted", mine);
      button.setAttribute("aria-pressed", mine ? "true" : "false");
      button.value = (mine ? "remove:" : "add:") + name;
      button.querySelector(".count").textContent = count ? String(count) : "";
    });
  }

  // A reaction's button, in place: PUT or DELETE /api/comments/<id>/reactions/<name>/, the
  // plain form when the server could not do it here (as a like's button).
  function react(form, button) {
    if (!button || button.getAttribute("aria-busy") === "true") return;
    var value = button.value;
    var name = value.slice(value.indexOf(":") + 1);
    changeInPlace(form, button, {
      url: "/api/comments/" + form.dataset.commentId + "/reactions/" + encodeURIComponent(name) + "/",
      method: value.indexOf("add:") === 0 ? "PUT" : "DELETE",
      value: value,
      field: "reaction",
      show: function (state) {
        renderReactions(form, state);
      },
    });
  }

  // Characters as the server counts them (social/services.py comment_body_clean): the text
  // without its leading and trailing spaces, in Unicode code points (an emoji is one, not
  // JavaScript's two), a line break one (the box holds LF; the form sends CRLF, which the
  // server counts as one too).
  function bodyLength(text) {
    return Array.from(text.replace(/\r\n?/g, "\n").trim()).length;
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
      var length = bodyLength(box.value);
      element.textContent = pageText("%(count)s / %(limit)s characters", { count: number(length), limit: number(limit) });
      var over = length - limit;
      element.classList.toggle("over", over > 0);
      box.setAttribute("aria-invalid", over > 0 ? "true" : "false");
      var text =
        over > 0
          ? pageText("Too long by %(over)s characters: shorten it to %(limit)s to post it.", {
              count: over,
              over: number(over),
              limit: number(limit),
            })
          : "";
      if (alert.textContent !== text) alert.textContent = text;
    }
    box.addEventListener("input", update);
    update();
    return function () {
      update();
      return bodyLength(box.value) <= limit;
    };
  }

  // A text posted is never put back in its box: Back to the page it was typed on (the
  // browser's page cache keeps the box as it was) or a draft kept for it would otherwise
  // offer it again, and a second press would post it twice (the server refuses that too:
  // the form's idempotency_key). On submit the text is kept as a draft of its page (a post
  // lost on the way, say offline, comes back) and noted as being posted; the page the post
  // lands on says "Posted." (a message tagged `posted`), which marks the text as posted and
  // drops the draft.
  var POSTING = "posting";
  var POSTED_PREFIX = "posted:";

  function sameText(a, b) {
    return a.replace(/\r\n?/g, "\n").trim() === b.replace(/\r\n?/g, "\n").trim();
  }

  function notePosted() {
    var store = storage();
    var sent = store && store.getItem(POSTING);
    if (!sent) return;
    store.removeItem(POSTING);
    if (!document.querySelector(".messages .posted")) return; // refused: the form shows the text again
    try {
      sent = JSON.parse(sent);
    } catch (error) {
      return;
    }
    store.setItem(POSTED_PREFIX + sent.path, sent.text);
    if (sameText(store.getItem(DRAFT_PREFIX + sent.path) || "", sent.text)) store.removeItem(DRAFT_PREFIX + sent.path);
  }

  function startPostForm(form) {
    var box = form.querySelector("textarea[name=body]");
    var button = form.querySelector("button[type=submit]");
    if (!box || !button) return;
    var store = storage();
    var path = location.pathname;
    // Create forms (post, reply) carry a key; the edit form holds a saved text, not a draft.
    var creates = Boolean(form.querySelector("input[name=idempotency_key]"));
    function wasPosted(text) {
      var posted = creates && store && store.getItem(POSTED_PREFIX + path);
      return Boolean(posted && text.trim() && sameText(text, posted));
    }
    if (wasPosted(box.value)) box.value = ""; // a page drawn before the post, from the browser's cache
    var kept = store && store.getItem(DRAFT_PREFIX + path);
    if (kept) {
      store.removeItem(DRAFT_PREFIX + path);
      if (!box.value.trim() && !wasPosted(kept)) {
        box.value = kept;
        var message = document.createElement("p");
        message.className = "draft-note";
        message.setAttribute("role", "status");
        message.textContent = pageText("Your unsent text is back in the box: press %(button)s to send it.", {
          button: button.textContent.trim(),
        });
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
      // Preview (social/preview.py) posts nothing: the page comes back with the text in the
      // box, so it is kept as a draft (lost on the way, it comes back) but not noted as posting.
      if (event.submitter && event.submitter.name === "preview") {
        if (creates && store && box.value.trim()) store.setItem(DRAFT_PREFIX + path, box.value);
        return;
      }
      button.textContent = pageText("Posting…");
      button.setAttribute("aria-disabled", "true");
      if (creates && store) {
        store.removeItem(POSTED_PREFIX + path);
        store.setItem(POSTING, JSON.stringify({ path: path, text: box.value }));
        store.setItem(DRAFT_PREFIX + path, box.value);
      }
    });
    // Leaving the page with text not sent: kept as a draft (the form asks the browser not to
    // restore boxes itself, autocomplete="off", so that a posted text cannot come back).
    window.addEventListener("pagehide", function () {
      if (creates && store && !sending && box.value.trim()) store.setItem(DRAFT_PREFIX + path, box.value);
    });
    // Back to this page from the next one (the browser's page cache): ready again, without
    // the text if it was posted, and the counter counting what the box holds.
    window.addEventListener("pageshow", function (event) {
      if (!event.persisted) return;
      sending = false;
      button.textContent = label;
      button.removeAttribute("aria-disabled");
      if (wasPosted(box.value)) box.value = "";
      if (store) store.removeItem(DRAFT_PREFIX + path); // the box holds it, or it was posted
      if (fits) fits();
    });
  }

  // Times on pages in the browser's time zone (project/http/timezones.py reads the cookie). A page
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

  // The header's height as it is now (it wraps on phones and at 200% zoom), for the
  // scroll-padding that keeps a focused element clear of it (site.css).
  function measureHeader() {
    var header = document.querySelector(".site-header");
    if (!header) return;
    function measure() {
      document.documentElement.style.setProperty("--header-height", header.getBoundingClientRect().height + "px");
    }
    measure();
    if (window.ResizeObserver) new ResizeObserver(measure).observe(header);
    else window.addEventListener("resize", measure);
  }

  // After Post (or Reply) the page says "Posted." and the keyboard focus goes there, so a
  // screen reader announces it and Tab goes on from the top of what was just posted to.
  function focusPosted() {
    var posted = document.querySelector(".messages .posted [tabindex]");
    if (posted) posted.focus();
  }

  measureHeader();
  keepTimeZone();
  notePosted();
  focusPosted();
  document.querySelectorAll("form.post-form").forEach(startPostForm);

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.classList.contains("like-form") || !window.fetch) return;
    event.preventDefault();
    like(form, event.submitter || form.querySelector("button.like"));
  });

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.classList.contains("react-form") || !window.fetch || !event.submitter) return;
    event.preventDefault();
    react(form, event.submitter);
  });

  // Logging out forgets the unsent text this tab kept: whoever uses the tab next must not
  // find it in their box (the server's kept drafts live in the session, which ends too).
  document.addEventListener("submit", function (event) {
    var form = event.target;
    var store = storage();
    if (!store || !form.matches || !form.matches("form.log-out")) return;
    for (var index = store.length - 1; index >= 0; index--) {
      var key = store.key(index);
      if (key && key.indexOf(DRAFT_PREFIX) === 0) store.removeItem(key);
    }
  });
})();
