"""Server-rendered pages of the social room: the timeline and a comment's page with their
compose boxes (post and reply: preview, the draft kept across a log-in, posted once per form),
edit and delete, the popular ranking, like buttons, sign-up, and password change and reset."""

import uuid
from collections.abc import Callable
from dataclasses import dataclass

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import PasswordChangeForm, PasswordResetForm, UserCreationForm
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.validators import MaxLengthValidator
from django.http import Http404, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.formats import number_format
from django.utils.functional import lazy
from django.utils.text import format_lazy
from django.utils.translation import gettext, gettext_lazy
from django.views.decorators.debug import sensitive_variables
from django.views.decorators.http import require_http_methods

from actions.accounts import account_sign_up
from actions.comments import comment_create
from actions.comments import comment_edit as comment_body_edit
from actions.likes import like_add, like_remove
from notifications.mail.account_links import reset_mail_queue
from notifications.preferences.selectors import comment_thread_state
from project.dynamo.cursors import page_or_first
from project.errors import ApplicationError, LockedOut, NotFound, RateLimited
from project.http.fresh import FRESH_COMMENTS, FRESH_LIKES
from project.http.idempotency import form_post_once
from project.http.security import client_ip
from project.http.views import focus_first_error, refused_page
from project.identity.login import password_check_limited
from project.limits.store import address_subject
from social import counters, drafts, ranking, reset_mail, selectors, services
from social.activity.services import activity_record
from social.comment_forms import back_url, comment_change_and_go_back
from social.models import User
from social.preview import comment_preview, preview_asked
from social.relations.selectors import blocked_by
from social.spam.views import held_answer, posted_held

LIKE_ACTION_MISSING = gettext_lazy(
    "The like form said neither like nor unlike (its action field), so nothing was changed."
)


class CommentBodyField(forms.CharField):
    """Counted as the box's counter counts (site.js): a line break is one character, though
    the browser sends it as CRLF (services.line_breaks_normalize), before max_length."""

    def to_python(self, value):
        return services.line_breaks_normalize(super().to_python(value))


