"""Log-in pages with the second step, the two-factor set-up and removal pages, the password
reset that trusts its browser, and the admin's "staff need two-factor" gate.

The log-in's first step checks the password (project.identity.login.LimitedModelBackend with
`otp_step=True`); for an account with two-factor on it logs nobody in but keeps the
pending log-in in the session (for LOGIN_CODE_SECONDS) and sends the browser to the code
step, whose every try is a counted attempt in the log-in limits.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import REDIRECT_FIELD_NAME, authenticate, get_user_model
from django.contrib.auth import login as auth_login
from django.contrib.auth import logout as auth_logout
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext, gettext_lazy, ngettext
from django.views.decorators.cache import never_cache
from django.views.decorators.debug import sensitive_post_parameters
from django_otp import login as otp_login
from django_otp.plugins.otp_static.models import StaticDevice

from project.clock import clock
from project.errors import ApplicationError, LockedOut
from project.http.security import client_ip
from project.http.views import refused_page
from project.identity.login import password_check_limited
from project.identity.login_devices import device_cookie_issue, device_nonce
from project.identity.login_limits import LoginAttempt, login_attempt_begin, login_attempt_end
from project.identity.two_factor import services

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponse

PENDING_KEY = "login_pending"
LOGIN_CODE_SECONDS = 300  # the code step waits this long for its code after the password
CODE_HELP = gettext_lazy("The 6 digits your authenticator app shows now, or one of your recovery codes.")


class CodeForm(forms.Form):
    code = forms.CharField(
        max_length=32,
        label=gettext_lazy("Code"),
        help_text=CODE_HELP,
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "inputmode": "text", "autofocus": True}),
    )


class TwoStepFormMixin:
    """AuthenticationForm's check, telling the backend that this page asks for the code itself."""

    request: HttpRequest | None
    cleaned_data: dict[str, Any]
    user_cache: Any

    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username")
        password = self.cleaned_data.get("password")
        if username is not None and password:
            self.user_cache = authenticate(self.request, username=username, password=password, otp_step=True)
            if self.user_cache is None:
                raise self.get_invalid_login_error()  # type: ignore[attr-defined]
            self.confirm_login_allowed(self.user_cache)  # type: ignore[attr-defined]
        return self.cleaned_data


# Usernames match in any case ("ALICE" logs in as alice); passwords only exactly as typed.
INVALID_LOGIN = (
    "That username and password do not match an account. The password must be typed exactly: capitals count."
)


class TwoStepAuthenticationForm(TwoStepFormMixin, AuthenticationForm):
    error_messages = {**AuthenticationForm.error_messages, "invalid_login": INVALID_LOGIN}


class TwoStepAdminAuthenticationForm(TwoStepFormMixin, AdminAuthenticationForm):
    error_messages = {
        **AdminAuthenticationForm.error_messages,
        "invalid_login": "That username and password do not match a staff account. "
        "The password must be typed exactly: capitals count.",
    }


class LoginView(auth_views.LoginView):
    """Django's log-in page; an account with two-factor on continues at the code step."""

    form_class = TwoStepAuthenticationForm
    code_url_name = "login-code"

    def form_valid(self, form: AuthenticationForm) -> HttpResponse:
        pending: LoginAttempt | None = getattr(self.request, "login_pending", None)
        if pending is None:
            return super().form_valid(form)
        user = form.get_user()
        self.request.session[PENDING_KEY] = {
            "user_id": str(user.pk),
            "backend": getattr(user, "backend", settings.AUTHENTICATION_BACKENDS[0]),
            "attempt": asdict(pending),
            "at": clock.now(),
        }
        query = urlencode({REDIRECT_FIELD_NAME: self.get_success_url()})
        return HttpResponseRedirect(f"{reverse(self.code_url_name)}?{query}")


def _pending_user(request: HttpRequest) -> tuple[Any, dict[str, Any]] | None:
    pending = request.session.get(PENDING_KEY)
    if not isinstance(pending, dict) or clock.now() - float(pending.get("at", 0)) > LOGIN_CODE_SECONDS:
        return None
    user = get_user_model()._default_manager.filter(pk=pending["user_id"], is_active=True).first()
    return (user, pending) if user is not None else None


def _safe_next(request: HttpRequest, default: str) -> str:
    target = request.POST.get(REDIRECT_FIELD_NAME) or request.GET.get(REDIRECT_FIELD_NAME) or ""
    allowed = url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return target if target and allowed else default


