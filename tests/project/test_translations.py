"""The committed catalogues: each compiled .mo says what its .po says (the site loads the .mo
files; nobody compiles them at install time), with the language's plural rule, nothing fuzzy."""

from __future__ import annotations

import gettext
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from django.conf import settings

LOCALE = Path(settings.BASE_DIR) / "locale"
CODES = [code for code, _name in settings.LANGUAGES if code != settings.LANGUAGE_CODE]


@pytest.mark.parametrize("code", CODES)
def test_the_compiled_catalogue_matches_its_source(code):
    folder = LOCALE / code / "LC_MESSAGES"
    with (folder / "django.po").open("rb") as source:
        catalogue = read_po(source)
    with (folder / "django.mo").open("rb") as compiled:
        mo = gettext.GNUTranslations(compiled)
    assert "Plural-Forms" in (folder / "django.po").read_text() and mo.plural(1) == 0
    for message in catalogue:
        if not message.id:
            continue
        assert not message.fuzzy, message.id
        context = f"{message.context}\x04" if message.context else ""
        if isinstance(message.id, tuple):
            assert all(message.string), f"{code}: {message.id[0]!r} lacks a plural form"
            for n in (1, 2, 5):
                expected = message.string[min(mo.plural(n), len(message.string) - 1)]
                assert mo.ngettext(context + message.id[0], context + message.id[1], n) == expected, message.id
        else:
            assert message.string, f"{code}: {message.id!r} is not translated"
            assert mo.gettext(context + message.id) == message.string, f"{code}: run `make compilemessages`"
