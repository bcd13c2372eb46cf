"""Settings with defaults; environment variables named TICKETDESK_<NAME> override them."""

import os

DEFAULTS = {
    "page_size": 25,
    "max_title_length": 120,
    "storage_path": "tickets.json",
    "notify_timeout_s": 30,
}


def get_setting(name):
    """Return a setting; unknown names raise KeyError listing the known ones."""
    if name not in DEFAULTS:
        raise KeyError(f"unknown setting {name!r}; known: {sorted(DEFAULTS)}")
    raw = os.environ.get("TICKETDESK_" + name.upper())
    if raw is None:
        return DEFAULTS[name]
    default = DEFAULTS[name]
    return type(default)(raw)
