"""The Harbor proof worker's reset between proofs (issue 32), on a busybox image and a GNU one.

The worker's own shell text (``swe_taskflow_harbor.proof_worker.RESET``, ``HARDEN``) runs in a network-less
container of the example's task image (busybox: no ``find -delete``) and of the same image with GNU findutils
and coreutils; a hostile "proof" run as uid 65534 leaves files in every place it can write, a FIFO, a message
queue, a System V shared-memory segment and a process running on. After the reset none of it is there, and a
reset that cannot clean fails with one ``reset failed:`` line (exit 1), never silently.
Old code: ``find /tmp /dev/shm -mindepth 1 -delete 2>/dev/null || true`` removed nothing on busybox, and nothing
ever cleaned /var/tmp, /dev/mqueue, /logs, IPC objects or a detached process.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from swe_taskflow import hygiene
from swe_taskflow_harbor import proof_worker as pw

pytestmark = pytest.mark.docker

HOSTILE = r"""
cd /tmp
echo left > /tmp/a; mkdir -p /tmp/d/e; echo x > /tmp/d/e/f; echo h > /tmp/.hidden; echo hh > /tmp/..dots
mkfifo /tmp/fifo 2>/dev/null || true
echo v > /var/tmp/b 2>/dev/null || true
echo s > /dev/shm/c
echo l > /logs/from-a-proof 2>/dev/null || true
touch /dev/mqueue/q1 2>/dev/null || true
python3 -c 'import ctypes;c=ctypes.CDLL(None);print("shm", c.shmget(0x5157, 4096, 0o1666))'
setsid sleep 600 </dev/null >/dev/null 2>&1 &
echo ok
"""

LOOK = r"""
echo "tmp:$(ls -A /tmp /var/tmp /dev/shm /dev/mqueue 2>/dev/null | grep -v ':$' | grep -v '^$' | tr '\n' ' ')"
echo "logs:$(ls -A /logs 2>/dev/null | tr '\n' ' ')"
echo "procs:$(cat /proc/[0-9]*/status 2>/dev/null | awk '/^State:/{s=$2} /^Uid:/{if ($2 == 65534 && s != "Z") print}' \
  | wc -l)"
echo "shm:$(awk 'NR > 1 && $8 == 65534' /proc/sysvipc/shm | wc -l)"
echo "owned:$(find / \( -path /proc -o -path /sys \) -prune -o -user 65534 -print | head -n 3 | tr '\n' ' ')"
"""


def _gnu_image(base: str) -> str:
    """``base`` with GNU find, rm, ls and mawk from the host in place of busybox's (docker build, no network)."""
    tag = base.split(":")[0] + "-gnu:" + base.split(":")[1]
    ctx = Path(tempfile.mkdtemp(prefix="gnu-image-"))
    try:
        tools = ["find", "rm", "ls", "mawk"]
        libs = set()
        for t in tools:
            shutil.copy2(f"/usr/bin/{t}", ctx / t)
            out = subprocess.run(["ldd", f"/usr/bin/{t}"], capture_output=True, text=True).stdout
            libs |= {line.split("=>")[1].split()[0] for line in out.splitlines() if "=>" in line}
        for lib in libs:
            shutil.copy2(lib, ctx / Path(lib).name)
        names = " ".join(Path(x).name for x in libs)
        (ctx / "Dockerfile").write_text(
            f"FROM {base}\nCOPY . /gnu/\nRUN mkdir -p /usr/lib/x86_64-linux-gnu && cd /gnu && "
            f"cp {names} /usr/lib/x86_64-linux-gnu/ && rm -f /usr/bin/find /usr/bin/rm /usr/bin/ls /usr/bin/awk && "
            "cp find rm ls /usr/bin/ && cp mawk /usr/bin/awk && cd / && rm -rf /gnu\n")
        subprocess.run(["docker", "build", "-q", "--network", "none", "-t", tag, str(ctx)], check=True,
                       capture_output=True)
    finally:
        shutil.rmtree(ctx, ignore_errors=True)
    return tag


@pytest.fixture(scope="module", params=["busybox", "gnu"])
def image(request, example_image) -> str:
    return example_image if request.param == "busybox" else _gnu_image(example_image)


@pytest.fixture
def container(image, tmp_path):
    import docker

    client = docker.from_env()
    ro = tmp_path / "ro"
    ro.mkdir()
    c = client.containers.run(image, ["-c", "sleep 100000"], entrypoint=["/bin/sh"], detach=True,
                              network_mode="none", labels=hygiene.labels(), volumes={str(ro): {"bind": "/ro",
                                                                                             "mode": "ro"}})
    try:
        yield c, ro
    finally:
        c.remove(force=True)


def sh(c, script: str, user: str = "root") -> tuple[int, str]:
    code, out = c.exec_run(["bash", "-c", script], user=user)
    return code, out.decode(errors="replace")


def _start(c) -> None:
    code, out = sh(c, f"set -e; mkdir -p -m 700 {pw.STATE}; cp -a /app {pw.STATE}/pristine")
    assert code == 0, out
    code, out = sh(c, pw.HARDEN)
    assert code == 0, out
    code, out = sh(c, pw.RESET)
    assert code == 0, out


def test_one_proofs_leftovers_never_reach_the_next(container, image):
    c, _ = container
    _start(c)
    code, out = sh(c, HOSTILE, user="65534:65534")
    assert code == 0 and "ok" in out, out
    before = sh(c, LOOK)[1]   # the hostile run did leave things behind, in every place
    for left in ("tmp:", " a ", " .hidden ", " fifo ", " c ", " q1 ", "logs:from-a-proof", "procs:1", "shm:1",
                 "owned:/"):
        assert left in before.replace("tmp:", "tmp: ", 1) or left == "tmp:", (left, before)
    code, out = sh(c, pw.RESET)
    assert code == 0, out
    look = sh(c, LOOK)[1]
    assert "tmp:\n" in look and "logs:\n" in look and "procs:0" in look and "shm:0" in look, look
    assert "owned:\n" in look, look
    # the image's world-writable folder outside the temp ones is sticky after HARDEN: root's entries stay root's
    assert sh(c, "stat -c %a /logs")[1].strip() == "1777"


def test_a_reset_that_cannot_clean_fails_loudly(container, tmp_path):
    """A leftover the reset cannot remove (a file of uid 65534 on a read-only mount): exit 1, one line why."""
    import os

    c, ro = container
    _start(c)
    (ro / "stuck").write_text("x")
    os.chown(ro / "stuck", 65534, 65534)
    code, out = sh(c, pw.RESET)
    assert code == 1 and "reset failed:" in out and "65534" in out, out
