"""Pages reached from mails: one-click unsubscribe (RFC 8058) and e-mail verification (GET shows a button)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from notifications.mail.content import KIND_NAMES
from notifications.mail.tokens import DIGEST, unsubscribe_read
from notifications.mail.verification import email_verify, email_verify_account
from notifications.preferences.selectors import KINDS, preferences_get
from notifications.preferences.services import preferences_update


@csrf_exempt  # RFC 8058: the mail client POSTs without a session or a CSRF token; the signed token is the proof
@require_http_methods(["GET", "HEAD", "POST"])
def mail_unsubscribe(request: HttpRequest, token: str) -> HttpResponse:
    """GET shows what the link turns off, with a button (link scanners GET: nothing changes);
    POST (the button, or the mail client's one-click `List-Unsubscribe=One-Click`) turns it off."""
    found = unsubscribe_read(token)
    if found is None or (found.kind not in KINDS and found.kind != DIGEST):
        return render(request, "notifications/mail/unsubscribe_bad.html", status=400)
    if not get_user_model().objects.filter(pk=found.user_id, is_active=True).exists():
        return render(request, "notifications/mail/unsubscribe_bad.html", status=404)
    what = KIND_NAMES[found.kind]
    if request.method == "POST":
        # Never refused (a mail client's one-click POST is not retried): no limit, and a write
        # only while that e-mail is still on, so a flood of POSTs costs reads, not writes.
        current = preferences_get(user_id=found.user_id, consistent=True)
        if found.kind == DIGEST and current.digest != "off":
            preferences_update(user_id=found.user_id, patch={"digest": "off"}, limited=False)
        elif found.kind != DIGEST and current.wants(found.kind, "email"):
            preferences_update(user_id=found.user_id, patch={"kinds": {found.kind: {"email": False}}}, limited=False)
        return render(request, "notifications/mail/unsubscribe.html", {"what": what, "done": True})
    return render(request, "notifications/mail/unsubscribe.html", {"what": what, "done": False})


@require_http_methods(["GET", "HEAD", "POST"])
def email_verify_page(request: HttpRequest, token: str) -> HttpResponse:
    """The link of a verification mail. GET shows the address and a button (mail scanners GET
    links: nothing changes); the button's POST verifies it, or the page says why not."""
    if request.method != "POST":
        pending = email_verify_account(token=token)
        if pending is None:
            return render(request, "notifications/mail/verify_bad.html", status=400)
        context = {"email": pending.email, "username": pending.get_username()}
        return render(request, "notifications/mail/verify_confirm.html", context)
    user = email_verify(token=token)
    if user is None:
        return render(request, "notifications/mail/verify_bad.html", status=400)
    if request.user.is_authenticated and request.user.pk == user.pk:
        messages.success(request, f"Your e-mail address {user.email} is verified.")
        return redirect("account-settings")
    return render(request, "notifications/mail/verified.html", {"email": user.email})
