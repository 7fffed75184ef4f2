"""``arena users add NAME [--admin] | list | revoke NAME | rotate NAME [--data DIR]``: the hosted arena's users.

``add`` makes a user and prints its token once, as the last word of the last
line (the service keeps only its hash: a lost token is replaced with
``rotate``). ``revoke`` stops a token working; ``rotate`` gives a new one (and
lifts a revocation). ``list`` prints one line per user. DIR is the service's
data directory (default ./arena-data).

Exit statuses: 0 done; 1 the database cannot be used; 2 usage (an unknown or
taken name, a bad option).
"""

from __future__ import annotations

import argparse
import sqlite3
import time
from pathlib import Path

from arena.commands._kit import EXIT_FAILED, EXIT_OK, EXIT_USAGE, UsageParser, fail, parse
from arena.serve.config import DEFAULT_DATA
from arena.serve.store import Store, StoreError

__all__ = ["main"]

PROG = "arena users"


def _parser() -> argparse.ArgumentParser:
    parser = UsageParser(PROG, __doc__ or "")
    parser.add_argument("action", choices=("add", "list", "revoke", "rotate"))
    parser.add_argument("name", metavar="NAME", nargs="?", help="the user (not for list): 1 to 64 ASCII letters, digits, - or _")
    parser.add_argument("--admin", action="store_true", help="with add: the user may run tournaments")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, metavar="DIR", help="default ./arena-data")
    return parser


def main(argv: list[str]) -> int:
    args = parse(_parser(), argv, intermixed=True)
    if isinstance(args, int):
        return args
    if (args.name is None) != (args.action == "list"):
        return fail(PROG, f"{args.action} {'takes no NAME' if args.action == 'list' else 'needs a NAME'}", EXIT_USAGE)
    try:
        store = Store(args.data)
    except (OSError, sqlite3.Error) as error:
        return fail(PROG, f"cannot open the database in {args.data}: {error}", EXIT_FAILED)
    try:
        if args.action == "add":
            user, token = store.add_user(args.name, admin=args.admin)
            print(f"user {user.name}{' (admin)' if user.admin else ''} added; its token (shown once): {token}")
        elif args.action == "rotate":
            print(f"user {args.name}: new token (shown once; the old one no longer works): {store.rotate(args.name)}")
        elif args.action == "revoke":
            store.revoke(args.name)
            print(f"user {args.name}: token revoked (arena users rotate {args.name} gives a new one)")
        else:
            for user in store.users():
                flags = "".join((" admin" if user.admin else "", " revoked" if user.revoked else ""))
                created = time.strftime("%Y-%m-%d %H:%M", time.gmtime(user.created))
                print(f"{user.name}\tcreated {created} UTC{flags}")
    except StoreError as error:
        return fail(PROG, error, EXIT_USAGE)
    except sqlite3.Error as error:
        return fail(PROG, f"database error in {args.data}: {error}", EXIT_FAILED)
    finally:
        store.close()
    return EXIT_OK
