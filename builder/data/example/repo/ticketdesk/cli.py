"""Command line: `python -m ticketdesk.cli add TITLE` and `list [--page N]`."""

import argparse

from .store import TicketStore


def main(argv=None):
    parser = argparse.ArgumentParser(prog="ticketdesk")
    sub = parser.add_subparsers(dest="cmd", required=True)
    add = sub.add_parser("add")
    add.add_argument("title")
    show = sub.add_parser("list")
    show.add_argument("--page", type=int, default=1)
    args = parser.parse_args(argv)
    store = TicketStore()
    if args.cmd == "add":
        print(store.add(args.title).ticket_id)
    else:
        for t in store.page(args.page):
            print(t.ticket_id, t.status, t.title)
    return 0