@sensitive_post_parameters("code")
@never_cache
def login_code(
    request: HttpRequest,
    *,
    template_name: str = "registration/login_code.html",
    login_url_name: str = "login",
    extra_context: dict[str, Any] | None = None,
) -> HttpResponse:
    """The log-in's second step: the code from the app (or a recovery code), counted in the limits."""
    found = _pending_user(request)
    if found is None:
        messages.error(request, gettext("Your log-in waited too long for its code: log in again."))
        return redirect(login_url_name)
    user, pending = found
    next_url = _safe_next(request, reverse(settings.LOGIN_REDIRECT_URL))
    form = CodeForm(request.POST or None)
    refusal: LockedOut | None = None
    if request.method == "POST" and form.is_valid():
        username = user.get_username()
        try:
            attempt = login_attempt_begin(
                username=username, address=client_ip(request), device=device_nonce(request, user)
            )
        except LockedOut as error:
            refusal = error
            form.add_error(None, error.message)
        else:
            device = services.second_factor_verify(user=user, code=form.cleaned_data["code"])
            earlier = LoginAttempt(**pending["attempt"])
            login_attempt_end(attempt, user_id=str(user.pk), succeeded=device is not None, earlier=earlier)
            if device is None:
                form.add_error("code", _code_refusal(user, form.cleaned_data["code"]))
            else:
                del request.session[PENDING_KEY]
                user.otp_device = device  # django_otp marks the session verified at log-in
                auth_login(request, user, backend=pending["backend"])
                device_cookie_issue(request, user)
                _recovery_code_notice(request, user, device)
                return HttpResponseRedirect(next_url)
    refused_code_cleared(form)
    context = {**(extra_context or {}), "form": form, "next": next_url, "username": user.get_username()}
    return refused_page(render(request, template_name, context), refusal)


def _code_refusal(user: Any, code: str) -> str:
    return str(services.CODE_JUST_USED if services.code_just_used(user=user, code=code) else services.CODE_WRONG)


def _recovery_code_notice(request: HttpRequest, user: Any, device: Any) -> None:
    """After a log-in with a recovery code: how many are left, and where to get new ones."""
    if not isinstance(device, StaticDevice):
        return
    left = services.recovery_codes_left(user=user)
    messages.warning(
        request,
        ngettext(
            "You logged in with a recovery code: %(count)d recovery code left. Get new ones on the "
            "two-factor page (Settings) before they run out.",
            "You logged in with a recovery code: %(count)d recovery codes left. Get new ones on the "
            "two-factor page (Settings) before they run out.",
            left,
        )
        % {"count": left},
    )


class PasswordResetConfirmView(auth_views.PasswordResetConfirmView):
    """Django's reset confirmation; a successful reset marks this browser as the account's
    own (a device cookie), so the owner gets in while strangers have spent the untrusted budget."""

    def form_valid(self, form: Any) -> HttpResponse:
        response = super().form_valid(form)
        device_cookie_issue(self.request, form.user)
        return response


class PasswordForm(forms.Form):
    password = forms.CharField(label=gettext_lazy("Your password"), strip=False, widget=forms.PasswordInput)


class TurnOnForm(PasswordForm, CodeForm):
    pass


class RemoveForm(CodeForm, PasswordForm):
    pass


def refused_code_cleared(form: forms.Form) -> None:
    """A form whose code was refused shows its field empty, so the next code is not appended."""
    if form.is_bound and "code" in form.errors:
        data: Any = form.data
        form.data = {**data.dict(), "code": ""} if hasattr(data, "dict") else {**data, "code": ""}


def password_checked(request: HttpRequest, form: forms.Form) -> bool:
    """The form's password is the account's, checked inside the log-in limits (a wrong one
    counts as a failed log-in; LockedOut once the budget is spent)."""
    user: Any = request.user
    if password_check_limited(user, form.cleaned_data["password"], address=client_ip(request)):
        return True
    form.add_error("password", "That is not your password.")
    return False


