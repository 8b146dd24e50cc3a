"""The profile page (`/u/<username>/`): a person's name, join date and comments, newest first."""

from django.http import Http404
from django.shortcuts import redirect, render

from project.dynamo.cursors import page_or_first
from project.errors import NotFound
from project.http.fresh import FRESH_COMMENTS
from social import selectors
from social.profiles.selectors import own_hidden_comments, profile_get


def profile(request, username):
    """A person's page: name, join date and their comments, newest first."""
    try:
        person = profile_get(username=username)
    except NotFound:
        raise Http404("No such person.") from None
    if person.username != username:
        return redirect("profile", username=person.username)
    page = page_or_first(
        request,
        lambda cursor: selectors.profile_comments(
            author_id=person.id,
            viewer_id=str(request.user.pk) if request.user.is_authenticated else None,
            cursor=cursor,
            written=FRESH_COMMENTS.names(request),
        ),
    )
    own = request.user.is_authenticated and str(request.user.pk) == person.id and not request.GET.get("cursor")
    hidden = own_hidden_comments(author_id=person.id) if own else []  # only the author sees them
    return render(request, "social/profile.html", {"person": person, "page": page, "hidden_comments": hidden})