class CommentForm(forms.Form):
    body = CommentBodyField(
        max_length=services.BODY_MAX_LENGTH,
        help_text=format_lazy(
            gettext_lazy("Up to {limit} characters; a line break counts as one."),
            limit=lazy(lambda: number_format(services.BODY_MAX_LENGTH, force_grouping=True), str)(),
        ),
        widget=forms.Textarea(attrs={"rows": 3, "data-max-length": services.BODY_MAX_LENGTH}),
        error_messages={
            "max_length": gettext_lazy(
                "At most %(limit_value)d characters: this has %(show_value)d. Shorten it and post again."
            )
        },
    )

    # Minted each time the form is drawn; a page restored by Back sends it again, so a second
    # Post of the same text creates nothing (_post_once). The edit form leaves it out.
    idempotency_key = forms.CharField(
        required=False, max_length=64, widget=forms.HiddenInput, initial=lambda: uuid.uuid4().hex
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # No maxlength: the browser would cut a long paste silently; the counter
        # (site.js) and the error above tell the person instead.
        self.fields["body"].widget.attrs.pop("maxlength", None)


def _form_with_kept_draft(request, *, button: str) -> CommentForm:
    """An empty form, or the one holding the text this person sent while logged out."""
    body = drafts.draft_take(request, path=request.path)
    if body is None:
        return CommentForm()
    form = CommentForm({"body": body})
    form.is_valid()  # an over-long draft comes back with its error
    messages.info(
        request,
        gettext("Your text was not posted yet. It is back in the box: press %(button)s to send it.")
        % {"button": button},
    )
    return form


def _post_once(request, form: CommentForm, *, parent_id: str | None = None) -> tuple[str, bool]:
    """Post the form's text (or reply), once per drawn form and text: (comment id, already posted)."""
    author_id, body = str(request.user.pk), form.cleaned_data["body"]
    return form_post_once(
        user_id=author_id,
        key=form.cleaned_data.get("idempotency_key") or "",
        text=f"{parent_id or ''}\n{body}",
        create=lambda: comment_create(author_id=author_id, body=body, parent_id=parent_id).comment_id,
    )


ALREADY_POSTED = gettext_lazy("That text was already posted from this page, so it was not posted again.")


def _keep_draft_and_log_in(request):
    """Logged out (or the session ended) while writing: keep the text through the log-in."""
    body = request.POST.get("body", "")
    if drafts.draft_keep(request, path=request.path, body=body):
        messages.info(
            request,
            gettext("You are not logged in, so nothing was posted. Log in and your text will be back in the box."),
        )
    elif body.strip():
        messages.warning(
            request,
            gettext(
                "You are not logged in, so nothing was posted, and too many texts were kept from your network: log "
                "in and write it again."
            ),
        )
    return redirect(drafts.login_url(request.path))


class SignUpForm(UserCreationForm):
    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "display_name", "email")
        help_texts = {
            "email": gettext_lazy("Optional: for the notification e-mail you choose and password resets. Never shown.")
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in ("password1", "password2"):
            field = self.fields[name]
            field.max_length = services.PASSWORD_MAX_LENGTH
            field.validators.append(MaxLengthValidator(services.PASSWORD_MAX_LENGTH))
            field.widget.attrs["maxlength"] = str(services.PASSWORD_MAX_LENGTH)

    def clean_username(self):
        username = super().clean_username()
        if username is None:
            return username  # Django already reported the name as taken (it returns None then)
        try:
            services.username_check(username)
        except ApplicationError as error:
            raise forms.ValidationError(error.message) from None
        return username


def _viewer_id(request):
    return str(request.user.pk) if request.user.is_authenticated else None


def _just_changed(request) -> dict:
    """What this browser just liked (`fresh`: counts read exactly) and wrote (`written`: listed
    though the index may not have them yet), for a list of comments."""
    return {"fresh": FRESH_LIKES.names(request), "written": FRESH_COMMENTS.names(request)}


@dataclass
class _Composed:
    """A page's compose box after its request: the form to show again, the preview asked for,
    the refusal (the form keeps the text for another try), or the answer that ends the request."""

    form: CommentForm
    preview: object = None
    refused: ApplicationError | None = None
    answer: HttpResponse | None = None


def _compose(request, *, button: str, posted: str, landing: Callable[[], HttpResponse], parent_id=None) -> _Composed:
    """The timeline's post form and a comment page's reply form: on a POST, log in first (the
    draft kept), preview, or post once (the `posted` message, then `landing`, where the new
    comment is listed exactly); a held comment gets the held page."""
    composed = _Composed(
        _form_with_kept_draft(request, button=button) if request.user.is_authenticated else CommentForm()
    )
    if request.method != "POST":
        return composed
    if not request.user.is_authenticated:
        composed.answer = _keep_draft_and_log_in(request)
        return composed
    composed.form = form = CommentForm(request.POST)
    if preview_asked(request):
        composed.preview = comment_preview(form)
    elif form.is_valid():
        try:
            posted_id, replayed = _post_once(request, form, parent_id=parent_id)
        except ApplicationError as error:
            form.add_error("body", error.message)
            composed.refused = error
            return composed
        if posted_held(posted_id):
            composed.answer = held_answer(request, posted_id)
            return composed
        messages.success(request, ALREADY_POSTED if replayed else posted, extra_tags="posted")
        composed.answer = landing()
        FRESH_COMMENTS.remember(request, composed.answer, value=posted_id)  # listed on the page it lands on
    return composed


def timeline(request):
    composed = _compose(
        request, button=gettext("Post"), posted=gettext("Posted."), landing=lambda: redirect("timeline")
    )
    if composed.answer is not None:
        return composed.answer
    form, refused, preview = composed.form, composed.refused, composed.preview
    page = page_or_first(
        request,
        lambda cursor: selectors.comment_timeline(
            viewer_id=_viewer_id(request), cursor=cursor, **_just_changed(request)
        ),
    )
    context = {"form": form, "page": page, "preview": preview}
    return refused_page(render(request, "social/timeline.html", context), refused)


def _comment_back(comment) -> str:
    """Where a comment lives: its parent's page for a reply, else its own."""
    if comment.parent_id:
        return f"{reverse('comment', args=[comment.parent_id])}#c-{comment.id}"
    return reverse("comment", args=[comment.id])


def _own_comment_or_404(request, comment_id, *, held_too: bool = False):
    """The viewer's own, visible comment (a view), or 404 / 403 like the API; `held_too`: also
    one of theirs waiting for review."""
    try:
        comment = selectors.comment_get(comment_id=comment_id, viewer_id=str(request.user.pk), include_hidden=held_too)
    except NotFound:
        raise Http404("No such comment.") from None
    if comment.hidden and not (comment.held and comment.author.id == str(request.user.pk)):
        raise Http404("No such comment.")
    if comment.deleted:
        raise Http404(services.COMMENT_DELETED)
    if comment.author.id != str(request.user.pk):
        raise DjangoPermissionDenied("Only its author can change a comment.")
    return comment


@login_required
def comment_edit(request, comment_id):
    """Edit one's own comment: a plain form (no JavaScript needed)."""
    comment = _own_comment_or_404(request, comment_id)
    form, refused = CommentForm(request.POST or None, initial={"body": comment.body}), None
    preview = comment_preview(form) if preview_asked(request) else None
    if request.method == "POST" and preview is None and form.is_valid():
        try:
            comment_body_edit(comment_id=comment_id, author_id=str(request.user.pk), body=form.cleaned_data["body"])
        except NotFound as error:  # deleted or hidden while the form was open
            messages.error(request, error.message)
            return redirect("timeline")
        except RateLimited as error:
            form.add_error(None, error.message)  # the text typed stays in the form
            refused = error
        except ApplicationError as error:
            form.add_error("body", error.message)
        else:
            messages.success(request, gettext("Your comment was saved."))
            response = HttpResponseRedirect(_comment_back(comment))
            FRESH_COMMENTS.remember(request, response, value=comment_id)  # the lists show the new text
            return response
    context = {"form": form, "comment": comment, "back": _comment_back(comment), "preview": preview}
    return refused_page(render(request, "social/comment_edit.html", context), refused)


class SitePasswordResetForm(PasswordResetForm):
    """Django's reset form, its mail queued for the mail worker (notifications.mail.account_links),
    which makes the links on SITE_URL (never on the host or port a request named: a forged Host
    header would send the owner a link to another site) within the account's mail budgets. The
    request does the same work whatever was typed (one query of the accounts that verified the
    address, its device cookies checked in memory, one queue put), so the answer is the same and
    takes as long whether an account has the address, a mail goes, or the budget was spent."""

    def save(self, **kwargs):
        email = self.cleaned_data["email"]
        request = kwargs.get("request")
        address = client_ip(request) if request is not None else ""
        cookies = dict(request.COOKIES) if request is not None else {}
        accounts = reset_mail.reset_accounts(email=email)
        owners = reset_mail.reset_device_owner_ids(accounts, cookies=cookies)
        reset_mail_queue(email=email, address=address, device_owner_ids=owners)


class PasswordResetView(auth_views.PasswordResetView):
    """Django's reset view: requests limited per client network (429 to that client only), mails
    per recipient address (silently: the answer never says whether one went)."""

    form_class = SitePasswordResetForm

    def form_valid(self, form):
        try:
            services.password_reset_limit_enforce(address=client_ip(self.request))
        except RateLimited as error:
            form.add_error(None, error.message)
            return refused_page(self.form_invalid(form), error)
        return super().form_valid(form)


class LimitedPasswordChangeForm(PasswordChangeForm):
    """Django's change form, its current password checked inside the log-in limits."""

    def __init__(self, user, *args, address: str, **kwargs):
        super().__init__(user, *args, **kwargs)
        self.address = address
        self.refusal: LockedOut | None = None

    @sensitive_variables("old_password")
    def clean_old_password(self):
        old_password = self.cleaned_data["old_password"]
        try:
            correct = password_check_limited(self.user, old_password, address=self.address)
        except LockedOut as refusal:
            self.refusal = refusal
            raise forms.ValidationError(refusal.message, code=refusal.code) from None
        if not correct:
            raise forms.ValidationError(self.error_messages["password_incorrect"], code="password_incorrect")
        return old_password


class PasswordChangeView(auth_views.PasswordChangeView):
    """Django's change view: a wrong current password is a failed log-in; past the limit, 429."""

    form_class = LimitedPasswordChangeForm

    def get_form_kwargs(self):
        return {**super().get_form_kwargs(), "address": client_ip(self.request)}

    def form_invalid(self, form):
        return refused_page(super().form_invalid(form), form.refusal)


@login_required
def comment_delete(request, comment_id):
    """Delete one's own comment (one waiting for review too): a confirmation page whose form does it."""
    comment = _own_comment_or_404(request, comment_id, held_too=True)
    if request.method == "POST":
        try:
            services.comment_delete(comment_id=comment_id, author_id=str(request.user.pk))
        except NotFound as error:
            messages.error(request, error.message)
            return redirect("timeline")
        except RateLimited as error:
            messages.error(request, error.message)
            context = {"comment": comment, "back": _comment_back(comment)}
            return refused_page(render(request, "social/comment_delete.html", context), error)
        messages.success(request, gettext("Your comment was deleted."))
        response = redirect("comment", comment_id=comment.parent_id) if comment.parent_id else redirect("timeline")
        FRESH_COMMENTS.remember(request, response, value=comment_id)  # the lists it leaves show it gone
        return response
    return render(request, "social/comment_delete.html", {"comment": comment, "back": _comment_back(comment)})


def comment_detail(request, comment_id):
    viewer_id = _viewer_id(request)
    try:
        # Its like count as list pages read theirs: exact for what this browser just liked.
        comment = selectors.comment_get(
            comment_id=comment_id, viewer_id=viewer_id, include_hidden=True, fresh=FRESH_LIKES.names(request)
        )
    except NotFound:
        raise Http404("No such comment.") from None
    if comment.hidden:
        # Its author learns why it is gone; to everyone else a hidden comment does not exist.
        if viewer_id is None or comment.author.id != viewer_id:
            raise Http404("No such comment.")
        return render(request, "social/comment_hidden.html", {"comment": comment, "held": comment.held})
    composed = _compose(
        request,
        button=gettext("Reply"),
        posted=gettext("Your reply is posted."),
        landing=lambda: redirect("comment", comment_id=comment_id),
        parent_id=comment_id,
    )
    if composed.answer is not None:
        return composed.answer
    form, refused, preview = composed.form, composed.refused, composed.preview
    replies = page_or_first(
        request,
        lambda cursor: selectors.comment_replies(
            comment_id=comment_id, viewer_id=_viewer_id(request), cursor=cursor, **_just_changed(request)
        ),
    )
    views_key = counters.counter_key(kind=counters.VIEWS, object_id=comment_id)
    counted = False
    if request.method == "GET":
        # An anonymous viewer is its address, an IPv6 one its /64 (one subscriber), as every limit counts.
        anonymous = f"address:{address_subject(client_ip(request))}"
        viewer = f"user:{request.user.pk}" if request.user.is_authenticated else anonymous
        counted = services.comment_view_record(comment_id=comment_id, viewer=viewer)
        # Logged when counted: once per viewer per comment per hour, like the view count.
        if counted and request.user.is_authenticated:
            activity_record(user_id=str(request.user.pk), action="view", object_id=comment_id)
    # Exact when this view was just counted (the viewer sees it), else as list pages read counts.
    view_count = counters.counter_value(key=views_key, consistent=counted)
    thread = None  # the Mute / Watch buttons' state
    if request.user.is_authenticated and not comment.deleted:
        thread = comment_thread_state(comment_id=comment.id, parent_id=comment.parent_id, user_id=str(request.user.pk))
    context = {"comment": comment, "replies": replies, "form": form, "view_count": view_count, "thread": thread}
    context["preview"] = preview
    # A person its author blocked is told so instead of offered a form (a refused reply keeps its text).
    context["blocked"] = (
        refused is None and thread is not None and blocked_by(owner_id=comment.author.id, other_id=str(request.user.pk))
    )
    return refused_page(render(request, "social/comment.html", context), refused)


POPULAR_KINDS = {"likes": counters.LIKES, "views": counters.VIEWS, "reactions": counters.REACTIONS}


def popular(request):
    """The most liked (or viewed) comments, from the aggregated ranking."""
    kind = request.GET.get("kind") if request.GET.get("kind") in POPULAR_KINDS else "likes"
    ranked = ranking.ranking_top(kind=POPULAR_KINDS[kind], limit=20, viewer_id=_viewer_id(request))
    return render(request, "social/popular.html", {"kind": kind, "ranked": ranked})


LIKE_ACTIONS = ("like", "unlike")


@require_http_methods(["GET", "POST"])
def comment_like(request, comment_id):
    """The like button's form (without JavaScript, or when the API call failed): a POST that
    redirects back to the comment on its page.

    Sent after the session ended, the like is kept through the log-in: the log-in comes
    back here with a GET, which does the kept like (only one this browser sent, with its
    CSRF token) and goes to the comment saying so; a GET with nothing kept changes nothing.
    """
    if request.method == "GET":
        return _comment_like_after_log_in(request, comment_id)
    action = request.POST.get("action")
    if action not in LIKE_ACTIONS:
        return render(request, "400.html", {"reason": LIKE_ACTION_MISSING}, status=400)
    if not request.user.is_authenticated:
        if drafts.like_keep(request, comment_id=comment_id, action=action):
            messages.info(
                request,
                gettext("Log in to like that comment: it is done as soon as you are in.")
                if action == "like"
                else gettext("Log in to unlike that comment: it is done as soon as you are in."),
            )
        else:
            messages.info(
                request,
                gettext("Log in, then press the heart again to like that comment.")
                if action == "like"
                else gettext("Log in, then press the heart again to unlike that comment."),
            )
        return redirect(drafts.login_url(request.path))
    return _like_and_go_back(request, comment_id=comment_id, action=action, back=back_url(request))


def _comment_like_after_log_in(request, comment_id):
    kept = drafts.like_take(request, comment_id=comment_id) if request.user.is_authenticated else None
    if kept is None or kept.get("action") not in LIKE_ACTIONS:  # a kept reaction is done at its own address
        messages.info(request, gettext("Nothing was changed: press the heart to like or unlike."))
        return redirect("comment", comment_id=comment_id)
    back = reverse("comment", args=[comment_id])
    return _like_and_go_back(request, comment_id=comment_id, action=kept["action"], back=back, say_done=True)


def _like_and_go_back(request, *, comment_id: str, action: str, back: str, say_done: bool = False):
    user_id = str(request.user.pk)

    def change() -> object:
        if action == "unlike":
            return like_remove(comment_id=comment_id, user_id=user_id)
        return like_add(comment_id=comment_id, user_id=user_id)

    done = gettext("You liked the comment.") if action == "like" else gettext("You unliked the comment.")
    return comment_change_and_go_back(
        request, comment_id=comment_id, back=back, change=change, done=done if say_done else None
    )


def signup(request):
    if not settings.SIGNUP_OPEN:
        messages.error(request, gettext("Sign-up is closed."))
        return redirect("login")
    form, refused, user = SignUpForm(request.POST or None), None, None
    if request.method == "POST" and form.is_valid():
        fields = form.cleaned_data
        try:  # as the API signs up: the network's limit, then the account (a name taken meanwhile: 400)
            user = account_sign_up(
                username=fields["username"],
                password=fields["password1"],
                display_name=fields.get("display_name") or "",
                email=fields.get("email") or "",
                address=client_ip(request),
            )
        except RateLimited as error:
            form.add_error(None, error.message)  # the names typed stay in the form
            refused = error
        except ApplicationError as error:
            form.add_error(error.field, error.message)
    if user is not None:
        login(request, user, backend=settings.AUTHENTICATION_BACKENDS[0])
        messages.success(request, gettext("Welcome, %(shown_name)s!") % {"shown_name": user.shown_name})
        return redirect("timeline")
    focus_first_error(form)
    return refused_page(render(request, "registration/signup.html", {"form": form}), refused)
