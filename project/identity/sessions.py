"""Django's database sessions (SESSION_ENGINE), each request's session read with one SELECT
compiled once per database connection (project.identity.compiled_get) instead of a query the ORM
builds again every time.

Nothing about a session is kept between requests: each one reads its row, so a session that
ended (logged out, expired, cleared by a new password) is refused at once, as Django's own
store does.
"""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING

from django.contrib.sessions.backends import db
from django.core.exceptions import SuspiciousOperation
from django.utils import timezone

from project.identity.compiled_get import CompiledGet

if TYPE_CHECKING:
    from django.contrib.sessions.base_session import AbstractBaseSession


@functools.cache
def _session_by_key(model: type[AbstractBaseSession]) -> CompiledGet[AbstractBaseSession]:
    return CompiledGet(model, "session_key", placeholder="")


class SessionStore(db.SessionStore):
    def _get_session_from_db(self) -> AbstractBaseSession | None:
        """Django's: the row of this session key unless it expired (then the key is dropped)."""
        try:
            session = _session_by_key(self.model).get(self.session_key)
        except SuspiciousOperation as error:
            logging.getLogger(f"django.security.{error.__class__.__name__}").warning(str(error))
            session = None
        if session is None or session.expire_date <= timezone.now():
            self._session_key = None
            return None
        return session
