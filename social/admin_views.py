"""Admin page: find comments by id or author and hide or unhide them."""

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.views.decorators.http import require_POST

from project.admin_site import AdminPage
from project.errors import NotFound
from social import selectors, services

PAGES = [AdminPage("Comments", "dynamo-comments")]


def _find(query: str) -> tuple[list[selectors.CommentView], str]:
    if not query:
        page = selectors.comment_timeline(viewer_id=None, limit=50)
        return page.results, "Newest visible comments. Search by comment id or author username to see hidden ones."
    try:
        return [selectors.comment_get(comment_id=query, viewer_id=None, include_hidden=True)], ""
    except NotFound:
        pass
    user = get_user_model().objects.filter(username__iexact=query).first()
    if user is None:
        return [], f"No comment with id {query!r} and no user named {query!r}."
    return selectors.comments_by_author(author_id=str(user.pk)), f"Latest comments by {user.username}."


def urls(site):
    def comments(request):
        query = request.GET.get("q", "").strip()
        found, note = _find(query)
        context = {
            **site.each_context(request),
            "title": "Comments",
            "query": query,
            "comments": found,
            "note": note,
        }
        return TemplateResponse(request, "admin/dynamo/comments.html", context)

    @require_POST
    def moderate(request, comment_id):
        hidden = request.POST.get("action") == "hide"
        try:
            services.comment_set_hidden(comment_id=comment_id, hidden=hidden)
            messages.success(request, f"Comment {comment_id} is now {'hidden' if hidden else 'visible'}.")
        except NotFound:
            messages.error(request, f"No comment {comment_id}.")
        back = request.POST.get("q", "")
        return HttpResponseRedirect(f"{reverse('admin:dynamo-comments')}?q={back}")

    return [
        path("comments/", site.admin_view(comments), name="dynamo-comments"),
        path("comments/<str:comment_id>/moderate/", site.admin_view(moderate), name="dynamo-comment-moderate"),
    ]
