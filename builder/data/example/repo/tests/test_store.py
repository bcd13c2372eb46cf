from ticketdesk.store import TicketStore


def test_paging():
    store = TicketStore("unused.json")
    for i in range(30):
        store.add(f"ticket {i}")
    assert len(store.page(1)) == 25
    assert len(store.page(2)) == 5
