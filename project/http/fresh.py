"""What this browser just changed, named in short cookies, so the pages it lands on show it.

Lists, the header's badge and the live poll read from a GSI or eventually consistently (half
the read units), and on AWS both may trail a write by about a second (docs/explanation/architecture.md
"Reads and their consistency"). A person who changes something and lands on a page must see
their change: the change's answer (a page's redirect or the API's answer) names it in a short
httponly cookie, and for `seconds` the pages this browser reaches read what it names strongly
consistently from the base table. Other people's changes reach those pages a moment later.
A forged cookie only makes its own pages read at most `most` items exactly.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponseBase


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class FreshCookie:
    name: str
    valid: Callable[[str], bool]
    most: int = 5
    seconds: int = 10

    def names(self, request: HttpRequest) -> list[str]:
        """What this browser changed in the last `seconds` (at most `most`, newest first)."""
        return [value for value in request.COOKIES.get(self.name, "").split(".") if value and self.valid(value)][
            : self.most
        ]

    def remember(self, request: HttpRequest, response: HttpResponseBase, *, value: str) -> None:
        """Name `value` in the answer's cookie, newest first (the others it named stay)."""
        values = [value, *(known for known in self.names(request) if known != value)][: self.most]
        response.set_cookie(
            self.name, ".".join(values), max_age=self.seconds, httponly=True, samesite="Lax", secure=request.is_secure()
        )


# Comments this browser liked or unliked: their counts and like rows are read exactly.
FRESH_LIKES = FreshCookie("fresh_likes", _is_uuid)
# Comments this browser posted, replied, edited or deleted: lists read them from the table.
FRESH_COMMENTS = FreshCookie("fresh_comments", _is_uuid)
# The user whose notifications this browser marked read: their badge is read exactly.
FRESH_BADGE = FreshCookie("fresh_badge", str.isdigit, most=1)
# Deliveries this browser (staff) created: the deliveries list reads them from the table.
FRESH_DELIVERIES = FreshCookie("fresh_deliveries", lambda value: re.fullmatch(r"[0-9a-f]{32}", value) is not None)
