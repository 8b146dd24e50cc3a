"""Why a comment can be reported: a fixed list (the queue counts them) and optional words."""

from django.utils.translation import gettext_lazy

REASONS = {
    "spam": gettext_lazy("Spam or advertising"),
    "harassment": gettext_lazy("Harassment or bullying"),
    "hate": gettext_lazy("Hate speech"),
    "violence": gettext_lazy("Violence or threats"),
    "sexual": gettext_lazy("Sexual content"),
    "misinformation": gettext_lazy("Dangerous misinformation"),
    "other": gettext_lazy("Something else"),
}
NOTE_MAX_LENGTH = 500
# The reporter id of the spam screen's flags (a watched word to flag: social.spam.screen): no
# account; staff views name it "the system".
SYSTEM_REPORTER = "system"


def reason_label(reason: str) -> str:
    """A reason as people read it, in the active language (an unknown code as it is)."""
    return str(REASONS.get(reason, reason))
