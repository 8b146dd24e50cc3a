"""Admin page: the mail ledger, by person (every line) or by delivery (every person, inbox and e-mail)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.urls import path
from django.utils.translation import gettext, gettext_noop

from delivery.ledger import delivery_ledger
from notifications.mail.selectors import ledger_of_user
from project.admin.pages import AdminPage, DynamoAdmin, dynamo_admin
from project.errors import NotFound


class MailLedgerAdmin(DynamoAdmin):
    pages = [AdminPage(gettext_noop("Mail ledger"), "dynamo-mail-ledger")]

    def get_urls(self):
        return [path("mail-ledger/", self.admin_site.admin_view(self.ledger_view), name="dynamo-mail-ledger")]

    def ledger_view(self, request):
        username = request.GET.get("username", "").strip()
        delivery_id = request.GET.get("delivery", "").strip()
        context = {"title": gettext("Mail ledger"), "username": username, "delivery_id": delivery_id, "note": ""}
        if username:
            user = get_user_model().objects.filter(username__iexact=username).first()
            if user is None:
                context["note"] = gettext("No user named %(username)s.") % {"username": repr(username)}
            else:
                context["found_user"] = user
                context["lines"] = ledger_of_user(user_id=str(user.pk))
        elif delivery_id:
            try:
                rows = delivery_ledger(delivery_id=delivery_id)
            except NotFound:
                context["note"] = gettext("No delivery %(delivery_id)s.") % {"delivery_id": repr(delivery_id)}
            else:
                names = dict(
                    get_user_model()
                    .objects.filter(pk__in=[int(row.user_id) for row in rows if row.user_id.isdigit()])
                    .values_list("pk", "username")
                )
                context["rows"] = [(row, names.get(int(row.user_id), gettext("(deleted)"))) for row in rows]
        return self.render(request, "admin/dynamo/mail_ledger.html", context)


dynamo_admin.register(MailLedgerAdmin)
