import os
import unittest
from unittest import mock

from ticketdesk import notify
from ticketdesk.models import ValidationError
from ticketdesk.settings import get_setting
from ticketdesk.store import TicketStore


class PagingTests(unittest.TestCase):
    def test_pages_hold_page_size_tickets(self):
        store = TicketStore("unused.json")
        for i in range(30):
            store.add(f"ticket {i}")
        self.assertEqual(len(store.page(1)), 25)
        self.assertEqual(len(store.page(2)), 5)

    def test_pages_are_ordered_by_id(self):
        store = TicketStore("unused.json")
        for title in ("c", "a", "b"):
            store.add(title)
        self.assertEqual([t.ticket_id for t in store.page(1)], [1, 2, 3])

    def test_page_size_comes_from_the_environment(self):
        with mock.patch.dict(os.environ, {"TICKETDESK_PAGE_SIZE": "2"}):
            store = TicketStore("unused.json")
            for i in range(3):
                store.add(f"ticket {i}")
            self.assertEqual(len(store.page(1)), 2)


class ValidationTests(unittest.TestCase):
    def test_empty_title_is_rejected(self):
        with self.assertRaisesRegex(ValidationError, "^title:"):
            TicketStore("unused.json").add("   ")

    def test_long_title_is_rejected(self):
        with self.assertRaisesRegex(ValidationError, "too long"):
            TicketStore("unused.json").add("x" * 121)

    def test_unknown_setting_names_the_known_ones(self):
        with self.assertRaisesRegex(KeyError, "page_size"):
            get_setting("colour")


class CloseTests(unittest.TestCase):
    def test_close_sets_status_and_notifies(self):
        store = TicketStore("unused.json")
        ticket = store.add("printer jammed")
        before = len(notify.SENT)
        self.assertEqual(store.close(ticket.ticket_id).status, "closed")
        self.assertEqual(notify.SENT[before:], [{"ticket": 1, "event": "closed", "timeout_s": 30}])


if __name__ == "__main__":
    unittest.main()
