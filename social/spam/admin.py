"""Admin → Social → Held comments (the review queue: approve or reject, one click a row or
several at once) and Watched words (what the spam screen looks for, and what it does then)."""

from __future__ import annotations

from django.contrib import admin, messages
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.translation import gettext

from actions.held import held_approve, held_reject
from actions.spam import account_remove_as_spam
from project.errors import ApplicationError
from social.models import HeldComment, WatchedWord
from social.selectors import authors_by_id, comment_find


@admin.register(WatchedWord)
class WatchedWordAdmin(admin.ModelAdmin):
    """Words and phrases the screen matches in any letter case, Unicode form, spacing or look-alike letters."""

    list_display = ("word", "action", "key", "created_at")
    list_filter = ("action",)
    search_fields = ("word", "key")
    fields = ("word", "action")


@admin.register(HeldComment)
class HeldCommentAdmin(admin.ModelAdmin):
    """The queue of comments waiting for review, the oldest first."""

    list_display = ("held_at", "author", "text", "rule", "reason", "decide")
    list_filter = ("rule",)
    search_fields = ("comment_id", "author_id", "reason")
    actions = ["approve_selected", "reject_selected"]
    list_per_page = 50

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False  # a held comment goes by being rejected (its item too), never by its row alone

    @admin.display(description="author")
    def author(self, row: HeldComment) -> str:
        author = authors_by_id([row.author_id])[row.author_id]
        return f"{author.display_name} (@{author.username})"

    @admin.display(description="comment")
    def text(self, row: HeldComment) -> str:
        comment = comment_find(comment_id=row.comment_id)
        return comment.body if comment is not None else "(no longer stored)"

    @admin.display(description="decide")
    def decide(self, row: HeldComment) -> str:
        # Buttons of the change list's own form (it carries the CSRF token), posted to this row's URLs.
        approve = reverse("admin:social_heldcomment_decide", args=[row.comment_id, "approve"])
        reject = reverse("admin:social_heldcomment_decide", args=[row.comment_id, "reject"])
        spam = reverse("admin:social_heldcomment_decide", args=[row.comment_id, "spam"])
        return format_html(
            '<button type="submit" class="button" formaction="{}" formmethod="post" data-approve="{}">Approve</button> '
            '<button type="submit" class="button" formaction="{}" formmethod="post" data-reject="{}">Reject</button> '
            '<button type="submit" class="button" formaction="{}" formmethod="post" data-spam="{}">'
            "Delete author as spam…</button>",
            approve,
            row.comment_id,
            reject,
            row.comment_id,
            spam,
            row.comment_id,
        )

    def get_urls(self):
        wrap = self.admin_site.admin_view
        return [
            path("<str:comment_id>/<str:decision>/", wrap(self.decide_view), name="social_heldcomment_decide"),
            *super().get_urls(),
        ]

    def decide_view(self, request, comment_id: str, decision: str):
        back = HttpResponseRedirect(reverse("admin:social_heldcomment_changelist"))
        if request.method != "POST" or decision not in ("approve", "reject", "spam"):
            return back
        if decision == "spam" and request.POST.get("confirmed") != "yes":
            # Deleting an account asks once more, on a page of its own (no script needed).
            row = HeldComment.objects.filter(comment_id=comment_id).first()
            if row is None:
                return back
            comment = comment_find(comment_id=comment_id)
            context = {
                **self.admin_site.each_context(request),
                "comment_id": comment_id,
                "author": authors_by_id([row.author_id])[row.author_id],
                "body": comment.body if comment is not None else "",
            }
            return TemplateResponse(request, "admin/social/held_spam_confirm.html", context)
        self._decide(request, [comment_id], decision)
        return back

    def _decide(self, request, comment_ids: list[str], decision: str) -> None:
        if decision == "spam":
            self._spam(request, comment_ids)
            return
        act = held_approve if decision == "approve" else held_reject
        done = 0
        for comment_id in comment_ids:
            try:
                done += bool(act(comment_id=comment_id, staff=request.user))
            except ApplicationError as error:
                messages.error(
                    request,
                    gettext("%(comment_id)s: %(message)s") % {"comment_id": comment_id, "message": error.message},
                )
        word = "approved: published now" if decision == "approve" else "rejected: deleted"
        self.message_user(request, f"{done} comment{'s' if done != 1 else ''} {word}.", messages.SUCCESS)

    @admin.action(description="Approve the selected comments (publish them now)")
    def approve_selected(self, request, queryset):
        self._decide(request, list(queryset.values_list("comment_id", flat=True)), "approve")

    @admin.action(description="Reject the selected comments (delete them)")
    def reject_selected(self, request, queryset):
        self._decide(request, list(queryset.values_list("comment_id", flat=True)), "reject")

    def _spam(self, request, comment_ids: list[str]) -> None:
        authors = set(HeldComment.objects.filter(comment_id__in=comment_ids).values_list("author_id", flat=True))
        for author_id in sorted(authors):
            try:
                account_remove_as_spam(user_id=author_id, staff=request.user)
            except ApplicationError as error:
                messages.error(
                    request,
                    gettext("user %(author_id)s: %(message)s") % {"author_id": author_id, "message": error.message},
                )
            else:
                self.message_user(request, f"User {author_id} deleted as spam: every trace is being removed.")
