"""User names are plain ASCII (no homoglyph of another user's name), and a
Unicode digit where the service reads a whole number is refused with a 400, never
a 500 (issue 44)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.serve.store import Store, StoreError
from tests.arena.serve.service_process import Service, served  # noqa: F401 (a fixture)

FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@pytest.mark.parametrize("name", ["аlice", "alice\u0301", "ᴀlice", "alice２", "alice²", "al ice", "al.ice", "", "a" * 65])
def test_a_user_name_is_ascii_letters_digits_dash_and_underscore(tmp_path: Path, name: str) -> None:
    store = Store(tmp_path)
    with pytest.raises(StoreError, match="bad user name .*: 1 to 64 ASCII letters, digits, '-' or '_'"):
        store.add_user(name)
    assert store.add_user("Alice_2-x")[0].name == "Alice_2-x"


def test_unicode_digits_in_numbers_are_a_400(served: Service) -> None:
    token = served.tokens["bob"]
    status, headers, _ = served.request("POST", "/api/login", body={"token": token})
    cookie = {"Cookie": headers["set-cookie"].split(";", 1)[0]}
    for hands in ("²", "٣", "３"):
        status, _, page = served.request("POST", "/tables", headers={**cookie, **FORM},
                                         raw=f"game=leduc&opponent=always-call&hands={hands}".encode())
        assert status == 400 and b"hands: a whole number" in page, (hands, status, page)
    status, _, answer = served.request("POST", "/api/matches", token, raw=b"{}", headers={"Content-Length": "\xb2"})
    assert 400 <= status < 500, answer
