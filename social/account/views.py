"""The settings page: display name, e-mail address (verified through a link it mails), language,
time zone, quiet hours and digest hour; the language switcher (/language/); the pages to delete
one's account (/me/delete/) and download one's data (/me/export/); logging out."""

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.utils import translation
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.debug import sensitive_post_parameters, sensitive_variables
from django.views.decorators.http import require_http_methods

from notifications.mail.verification import email_address_set, email_verification_send
from project.errors import ApplicationError, LockedOut, PermissionDenied, RateLimited
from project.http.locales import language_of
from project.http.security import client_ip
from project.http.views import refused_page
from social import drafts, services
from social.account import language
from social.account.selectors import account_export_chunks
from social.account.services import account_delete_request, account_export_allow


class DisplayNameForm(forms.Form):
    display_name = forms.CharField(
        max_length=services.DISPLAY_NAME_MAX_LENGTH,
        required=False,
        label=gettext_lazy("Display name"),
        help_text=gettext_lazy("Shown beside your comments. Leave it empty to show your username."),
    )


class EmailForm(forms.Form):
    email = forms.EmailField(
        required=False,
        label=gettext_lazy("E-mail address"),
        help_text=gettext_lazy(
            "For the notification e-mail you choose and password resets. A new address is used "
            "for notifications once you follow the link we send to it."
        ),
    )


def _hours() -> list[tuple[str, str]]:
    return [(str(hour), f"{hour:02d}:00") for hour in range(24)]


class LanguageForm(forms.Form):
    """Language, time zone, quiet hours and digest hour (social.account.language checks them again)."""

    locale = forms.ChoiceField(label=gettext_lazy("Language"), required=False)
    time_zone = forms.CharField(
        label=gettext_lazy("Time zone"),
        required=False,
        max_length=64,
        help_text=gettext_lazy("An IANA name such as Europe/Warsaw or Asia/Tokyo. Empty: your browser's."),
    )
    quiet_start = forms.ChoiceField(label=gettext_lazy("No e-mail from"), required=False)
    quiet_end = forms.ChoiceField(
        label=gettext_lazy("until"),
        required=False,
        help_text=gettext_lazy("What arrives in these hours comes as one e-mail when they end."),
    )
    digest_hour = forms.ChoiceField(label=gettext_lazy("Digest at"), required=False)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        site_hour = _("The site's hour (%(hour)02d:00)") % {"hour": int(settings.NOTIFY_DIGEST_HOUR)}
        choices = {
            "locale": [("", _("Your browser's language")), *settings.LANGUAGES],
            "quiet_start": [("", _("No quiet hours")), *_hours()],
            "quiet_end": [("", "—"), *_hours()],
            "digest_hour": [("", site_hour), *_hours()],
        }
        for name, field_choices in choices.items():
            field = self.fields[name]
            assert isinstance(field, forms.ChoiceField)
            field.choices = field_choices

    def changes(self) -> dict:
        data = dict(self.cleaned_data)
        for name in language.HOUR_FIELDS:
            data[name] = int(data[name]) if data.get(name) not in (None, "") else None
        return language.language_changes(data)


def _language_initial(user) -> dict:
    return {name: "" if getattr(user, name) is None else getattr(user, name) for name in language.FIELDS}


