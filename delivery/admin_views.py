"""Staff pages for deliveries: list with progress, create (three audience kinds), detail, cancel."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.models import Group
from django.http import HttpResponseRedirect
from django.urls import path, reverse
from django.utils.decorators import method_decorator
from django.utils.translation import gettext, gettext_lazy, gettext_noop, ngettext
from django.views.decorators.http import require_POST

from delivery import preparation, selectors, services
from delivery.apis import USERNAMES_MAX
from delivery.models import AUDIENCE_ALL, AUDIENCE_GROUP, AUDIENCE_USERNAMES, DRAFT, FINAL_STATUSES, PREPARING
from project.admin.pages import AdminPage, DynamoAdmin, dynamo_admin
from project.dynamo.cursors import page_or_first
from project.errors import ApplicationError, NotFound
from project.http.fresh import FRESH_DELIVERIES
from project.http.views import refused_page

USERNAMES_FILE_MAX_BYTES = 5 * 1024 * 1024


class DeliveryForm(forms.Form):
    title = forms.CharField(max_length=100, label=gettext_lazy("Title"))
    body = forms.CharField(
        max_length=400, label=gettext_lazy("Body"), widget=forms.Textarea(attrs={"rows": 5, "cols": 60})
    )
    url = forms.URLField(max_length=500, required=False, label=gettext_lazy("Link (optional)"), assume_scheme="https")
    audience = forms.ChoiceField(
        choices=[
            (AUDIENCE_ALL, gettext_lazy("All active users")),
            (AUDIENCE_GROUP, gettext_lazy("One group")),
            (AUDIENCE_USERNAMES, gettext_lazy("A list of usernames")),
        ],
        widget=forms.RadioSelect(attrs={"class": "radiolist"}),
        initial=AUDIENCE_ALL,
        label=gettext_lazy("Audience"),
    )
    # `data-audience`: the audience kind a field belongs to; audience.js shows only the chosen kind's fields.
    group = forms.ChoiceField(
        required=False,
        choices=(),
        label=gettext_lazy("Group"),
        widget=forms.Select(attrs={"data-audience": AUDIENCE_GROUP}),
    )
    usernames = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 6, "cols": 40, "data-audience": AUDIENCE_USERNAMES}),
        label=gettext_lazy("Usernames"),
        help_text=gettext_lazy(
            "Separated by line breaks, commas, semicolons or spaces; any letter case, as at log-in."
        ),
    )
    usernames_file = forms.FileField(
        required=False,
        label=gettext_lazy("…or a file of usernames"),
        help_text=gettext_lazy("Plain text or CSV, names separated as above (a first line “username” is skipped)."),
        widget=forms.ClearableFileInput(attrs={"data-audience": AUDIENCE_USERNAMES}),
    )
    ignore_unknown = forms.BooleanField(
        required=False,
        label=gettext_lazy("Send to the known usernames and leave the unknown ones out"),
        widget=forms.CheckboxInput(attrs={"data-audience": AUDIENCE_USERNAMES}),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["group"].choices = [("", "—")] + [
            (name, name) for name in Group.objects.values_list("name", flat=True).order_by("name")
        ]

    def clean(self):
        data = super().clean()
        kind = data.get("audience")
        if kind == AUDIENCE_GROUP and not data.get("group"):
            self.add_error("group", gettext("Choose a group."))
        if kind == AUDIENCE_USERNAMES:
            names = _split_names(data.get("usernames") or "")
            upload = data.get("usernames_file")
            if upload:
                if upload.size > USERNAMES_FILE_MAX_BYTES:
                    self.add_error("usernames_file", gettext("The file is larger than 5 MB."))
                else:
                    try:
                        names += _split_names(upload.read().decode("utf-8-sig"))
                    except UnicodeDecodeError:
                        self.add_error("usernames_file", gettext("The file is not UTF-8 text."))
            if not names and not self.errors:
                self.add_error("usernames", gettext("Paste usernames or upload a file."))
            if len(names) > USERNAMES_MAX:
                self.add_error(
                    "usernames", gettext("At most %(count)s usernames per delivery.") % {"count": f"{USERNAMES_MAX:,}"}
                )
            data["names"] = names
        return data

    def to_audience(self) -> services.Audience:
        data = self.cleaned_data
        if data["audience"] == AUDIENCE_GROUP:
            return services.Audience(kind=AUDIENCE_GROUP, group=data["group"])
        if data["audience"] == AUDIENCE_USERNAMES:
            return services.Audience(
                kind=AUDIENCE_USERNAMES, usernames=tuple(data["names"]), ignore_unknown=data["ignore_unknown"]
            )
        return services.Audience(kind=AUDIENCE_ALL)


def _split_names(text: str) -> list[str]:
    """Usernames from pasted text or an uploaded file, separated as the API's are
    (services.usernames_split); a CSV's "username" header, its first word, is skipped."""
    names = services.usernames_split(text)
    return names[1:] if names and names[0].lower() == "username" else names


