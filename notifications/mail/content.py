"""The mails themselves: subject, plain text, a simple HTML alternative, and the
one-click unsubscribe headers every mail carries (RFC 8058)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.utils.translation import gettext_lazy, ngettext

from notifications.mail.checks import About, Recipient
from notifications.mail.tokens import DIGEST, unsubscribe_url
from social.display_names import display_name_clean, names_quoted

KIND_NAMES = {
    "like": gettext_lazy("likes of your comments"),
    "reaction": gettext_lazy("reactions to your comments"),
    "reply": gettext_lazy("replies"),
    "mention": gettext_lazy("mentions"),
    "message": gettext_lazy("messages from the site's staff"),
    DIGEST: gettext_lazy("the digest"),
}
SUBJECT_MAX = 120


def site_url(path: str) -> str:
    """An absolute link on the site: SITE_URL, never the host a request came with."""
    if path.startswith(("http://", "https://")):
        return path
    return f"{settings.SITE_URL}/{path.lstrip('/')}"


def _message(*, recipient: Recipient, subject: str, template: str, context: dict[str, Any], unsubscribe: str) -> Any:
    link = unsubscribe_url(user_id=recipient.user_id, kind=unsubscribe, email=recipient.address)
    context = {
        **context,
        "recipient": recipient,
        "unsubscribe_url": link,
        "unsubscribe_what": KIND_NAMES.get(unsubscribe, unsubscribe),
        "settings_url": site_url("/me/notifications/"),
    }
    message = EmailMultiAlternatives(
        # One line (a header cannot hold a line break), no format character (a bidi override
        # in a name stored before they were refused would reorder what follows it).
        subject=display_name_clean(subject)[:SUBJECT_MAX],
        body=render_to_string(f"notifications/mail/{template}.txt", context),
        to=[recipient.address],
        headers={"List-Unsubscribe": f"<{link}>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"},
    )
    message.attach_alternative(render_to_string(f"notifications/mail/{template}.html", context), "text/html")
    return message


def notification_message(*, recipient: Recipient, about: About) -> EmailMultiAlternatives:
    """One notification's mail: what happened, its first words, a link to read it."""
    message: EmailMultiAlternatives = _message(
        recipient=recipient,
        subject=names_quoted(about.text, about.names),  # “Bob” replied to your comment
        template="notification",
        context={"about": about, "link": site_url(about.path)},
        unsubscribe=about.kind,
    )
    return message


def account_message(*, recipient: Recipient, about: About) -> EmailMultiAlternatives:
    """A mail about the account itself (notifications.mail.account): what changed, what to do
    if it was not them; no unsubscribe link."""
    context = {"recipient": recipient, "about": about, "link": site_url(about.path)}
    message = EmailMultiAlternatives(
        subject=" ".join(about.text.split())[:SUBJECT_MAX],
        body=render_to_string("notifications/mail/account.txt", context),
        to=[recipient.address],
    )
    message.attach_alternative(render_to_string("notifications/mail/account.html", context), "text/html")
    return message


def digest_message(*, recipient: Recipient, period: str, items: list[About], more: int) -> EmailMultiAlternatives:
    """The digest: the unread inbox items, newest first, and how many more wait."""
    count = len(items) + more
    subject = ngettext(
        "%(count)d unread notification on Dynamo Social", "%(count)d unread notifications on Dynamo Social", count
    ) % {"count": count}
    message: EmailMultiAlternatives = _message(
        recipient=recipient,
        subject=subject,
        template="digest",
        context={
            "items": [(item, site_url(item.path)) for item in items],
            "more": more,
            "period": period,
            "inbox_url": site_url("/notifications/"),
        },
        unsubscribe=DIGEST,
    )
    return message


def quiet_message(*, recipient: Recipient, items: list[About], more: int) -> EmailMultiAlternatives:
    """The one mail at the end of quiet hours: what arrived in them and is still unread."""
    count = len(items) + more
    subject = ngettext(
        "While your quiet hours lasted: %(count)d unread notification",
        "While your quiet hours lasted: %(count)d unread notifications",
        count,
    ) % {"count": count}
    context = {
        "recipient": recipient,
        "items": [(item, site_url(item.path)) for item in items],
        "more": more,
        "inbox_url": site_url("/notifications/"),
        "settings_url": site_url("/me/settings/"),
    }
    message = EmailMultiAlternatives(
        subject=display_name_clean(subject)[:SUBJECT_MAX],
        body=render_to_string("notifications/mail/quiet.txt", context),
        to=[recipient.address],
    )
    message.attach_alternative(render_to_string("notifications/mail/quiet.html", context), "text/html")
    return message
