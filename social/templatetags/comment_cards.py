"""`{% comment_card comment %}`: a comment's card (social/_comment.html) as every list shows it.

`reply_link=True` adds the link to the comment's own page (in lists, not on that page);
`report_link=False` leaves out "Report" (on the report page itself).

A list page draws one card per comment, 20 on the timeline and more on a comment with its
replies, so a card's cost is most of the page's rendering. The card's values are worked out
here in Python, each once: its links (as `id_url` builds them), its times (as the `date` and
`naturaltime` filters print them), whether the viewer wrote it. What all the cards of a page
share, who is looking and the path the like form goes back to, is worked out once per page.
The template is left with plain values: a filter or a lookup through `user` or `request`
costs the template engine several times what a plain value does, and a card shows some 30.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Any

from django import template
from django.contrib.humanize.templatetags.humanize import naturaltime
from django.template.defaulttags import CsrfTokenNode
from django.utils import timezone

from project.templatetags.id_urls import id_url
from social.formatting import comment_html
from social.reactions.names import REACTIONS
from social.selectors import DELETED_USERNAME, CommentView

register = template.Library()


@dataclass(frozen=True)
class _Page:
    """What every card of one page shares."""

    viewer_id: str | None  # None: logged out
    path: str  # the like form's `next`: this page, its query string included
    csrf_field: str  # the HTML `{% csrf_token %}` prints: one token for all the forms of the page
    zone: tzinfo  # the time zone times are shown in


_PAGE = f"{__name__}.page"  # its key in the render context


def _page(context: template.Context) -> _Page:
    """Worked out by a page's first card and kept in its render context for the others."""
    page = context.render_context.get(_PAGE)
    if page is None:
        user, request = context.get("user"), context.get("request")
        viewer_id = str(user.pk) if user is not None and user.is_authenticated else None
        signed_in = viewer_id is not None
        page = _Page(
            viewer_id=viewer_id,
            # For the like form, which a logged-out visitor does not get (nor a CSRF cookie with it).
            path=request.get_full_path() if signed_in and request is not None else "",
            csrf_field=CsrfTokenNode().render(context) if signed_in else "",
            zone=timezone.get_current_timezone(),
        )
        context.render_context[_PAGE] = page
    return page


def _moment(at: datetime, zone: tzinfo) -> dict[str, str]:
    """`at` as `|date:"c"`, `|date:"Y-m-d H:i T"` and `|naturaltime` print it: `iso`, `title`, `ago`.

    `title` by strftime, a tenth of the `date` filter's cost; it differs only in the hour a
    daylight saving change repeats, where the filter leaves out the zone's name and this keeps it.
    """
    local = at.astimezone(zone)
    return {"iso": local.isoformat(), "title": f"{local:%Y-%m-%d %H:%M %Z}", "ago": naturaltime(at)}


def _reactions(comment: CommentView, *, signed_in: bool) -> list[dict[str, Any]]:
    """The reaction buttons (all six, for someone who can press them) or counts (those above 0)."""
    counts, mine = comment.reactions.counts, comment.reactions.mine
    return [
        {"name": name, "emoji": emoji, "count": counts.get(name, 0), "mine": name in mine}
        for name, emoji in REACTIONS.items()
        if signed_in or counts.get(name)
    ]


@register.inclusion_tag("social/_comment.html", takes_context=True)
def comment_card(
    context: template.Context, comment: CommentView, *, reply_link: bool = False, report_link: bool = True
) -> dict[str, Any]:
    page = _page(context)
    card: dict[str, Any] = {
        "id": comment.id,
        "url": id_url(comment.id, "comment"),
        "posted": _moment(comment.created_at, page.zone),
        "deleted": comment.deleted,
        "reply_link": reply_link,
    }
    if comment.deleted:
        return card
    own = page.viewer_id is not None and comment.author.id == page.viewer_id
    card.update(
        author_name=comment.author.display_name,
        author_username=comment.author.username,
        author_url="" if comment.author.username == DELETED_USERNAME else id_url(comment.author.username, "profile"),
        edited=_moment(comment.edited_at, page.zone) if comment.edited_at else None,
        body=comment_html(comment.body, comment.mention_usernames),
        like_count=comment.like_count,
        liked=comment.liked,
        signed_in=page.viewer_id is not None,
        like_url=id_url(comment.id, "comment-like"),
        react_url=id_url(comment.id, "comment-react"),
        reactions=_reactions(comment, signed_in=page.viewer_id is not None),
        csrf_field=page.csrf_field,
        next=page.path,
        own=own,
    )
    if own:
        card.update(edit_url=id_url(comment.id, "comment-edit"), delete_url=id_url(comment.id, "comment-delete"))
    elif report_link and page.viewer_id is not None:
        card.update(report_url=id_url(comment.id, "comment-report"))
    return card
