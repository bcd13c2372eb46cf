"""A JSON-file ticket store with paging."""

import json
from pathlib import Path

from .models import Ticket
from .settings import get_setting


class TicketStore:
    def __init__(self, path=None):
        self.path = Path(path or get_setting("storage_path"))
        self._tickets = {}
        self._next_id = 1

    def add(self, title, labels=()):
        ticket = Ticket(self._next_id, title, labels=list(labels)).validate()
        self._tickets[ticket.ticket_id] = ticket
        self._next_id += 1
        return ticket

    def close(self, ticket_id):
        ticket = self._tickets[ticket_id]
        ticket.status = "closed"
        from .notify import notify_closed
        notify_closed(ticket)
        return ticket

    def page(self, number):
        """Tickets of page ``number`` (1-based), ``page_size`` per page, ordered by id."""
        size = get_setting("page_size")
        ordered = [self._tickets[k] for k in sorted(self._tickets)]
        return ordered[(number - 1) * size: number * size]

    def save(self):
        data = [vars(t) for t in self._tickets.values()]
        self.path.write_text(json.dumps(data, indent=2))
