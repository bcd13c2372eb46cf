"""ticketdesk: a tiny issue tracker (stand-in repository for the swe-taskflow example; hand-written)."""

from .settings import get_setting
from .store import TicketStore

__all__ = ["get_setting", "TicketStore"]
