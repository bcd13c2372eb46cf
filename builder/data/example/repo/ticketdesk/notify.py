"""Notifications sent when a ticket changes state (recorded in memory in this stand-in)."""

from .settings import get_setting

SENT = []


def notify_closed(ticket):
    """Record a 'closed' notification; the timeout comes from the notify_timeout_s setting."""
    SENT.append({"ticket": ticket.ticket_id, "event": "closed", "timeout_s": get_setting("notify_timeout_s")})