class DeliveryAdmin(DynamoAdmin):
    pages = [AdminPage(gettext_noop("Deliveries"), "dynamo-deliveries", add_url_name="dynamo-delivery-create")]

    def get_urls(self):
        wrap = self.admin_site.admin_view
        return [
            path("deliveries/", wrap(self.list_view), name="dynamo-deliveries"),
            path("deliveries/new/", wrap(self.create_view), name="dynamo-delivery-create"),
            path("deliveries/<str:delivery_id>/", wrap(self.detail_view), name="dynamo-delivery"),
            path("deliveries/<str:delivery_id>/cancel/", wrap(self.cancel_view), name="dynamo-delivery-cancel"),
            path("deliveries/<str:delivery_id>/prepare/", wrap(self.prepare_view), name="dynamo-delivery-prepare"),
        ]

    def list_view(self, request):
        written = FRESH_DELIVERIES.names(request)
        page = page_or_first(request, lambda cursor: selectors.delivery_list(cursor=cursor, limit=50, written=written))
        rows = [selectors.delivery_progress(delivery=delivery) for delivery in page.results]
        context = {
            "title": gettext("Deliveries"),
            "rows": rows,
            "live": any(row.delivery.status not in FINAL_STATUSES for row in rows),  # the page follows them
            "next_cursor": page.next_cursor,
        }
        return self.render(request, "admin/delivery/list.html", context)

    def create_view(self, request):
        form = DeliveryForm(request.POST or None, request.FILES or None)
        unknown, refused = [], None
        if request.method == "POST" and form.is_valid():
            try:
                delivery = services.delivery_create(
                    title=form.cleaned_data["title"],
                    body=form.cleaned_data["body"],
                    url=form.cleaned_data["url"] or None,
                    audience=form.to_audience(),
                    created_by=request.user,
                )
            except services.UnknownUsernames as error:
                unknown = error.unknown
                # The page's own words: the checkbox, not the API's field name.
                form.add_error(
                    None,
                    error.summary
                    + " "
                    + gettext("Fix the list, or tick “%(label)s”.") % {"label": form.fields["ignore_unknown"].label},
                )
            except ApplicationError as error:
                form.add_error(error.field if error.field in form.fields else None, error.message)
                refused = error
            else:
                if delivery.unknown_count:
                    created = ngettext(
                        "Delivery created (%(count)s unknown username left out).",
                        "Delivery created (%(count)s unknown usernames left out).",
                        delivery.unknown_count,
                    ) % {"count": delivery.unknown_count}
                else:
                    created = gettext("Delivery created.")
                messages.success(
                    request, created + " " + gettext("The dispatcher prepares and sends it in the background.")
                )
                response = HttpResponseRedirect(reverse("admin:dynamo-delivery", args=[delivery.delivery_id]))
                FRESH_DELIVERIES.remember(request, response, value=delivery.delivery_id)  # listed at once
                return response
        context = {
            "title": gettext("New delivery"),
            "form": form,
            "unknown": unknown[:500],
            "unknown_more": max(0, len(unknown) - 500),
        }
        return refused_page(self.render(request, "admin/delivery/create.html", context), refused)

    def detail_view(self, request, delivery_id):
        try:
            delivery = selectors.delivery_get(delivery_id=delivery_id)
        except NotFound:
            messages.error(request, gettext("No delivery %(delivery_id)s.") % {"delivery_id": delivery_id})
            return HttpResponseRedirect(reverse("admin:dynamo-deliveries"))
        chunks = selectors.delivery_chunks(delivery=delivery)
        context = {
            "title": gettext("Delivery: %(title)s") % {"title": delivery.title},
            "delivery": delivery,
            "progress": selectors.delivery_progress(delivery=delivery),
            "chunks": chunks,
            "chunks_done": sum(1 for chunk in chunks if chunk.status == "done"),
            "pending_sample": selectors.delivery_pending_sample(delivery=delivery, chunks=chunks),
            "can_cancel": delivery.status not in FINAL_STATUSES,
            "live": delivery.status not in FINAL_STATUSES,  # the page follows the progress by itself
            "can_prepare": delivery.status in (DRAFT, PREPARING),
        }
        return self.render(request, "admin/delivery/detail.html", context)

    @method_decorator(require_POST)
    def cancel_view(self, request, delivery_id):
        try:
            services.delivery_cancel(delivery_id=delivery_id)
            messages.success(request, gettext("Delivery cancelled: nothing more will be delivered."))
        except NotFound:
            messages.error(request, gettext("No delivery %(delivery_id)s.") % {"delivery_id": delivery_id})
        except ApplicationError as error:
            messages.error(request, error.message)
        return HttpResponseRedirect(reverse("admin:dynamo-delivery", args=[delivery_id]))

    @method_decorator(require_POST)
    def prepare_view(self, request, delivery_id):
        try:
            delivery = preparation.delivery_prepare(delivery_id=delivery_id)
            messages.success(
                request,
                ngettext(
                    "Prepared: %(total_targets)s target. The dispatcher sends it in the background.",
                    "Prepared: %(total_targets)s targets. The dispatcher sends it in the background.",
                    delivery.total_targets,
                )
                % {"total_targets": delivery.total_targets},
            )
        except NotFound:
            messages.error(request, gettext("No delivery %(delivery_id)s.") % {"delivery_id": delivery_id})
        return HttpResponseRedirect(reverse("admin:dynamo-delivery", args=[delivery_id]))


dynamo_admin.register(DeliveryAdmin)