@sensitive_post_parameters("password", "code")
@login_required
def two_factor_settings(request: HttpRequest) -> HttpResponse:
    """Turn two-factor on (scan the QR code, type a code and the password: recovery codes are
    shown once), see how many recovery codes are left, get new ones (the password), or go to
    turn it off. Each visit shows a new key (services.totp_setup_begin)."""
    user: Any = request.user  # logged in (login_required)
    enabled = services.second_factor_enabled(user=user)
    action = request.POST.get("action") if request.method == "POST" else None
    form = TurnOnForm(request.POST if action == "confirm" else None)
    renew_form = PasswordForm(request.POST if action == "renew" else None)
    codes: list[str] = []
    refusal: LockedOut | None = None
    try:
        if action == "renew" and enabled and renew_form.is_valid() and password_checked(request, renew_form):
            codes = services.recovery_codes_renew(user=user)
            messages.success(request, gettext("New recovery codes: the old ones no longer work."))
        if action == "confirm" and not enabled and form.is_valid() and password_checked(request, form):
            try:
                device, codes = services.totp_setup_confirm(user=user, code=form.cleaned_data["code"])
            except ApplicationError as error:
                form.add_error("code", error.message)
            else:
                otp_login(request, device)  # this session is verified: the staff gate lets it into the admin
                enabled = True
                messages.success(
                    request, gettext("Two-factor log-in is on: from now on you log in with your password and a code.")
                )
    except LockedOut as error:
        refusal = error
        (form if action == "confirm" else renew_form).add_error(None, error.message)
    refused_code_cleared(form)
    context: dict[str, Any] = {
        "enabled": enabled,
        "form": form,
        "renew_form": renew_form,
        "codes": codes,
        "codes_text": "".join(f"{code}\n" for code in codes),
        "next": _safe_next(request, ""),
    }
    if enabled:
        context["codes_left"] = services.recovery_codes_left(user=user)
    else:
        device = services.totp_setup_begin(user=user, fresh=request.method != "POST")
        context["qr_svg"] = services.totp_qr_svg(device)
        context["secret"] = services.totp_secret_text(device)
        context["setup_minutes"] = services.SETUP_MINUTES
    return refused_page(render(request, "two_factor/settings.html", context), refusal)


@sensitive_post_parameters("password", "code")
@login_required
def two_factor_remove(request: HttpRequest) -> HttpResponse:
    """Turn two-factor off: needs the password and a code, both checked inside the log-in limits."""
    user: Any = request.user  # logged in (login_required)
    if not services.second_factor_enabled(user=user):
        return redirect("two-factor")
    form = RemoveForm(request.POST or None)
    refusal: LockedOut | None = None
    if request.method == "POST" and form.is_valid():
        address = client_ip(request)
        try:
            if not password_check_limited(user, form.cleaned_data["password"], address=address):
                form.add_error("password", "That is not your password.")
            else:
                attempt = login_attempt_begin(username=user.get_username(), address=address, signed_in=True)
                device = services.second_factor_verify(user=user, code=form.cleaned_data["code"])
                login_attempt_end(attempt, user_id=str(user.pk), succeeded=device is not None)
                if device is None:
                    form.add_error("code", _code_refusal(user, form.cleaned_data["code"]))
                else:
                    services.second_factor_remove(user=user)
                    messages.success(request, gettext("Two-factor log-in is off: your password alone logs you in."))
                    return redirect("two-factor")
        except LockedOut as error:
            refusal = error
            form.add_error(None, error.message)
    refused_code_cleared(form)
    return refused_page(render(request, "two_factor/remove.html", {"form": form}), refusal)


def staff_second_factor_gate(request: HttpRequest, *, login_url: str) -> HttpResponse | None:
    """With TOTP_REQUIRED_FOR_STAFF, the admin opens to staff only in a session that logged in
    with a code: staff without two-factor are sent to set it up first; staff with it whose
    session did not use it log in again. None: let them in."""
    user: Any = request.user
    if not (settings.TOTP_REQUIRED_FOR_STAFF and user.is_active and user.is_staff):
        return None
    if getattr(user, "is_verified", lambda: False)():
        return None
    if services.second_factor_enabled(user=user):
        auth_logout(request)
        messages.error(request, gettext("The admin needs a log-in with your two-factor code: log in again."))
        return HttpResponseRedirect(f"{login_url}?{urlencode({REDIRECT_FIELD_NAME: request.get_full_path()})}")
    messages.info(request, gettext("Staff need two-factor log-in to open the admin: set it up here first."))
    return HttpResponseRedirect(f"{reverse('two-factor')}?{urlencode({REDIRECT_FIELD_NAME: request.get_full_path()})}")