def account_settings(request):
    """Change one's display name and e-mail address (and have it verified); links to the password
    change. Saved after the session ended: nothing saved, the values back in the form after the log-in."""
    if not request.user.is_authenticated:
        return drafts.form_keep_and_log_in(request, what=_("your settings"))
    user = request.user
    action = request.POST.get("action", "name") if request.method == "POST" else None
    kept = drafts.form_take(request, path=request.path) if request.method == "GET" else None
    name_initial, email_initial = user.display_name, user.email
    language_initial = _language_initial(user)
    if kept:
        name_initial = (kept.get("display_name") or [name_initial])[0]
        email_initial = (kept.get("email") or [email_initial])[0]
        language_initial |= {name: kept[name][0] for name in language.FIELDS if kept.get(name)}
        messages.info(request, _("Your changes are back in the form, not saved yet: press Save to keep them."))
    form = DisplayNameForm(request.POST if action == "name" else None, initial={"display_name": name_initial})
    email_form = EmailForm(request.POST if action in ("email", "verify") else None, initial={"email": email_initial})
    language_form = LanguageForm(request.POST if action == "language" else None, initial=language_initial)
    if action == "language" and language_form.is_valid():
        try:
            language.user_language_set(user=user, changes=language_form.changes())
        except ApplicationError as error:
            language_form.add_error(getattr(error, "field", None) or None, error.message)
        else:
            if user.locale:  # the message in the language just chosen
                translation.activate(user.locale)
            messages.success(request, _("Saved: your language and time settings."))
            return redirect("account-settings")
    if action == "name" and form.is_valid():
        try:
            services.user_display_name_set(user=user, display_name=form.cleaned_data["display_name"])
        except ApplicationError as error:
            form.add_error("display_name", error.message)
        else:
            messages.success(request, _("Saved: your comments now show “%(name)s”.") % {"name": user.shown_name})
            return redirect("account-settings")
    if action in ("email", "verify") and email_form.is_valid():
        try:
            changed = email_address_set(user=user, email=email_form.cleaned_data["email"])
            if user.email and (changed or action == "verify"):
                email_verification_send(user=user)
                messages.success(
                    request, _("We sent a verification link to %(email)s: follow it to verify.") % {"email": user.email}
                )
            elif changed:
                messages.success(request, _("Saved: your account has no e-mail address now."))
            return redirect("account-settings")
        except (ApplicationError, RateLimited) as error:
            email_form.add_error("email", error.message)
    return render(
        request, "social/settings.html", {"form": form, "email_form": email_form, "language_form": language_form}
    )


@require_http_methods(["GET", "POST"])
def language_choose(request):
    """The switcher: remember the language in the language cookie and, for a logged-in person, in
    their settings (so mails follow); back to the page it was chosen on. Twice: the same again.

    A visitor's switcher is a GET that only sets the cookie (their pages then set no CSRF cookie);
    a logged-in person's choice changes their settings, so it is a POST with its CSRF check: a GET
    from them sets the cookie only."""
    data = request.POST if request.method == "POST" else request.GET
    code = data.get("language", "")
    after = data.get("next", "")
    if not url_has_allowed_host_and_scheme(
        after, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        after = "/"
    response = redirect(after)
    if language_of(code):
        if request.method == "POST" and request.user.is_authenticated:
            language.user_language_set(user=request.user, changes={"locale": code})
        response.set_cookie(
            settings.LANGUAGE_COOKIE_NAME,
            code,
            max_age=365 * 24 * 3600,
            samesite="Lax",
            secure=request.is_secure(),
        )
    return response


class AccountDeleteForm(forms.Form):
    password = forms.CharField(
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
        max_length=128,
        label=gettext_lazy("Your password"),
        help_text=gettext_lazy("To be sure it is you."),
    )


def export_response(*, user_id: str, username: str) -> StreamingHttpResponse:
    """The export as a streamed JSON download (the API answers the same)."""
    response = StreamingHttpResponse(account_export_chunks(user_id=user_id), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="dynamo-social-{username}.json"'
    response["Cache-Control"] = "no-store"
    return response


@login_required
def account_export(request):
    """Download everything stored about oneself as one JSON file (a few a day)."""
    try:
        account_export_allow(user_id=str(request.user.pk))
    except RateLimited as error:
        return refused_page(render(request, "social/account/export_refused.html", {"error": error}), error)
    return export_response(user_id=str(request.user.pk), username=request.user.username)


@sensitive_post_parameters("password")
@sensitive_variables("password")
@login_required
def account_delete(request):
    """Delete one's account: the password confirms; at once nobody can log in to it, and the
    eraser removes what is theirs within minutes (docs/explanation/security.md says what is kept)."""
    form = AccountDeleteForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            account_delete_request(
                user=request.user, password=form.cleaned_data["password"], address=client_ip(request)
            )
        except LockedOut as refusal:
            form.add_error("password", refusal.message)
            return refused_page(render(request, "social/account/delete.html", {"form": form}), refusal)
        except (ApplicationError, PermissionDenied) as error:
            form.add_error("password" if getattr(error, "field", None) else None, error.message)
        else:
            logout(request)
            return render(request, "social/account/deleted.html")
    return render(request, "social/account/delete.html", {"form": form})


class LogoutView(auth_views.LogoutView):
    """Django's log-out (POST only), saying so on the page it leads to. Twice: the second is a
    log-out of nobody, and says the same."""

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        response = super().post(request, *args, **kwargs)
        messages.info(request, _("You are logged out."))  # into the new, empty session
        return response
