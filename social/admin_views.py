"""Admin pages: find comments by id or author and hide or unhide them; counter rankings."""

import uuid

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.http import HttpResponseRedirect
from django.urls import path, reverse
from django.utils.decorators import method_decorator
from django.utils.http import urlencode
from django.utils.translation import gettext, gettext_noop, ngettext
from django.views.decorators.http import require_POST

from project.admin.pages import AdminPage, DynamoAdmin, dynamo_admin
from project.errors import ApplicationError, NotFound
from social import aggregation, counters, edit_history, ranking, selectors
from social.activity.admin_views import ActivityAdmin
from social.moderation import staff_services
from social.moderation.admin_views import CONFIRM, CONFIRM_YES, ReportsAdmin

RANKING_KINDS = {"likes": counters.LIKES, "views": counters.VIEWS, "reactions": counters.REACTIONS}


def _find(query: str) -> tuple[list[selectors.CommentView], str]:
    if not query:
        page = selectors.comment_timeline(viewer_id=None, limit=50)
        return page.results, gettext(
            "Newest visible comments. Search by comment id or author username to see hidden ones."
        )
    try:
        return [selectors.comment_get(comment_id=query, viewer_id=None, include_hidden=True)], ""
    except NotFound:
        pass
    user = get_user_model().objects.filter(username__iexact=query).first()
    if user is None:
        return [], gettext("No comment with id %(query)s and no user named %(query)s.") % {"query": repr(query)}
    return selectors.comments_by_author(author_id=str(user.pk)), gettext("Latest comments by %(username)s.") % {
        "username": user.username
    }


def _is_comment_id(value: str) -> bool:
    try:
        return str(uuid.UUID(value)) == value.lower()
    except ValueError:
        return False


class CommentAdmin(DynamoAdmin):
    pages = [AdminPage(gettext_noop("Comments"), "dynamo-comments")]

    def get_urls(self):
        wrap = self.admin_site.admin_view
        return [
            path("comments/", wrap(self.list_view), name="dynamo-comments"),
            path("comments/<str:comment_id>/moderate/", wrap(self.moderate_view), name="dynamo-comment-moderate"),
        ]

    def list_view(self, request):
        query = request.GET.get("q", "").strip()
        found, note = _find(query)
        context = {"title": gettext("Comments"), "query": query, "comments": found, "note": note}
        if len(found) == 1 and found[0].id == query:  # one comment's page: every version of its text
            comment = selectors.comment_find(comment_id=query)
            context["versions"] = edit_history.comment_versions(comment=comment) if comment else []
        return self.render(request, "admin/dynamo/comments.html", context)

    @method_decorator(require_POST)
    def moderate_view(self, request, comment_id):
        # Audited like every staff decision (social/moderation/staff_services.py).
        action = request.POST.get("action")
        back = request.POST.get("q", "")
        if action in ("hide", "delete") and request.POST.get("confirmed") != "yes":
            # The same no-JavaScript confirmation as the report pages: only its Yes acts.
            context = {
                "title": gettext("Confirm"),
                "comment": selectors.comment_find(comment_id=comment_id),
                "comment_id": comment_id,
                "action": action,
                "question": CONFIRM[action],
                "yes": CONFIRM_YES[action],
                "query": back,
                "back_url": f"{reverse('admin:dynamo-comments')}?{urlencode({'q': back})}",
            }
            return self.render(request, "admin/dynamo/comment_confirm.html", context)
        try:
            if action == "delete":
                staff_services.comment_delete_by_staff(comment_id=comment_id, staff=request.user)
                messages.success(
                    request, gettext("Comment %(comment_id)s's text is deleted.") % {"comment_id": comment_id}
                )
            elif action == "hide":
                staff_services.comment_hide_by_staff(comment_id=comment_id, staff=request.user)
                messages.success(request, gettext("Comment %(comment_id)s is now hidden.") % {"comment_id": comment_id})
            else:
                staff_services.comment_unhide_by_staff(comment_id=comment_id, staff=request.user)
                messages.success(
                    request, gettext("Comment %(comment_id)s is now visible.") % {"comment_id": comment_id}
                )
        except NotFound:
            messages.error(request, gettext("No comment %(comment_id)s.") % {"comment_id": comment_id})
        return HttpResponseRedirect(f"{reverse('admin:dynamo-comments')}?{urlencode({'q': back})}")


class RankingAdmin(DynamoAdmin):
    pages = [AdminPage(gettext_noop("Rankings"), "dynamo-rankings")]

    def get_urls(self):
        wrap = self.admin_site.admin_view
        return [
            path("rankings/", wrap(self.ranking_view), name="dynamo-rankings"),
            path("rankings/shards/", wrap(self.set_shards_view), name="dynamo-counter-shards"),
        ]

    def ranking_view(self, request):
        kind = request.GET.get("kind") if request.GET.get("kind") in RANKING_KINDS else "likes"
        lookup = request.GET.get("comment", "").strip()
        counter = None
        if lookup and not _is_comment_id(lookup):
            # Not a comment id (e.g. 3,000 characters): never a DynamoDB key, which would be refused.
            messages.error(request, gettext("Not a comment id: look up a comment by its id (a UUID)."))
            lookup = lookup[:100]
        elif lookup:
            key = counters.counter_key(kind=RANKING_KINDS[kind], object_id=lookup)
            total = aggregation.counter_total_get(key=key)
            counter = {
                "comment_id": lookup,
                "key": key,
                "value": counters.counter_value(key=key),
                "shards": counters.counter_shard_count(key=key),
                "total": total,
            }
        context = {
            "title": gettext("Ranking by %(kind)s") % {"kind": kind},
            "kind": kind,
            "kinds": list(RANKING_KINDS),
            "ranked": ranking.ranking_top(kind=RANKING_KINDS[kind], limit=50, include_hidden=True),
            "pending": aggregation.counters_pending_count(),
            "lookup": lookup,
            "counter": counter,
            "shards_max": counters.settings.COUNTER_SHARDS_MAX,
        }
        return self.render(request, "admin/dynamo/rankings.html", context)

    @method_decorator(require_POST)
    def set_shards_view(self, request):
        kind = request.POST.get("kind") if request.POST.get("kind") in RANKING_KINDS else "likes"
        comment_id = request.POST.get("comment", "").strip()
        try:
            selectors.comment_get(comment_id=comment_id, viewer_id=None, include_hidden=True)
            shards = int(request.POST.get("shards", ""))
            key = counters.counter_key(kind=RANKING_KINDS[kind], object_id=comment_id)
            counters.counter_set_shards(key=key, shards=shards)
            messages.success(
                request,
                ngettext(
                    "%(key)s now spreads new writes over %(shards)s shard; its count is unchanged.",
                    "%(key)s now spreads new writes over %(shards)s shards; its count is unchanged.",
                    shards,
                )
                % {"key": key, "shards": shards},
            )
        except NotFound:
            messages.error(request, gettext("No comment %(comment_id)s.") % {"comment_id": repr(comment_id)})
        except ValueError:
            messages.error(request, gettext("The shard count must be a whole number."))
        except ApplicationError as error:
            messages.error(request, error.message)
        query = urlencode({"kind": kind, "comment": comment_id})
        return HttpResponseRedirect(f"{reverse('admin:dynamo-rankings')}?{query}")


# The activity log's page lives with its package (an `admin_views` module below the app, which
# autodiscovery does not reach): registered here, after the app's own pages.
dynamo_admin.register(CommentAdmin)
dynamo_admin.register(RankingAdmin)
dynamo_admin.register(ActivityAdmin)
dynamo_admin.register(ReportsAdmin)
