"""Why a comment can be reported: a fixed list (the queue counts them) and optional words."""

REASONS = {
    "spam": "Spam or advertising",
    "harassment": "Harassment or bullying",
    "hate": "Hate speech",
    "violence": "Violence or threats",
    "sexual": "Sexual content",
    "misinformation": "Dangerous misinformation",
    "other": "Something else",
}
NOTE_MAX_LENGTH = 500
# The reporter id of the spam screen's flags (a watched word to flag: social.spam.screen): no
# account; staff views name it "the system".
SYSTEM_REPORTER = "system"
