"""Opening a name beneath a folder in one step (api/runtime/beneath.py), by openat2 and by the walk of
directory descriptors alike; and the data directory of a shared server under a folder-for-link swap
race (docs/security.md, "The data directory")."""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cefisim.api.runtime import beneath
from cefisim.api.runtime.beneath import Linked, Outside, open_beneath
from cefisim.api.web.control.isolated_venues import VENUES
from tests.api.web.control.test_venues_files import maker_doc

WAYS = ["openat2", "walk"]
CREATES = 200


@pytest.fixture(params=WAYS)
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test runs once through openat2 (where this kernel has it) and once through the walk."""
    if request.param == "walk":
        monkeypatch.setattr(beneath, "_openat2", None)
    elif beneath._openat2 is None:
        pytest.skip("this kernel has no openat2 (Linux 5.6+): the walk serves alone")
    return str(request.param)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    (folder / "sub" / "deeper").mkdir(parents=True)
    (folder / "top.txt").write_text("top\n")
    (folder / "sub" / "deeper" / "leaf.txt").write_text("leaf\n")
    (tmp_path / "outside.txt").write_text("outside\n")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "leaf.txt").write_text("elsewhere\n")
    (folder / "link-out.txt").symlink_to(tmp_path / "outside.txt")
    (folder / "link-in.txt").symlink_to("top.txt")
    (folder / "linked-dir").symlink_to(tmp_path / "elsewhere")
    (folder / "sub" / "up").symlink_to("..")
    os.mkfifo(folder / "fifo")
    return folder


def read(root: Path, name: str) -> str:
    fd = open_beneath(root, name)
    try:
        os.set_blocking(fd, True)
        return os.read(fd, 100).decode()
    finally:
        os.close(fd)


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("top.txt", "top\n"),
        ("sub/deeper/leaf.txt", "leaf\n"),
        ("sub/../top.txt", "top\n"),
        ("./sub//deeper/leaf.txt", "leaf\n"),
    ],
)
def test_names_inside_the_folder_open(way: str, root: Path, name: str, content: str) -> None:
    assert read(root, name) == content


@pytest.mark.parametrize("name", ["/etc/hostname", "../outside.txt", "sub/../../outside.txt", ".."])
def test_names_that_leave_the_folder_are_outside(way: str, root: Path, name: str) -> None:
    with pytest.raises(Outside):
        open_beneath(root, name)


@pytest.mark.parametrize("name", ["link-out.txt", "link-in.txt", "linked-dir/leaf.txt", "sub/up/top.txt"])
def test_any_symbolic_link_on_the_way_is_refused(way: str, root: Path, name: str) -> None:
    with pytest.raises(Linked):
        open_beneath(root, name)


@pytest.mark.parametrize("name", ["", "a\0b", "sub/\0"])
def test_a_name_no_file_can_have_is_a_value_error(way: str, root: Path, name: str) -> None:
    with pytest.raises(ValueError, match="NUL"):
        open_beneath(root, name)


def test_a_fifo_opens_without_waiting_for_a_writer(way: str, root: Path) -> None:
    fd = open_beneath(root, "fifo")
    os.close(fd)


@pytest.mark.parametrize(("name", "error"), [("missing.txt", FileNotFoundError), ("top.txt/x", NotADirectoryError)])
def test_plain_errors_stay_os_errors(way: str, root: Path, name: str, error: type[OSError]) -> None:
    with pytest.raises(error):
        open_beneath(root, name)


# --- the race: a folder inside the data directory swapped for a link while venues are created -------------


@pytest.fixture
def swapping(tmp_path: Path) -> Iterator[tuple[Path, bytes, bytes]]:
    """A data directory whose folder ``sub`` is swapped, in a loop on another thread, for a link to a
    folder outside holding a file of the same name: (the data dir, inside bytes, outside bytes)."""
    data, outside = tmp_path / "data", tmp_path / "outside"
    (data / "sub").mkdir(parents=True)
    outside.mkdir()
    inside_bytes, outside_bytes = b"30000.00\n30010.00\n", b"31000.00\n31010.00\n"
    (data / "sub" / "prices.txt").write_bytes(inside_bytes)
    (outside / "prices.txt").write_bytes(outside_bytes)
    stop = threading.Event()
    swaps = [0]

    def swap() -> None:
        sub, hidden, link = data / "sub", data / "sub.hidden", data / "sub.link"
        while not stop.is_set():
            os.rename(sub, hidden)
            os.symlink(outside, link)
            os.rename(link, sub)  # `sub` is now a link out
            time.sleep(0)  # let the creating thread run in either state
            os.unlink(sub)
            os.rename(hidden, sub)  # and the folder again
            time.sleep(0)
            swaps[0] += 1

    thread = threading.Thread(target=swap, daemon=True)
    thread.start()
    try:
        yield data, inside_bytes, outside_bytes
    finally:
        stop.set()
        thread.join(timeout=60)
    assert swaps[0] > 0


@pytest.mark.parametrize("way", WAYS, indirect=True)
async def test_a_folder_swapped_for_a_link_never_leads_a_create_outside(
    way: str, api_factory: Any, swapping: tuple[Path, bytes, bytes]
) -> None:
    data, inside_bytes, outside_bytes = swapping
    api = await api_factory(data_dir=data)
    hub = api.client.server.app[VENUES]
    outside_digest = hashlib.sha256(outside_bytes).hexdigest()
    statuses: dict[int, int] = {}
    for _ in range(CREATES):
        status, answer, _ = await api.call(
            "POST", "/_sim/venues", client_id=None, json={"scenario": maker_doc("sub/prices.txt")}
        )
        statuses[status] = statuses.get(status, 0) + 1
        assert status in (201, 400), answer
        if status == 400:
            assert answer["detail"].startswith("scenario.agents[0].prices_file: "), answer
            assert "sub/prices.txt" in answer["detail"], answer
            continue
        kept = hub.venues.live[answer["id"]][0].files  # what this venue reads: the copy's digest
        assert kept == {"sub/prices.txt": hashlib.sha256(inside_bytes).hexdigest()}
        await api.call("DELETE", f"/_sim/venues/{answer['id']}", client_id=None)
        assert not hub.venues.store.path(outside_digest).exists()
    assert statuses.get(201), statuses  # some creates got through between the swaps
