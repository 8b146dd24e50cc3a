"""Pages reached from mails: one-click unsubscribe (RFC 8058) and e-mail verification, of one
account or of any account waiting on an address (GET shows a button)."""

from __future__ import annotations

import math

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from notifications.mail.content import KIND_NAMES
from notifications.mail.tokens import DIGEST, address_digest, unsubscribe_read
from notifications.mail.verification import (
    ADDRESS_PAGE_SIZE,
    address_account_verify,
    address_accounts,
    email_verify,
    email_verify_account,
)
from notifications.preferences.selectors import KINDS, preferences_get
from notifications.preferences.services import preferences_update
from project.http.security import client_ip
from project.limits.store import address_subject, limit_hit, rate_limited_message

# One-click unsubscribes per client network (IPv6: its /64): a person clicks a few, a mail
# client posts one per mail; a script replaying links gets 429.
UNSUBSCRIBE_RULES = "30/min,300/hour"


@csrf_exempt  # RFC 8058: the mail client POSTs without a session or a CSRF token; the signed token is the proof
@require_http_methods(["GET", "HEAD", "POST"])
def mail_unsubscribe(request: HttpRequest, token: str) -> HttpResponse:
    """GET shows what the link turns off, with a button (link scanners GET: nothing changes);
    POST (the button, or the mail client's one-click `List-Unsubscribe=One-Click`) turns it off."""
    found = unsubscribe_read(token)
    if found is None or (found.kind not in KINDS and found.kind != DIGEST):
        return render(request, "notifications/mail/unsubscribe_bad.html", status=400)
    user = get_user_model().objects.filter(pk=found.user_id, is_active=True).first()
    if user is None:
        return render(request, "notifications/mail/unsubscribe_bad.html", status=404)
    if found.address and found.address != address_digest(user.email or ""):
        # The link was mailed to an address the account no longer has: whoever holds it now
        # (the old address's new owner) decides nothing about this account's mail.
        return render(request, "notifications/mail/unsubscribe_bad.html", status=400)
    what = KIND_NAMES[found.kind]
    if request.method == "POST":
        # Limited per client network (UNSUBSCRIBE_RULES, far above what mail clients send), and a
        # write only while that e-mail is still on, so a flood of POSTs costs reads, not writes.
        decision = limit_hit(name="unsubscribe", subject=address_subject(client_ip(request)), rules=UNSUBSCRIBE_RULES)
        if not decision.allowed:
            refused = HttpResponse(rate_limited_message(decision.retry_after), status=429, content_type="text/plain")
            refused["Retry-After"] = str(max(1, math.ceil(decision.retry_after)))
            return refused
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
        messages.success(request, gettext("Your e-mail address %(email)s is verified.") % {"email": user.email})
        return redirect("account-settings")
    return render(request, "notifications/mail/verified.html", {"email": user.email})


@require_http_methods(["GET", "HEAD", "POST"])
def email_address_accounts(request: HttpRequest, token: str) -> HttpResponse:
    """The address's link in a verification mail: GET lists every account waiting on the address,
    newest first, a page at a time, each with a Verify button (mail scanners GET links: nothing
    changes); a button's POST verifies that one account's address."""
    found = address_accounts(token=token)
    if found is None:
        return render(request, "notifications/mail/verify_bad.html", status=400)
    email, waiting = found
    if request.method == "POST":
        user = address_account_verify(email=email, username=request.POST.get("username", ""))
        if user is not None:
            return render(request, "notifications/mail/verified.html", {"email": user.email})
        messages.error(
            request, gettext("That account no longer waits on this address: verified already, or given another one.")
        )
        return redirect(request.path)
    page = Paginator(waiting, ADDRESS_PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "notifications/mail/address_accounts.html", {"email": email, "page": page})
