"""A person's export: every export section the apps register (project/identity/erasure.py), as one JSON
document produced piece by piece, so a heavy user's export streams instead of being built in
memory, and the worker serving it writes as it reads."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from project.clock import clock
from project.identity.erasure import export_sections

EXPORT_FORMAT = "dynamo-social-export/1"
OBJECTS_PER_CHUNK = 50  # objects joined into one piece of the stream


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def account_export_chunks(*, user_id: str) -> Iterator[str]:
    """The export document in pieces: `{"format", "exported_at", "user_id", <section>: ...}`.

    Each section is read lazily, page by page, when the stream reaches it; a single section
    (the profile, preferences) is one object, the others arrays. Reads only: interrupted, it
    changes nothing.
    """
    yield f'{{"format": {_json(EXPORT_FORMAT)}, "exported_at": {_json(clock.now_iso())}, "user_id": {_json(user_id)}'
    for section in export_sections():
        if section.single:
            yield f",\n{_json(section.name)}: {_json(next(iter(section.read(user_id=user_id)), None))}"
            continue
        yield f",\n{_json(section.name)}: ["
        pending: list[str] = []
        first = True
        for item in section.read(user_id=user_id):
            pending.append(_json(item))
            if len(pending) == OBJECTS_PER_CHUNK:
                yield ("" if first else ",") + "\n" + ",\n".join(pending)
                pending, first = [], False
        if pending:
            yield ("" if first else ",") + "\n" + ",\n".join(pending)
        yield "]"
    yield "}\n"
