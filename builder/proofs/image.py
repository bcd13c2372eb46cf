"""Build local images without a registry from the host's python3, busybox-static and git.

The rootfs holds the host interpreter and its stdlib, every shared library ``ldd`` lists for the
binaries and extension modules, busybox as /bin/sh and the usual applets, and git (a task image adds
bash, every busybox applet and its repository: builder.bundled.image). It is streamed as a tar into
``docker import``. A label carries the hash of the file list and contents, so a rebuild with the same
host files is skipped.
"""

from __future__ import annotations

import glob
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from swe_taskflow.errors import SandboxError

DEFAULT_IMAGE = "swe-taskflow/proof-python:local"
_SKIP_STDLIB = ("test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3/tests", "__pycache__",
                "unittest/test", "distutils/tests", "site-packages", "dist-packages")
_APPLETS = ("sh", "ls", "cat", "echo", "grep", "sed", "awk", "head", "tail", "wc", "find", "sort",
            "uniq", "cut", "tr", "env", "test", "[", "true", "false", "sleep", "yes", "dd", "id",
            "mkdir", "rm", "cp", "mv", "touch", "xargs", "printf", "basename", "dirname", "nc",
            "wget", "diff", "sha256sum", "stat", "readlink", "realpath", "seq", "tee", "od", "cmp")


def _host_python() -> Path:
    for cand in ("/usr/bin/python3", shutil.which("python3") or "", sys.executable):
        if cand and Path(cand).exists():
            return Path(os.path.realpath(cand))
    raise SandboxError("no python3 on the host to build the test image from")


def _ldd(paths: list[Path]) -> set[Path]:
    libs: set[Path] = set()
    for path in paths:
        proc = subprocess.run(["ldd", str(path)], capture_output=True, text=True)
        for line in proc.stdout.splitlines():
            m = re.search(r"(/\S+)\s+\(0x", line)
            if m and Path(m.group(1)).exists():
                libs.add(Path(m.group(1)))
    return libs


def _stdlib_dir(python: Path) -> Path:
    out = subprocess.run([str(python), "-I", "-c", "import sysconfig;print(sysconfig.get_paths()['stdlib'])"],
                         capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def rootfs_files(include_git: bool = True, extra_binaries: tuple[str, ...] = ()) -> list[Path]:
    """Every host file that goes into the image (sorted; symlinks resolved later).

    ``extra_binaries``: more host programs (e.g. ``bash``), each with the shared libraries it needs.
    """
    python = _host_python()
    busybox = shutil.which("busybox")
    if busybox is None:
        raise SandboxError("busybox is not installed (apt-get install busybox-static)")
    stdlib = _stdlib_dir(python)
    files: set[Path] = {python, Path(busybox)}
    for path in stdlib.rglob("*"):
        rel = path.relative_to(stdlib).as_posix()
        if any(rel == s or rel.startswith(s + "/") or f"/{s}/" in f"/{rel}/" for s in _SKIP_STDLIB):
            continue
        if path.is_file():
            files.add(path)
    binaries = [python, *Path(stdlib, "lib-dynload").glob("*.so")]
    programs = (("git",) if include_git else ()) + tuple(extra_binaries)
    for name in programs:
        found = shutil.which(name)
        if found is None:
            if name == "git":
                continue   # the proof image works without git; a task image asks for it explicitly
            raise SandboxError(f"{name} is not installed on this host (the image copies the host's {name})")
        real = Path(os.path.realpath(found))
        files.add(real)
        binaries.append(real)
    files |= _ldd(binaries)
    for loader in glob.glob("/lib64/ld-linux*.so*") + glob.glob("/usr/lib64/ld-linux*.so*"):
        files.add(Path(loader))
    return sorted(files)


def _info(name: str, *, mode: int, kind: bytes, uid: int = 0, gid: int = 0) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name.lstrip("/"))
    info.mode, info.uid, info.gid, info.mtime, info.type = mode, uid, gid, 0, kind
    return info


class RootfsWriter:
    """Members of a rootfs tar with parents created once, and two digests of what went in.

    ``files``: every file's path, mode and bytes and every link's target (the label
    ``swe-taskflow.rootfs-sha256``, as earlier builds of the project wrote it, so they reuse these images);
    ``owners``: every folder (path, mode, owner) and every file's owner (``swe-taskflow.owners-sha256``).
    An image is reused only when both match, so any change of content, folder or owner rebuilds it.
    """

    def __init__(self, tar: tarfile.TarFile) -> None:
        self.tar = tar
        self.files = hashlib.sha256()
        self.owners = hashlib.sha256()
        self.dirs: set[str] = set()
        self.paths: set[str] = set()

    def dir(self, path: str, *, mode: int = 0o755, uid: int = 0, gid: int = 0) -> None:
        parts = Path(path).parts[1:]
        for i in range(1, len(parts) + 1):
            d = "/" + "/".join(parts[:i])
            if d not in self.dirs:
                self.dirs.add(d)
                last = i == len(parts)
                info = _info(d, mode=mode if last else 0o755, kind=tarfile.DIRTYPE, uid=uid if last else 0,
                             gid=gid if last else 0)
                self.owners.update(f"{d}/\0{oct(info.mode)}\0{info.uid}:{info.gid}\0".encode())
                self.tar.addfile(info)

    def file(self, path: str, data: bytes, *, mode: int = 0o644, uid: int = 0, gid: int = 0) -> None:
        self.dir(str(Path(path).parent))
        self.paths.add(path)
        self.files.update(path.encode() + b"\0" + oct(mode).encode() + b"\0" + hashlib.sha256(data).digest())
        self.owners.update(f"{path}\0{uid}:{gid}\0".encode())
        info = _info(path, mode=mode, kind=tarfile.REGTYPE, uid=uid, gid=gid)
        info.size = len(data)
        self.tar.addfile(info, io.BytesIO(data))

    def symlink(self, path: str, target: str, *, uid: int = 0, gid: int = 0) -> None:
        self.paths.add(path)
        self.files.update(path.encode() + b"\0->" + target.encode())
        if uid or gid:   # root's links were never in the owners digest: images built before keep their label
            self.owners.update(f"{path}\0->{uid}:{gid}\0".encode())
        info = _info(path, mode=0o777, kind=tarfile.SYMTYPE, uid=uid, gid=gid)
        info.linkname = target
        self.tar.addfile(info)

    def labels(self) -> dict[str, str]:
        return {"swe-taskflow.rootfs-sha256": self.files.hexdigest(),
                "swe-taskflow.owners-sha256": self.owners.hexdigest()}


PASSWD = "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/tmp:/bin/sh\n"
GROUP = "root:x:0:\nnogroup:x:65534:\n"


def write_rootfs_tar(out, include_git: bool = True, *, extra_binaries: tuple[str, ...] = (),
                     applets: tuple[str, ...] = _APPLETS, passwd: str = PASSWD, group: str = GROUP,
                     extra: Callable[[RootfsWriter], None] | None = None) -> dict[str, str]:
    """Write the rootfs tar to the binary file ``out``; returns its content labels (:meth:`RootfsWriter.labels`).

    ``applets``: busybox applets linked into /usr/bin (``("*",)``: every applet this busybox has);
    ``extra(writer)`` adds more members (a task image puts its repository there).
    """
    files = rootfs_files(include_git, extra_binaries)
    python = _host_python()
    if applets == ("*",):
        listed = subprocess.run([shutil.which("busybox") or "busybox", "--list"], capture_output=True, text=True)
        applets = tuple(sorted(set(listed.stdout.split()) - {"busybox"}))
    with tarfile.open(fileobj=out, mode="w|") as tar:
        w = RootfsWriter(tar)
        # merged-/usr layout, as Debian has it
        for d in ("/usr/bin", "/usr/lib", "/usr/lib64"):
            w.dir(d)
        for link, target in (("/bin", "usr/bin"), ("/lib", "usr/lib"), ("/lib64", "usr/lib64"), ("/sbin", "usr/bin")):
            w.symlink(link, target)
        for d in ("/tmp", "/repo", "/proof", "/etc", "/dev", "/proc", "/sys"):
            w.dir(d, mode=0o1777 if d == "/tmp" else 0o755)
        w.file("/etc/passwd", passwd.encode())
        w.file("/etc/group", group.encode())
        for f in files:
            real = Path(os.path.realpath(f))
            target = "/usr" + str(f) if not str(f).startswith("/usr/") else str(f)
            if target in w.paths:   # /lib/x and /usr/lib/x are one file in a merged-/usr layout
                continue
            w.file(target, real.read_bytes(), mode=0o755 if os.access(real, os.X_OK) else 0o644)
        w.symlink("/usr/bin/python3", python.name)
        if python.name != "python":
            w.symlink("/usr/bin/python", python.name)
        for applet in applets:
            if f"/usr/bin/{applet}" not in w.paths:
                w.symlink(f"/usr/bin/{applet}", "busybox")
        if extra is not None:
            extra(w)
    return w.labels()


def import_rootfs(tag: str, write: Callable[[Any], dict[str, str]], *, changes: list[str], client=None,
                  force: bool = False, labels: dict[str, str] | None = None) -> dict:
    """``docker import`` the tar ``write(file)`` makes, unless ``tag`` already holds that content.

    ``write`` returns the content labels; ``content_sha256`` in the result hashes them together.
    Returns ``{"tag", "image_id", "content_sha256", "built", "seconds"}``.
    """
    from swe_taskflow.hashing import canonical_sha256

    from .docker_runner import docker_client

    client = client or docker_client()
    t0 = time.monotonic()
    with tempfile.TemporaryFile() as tar_file:
        content_labels = write(tar_file)
        content = canonical_sha256(content_labels)
        if not force:
            try:
                img = client.images.get(tag)
                have = img.labels or {}
                if all(have.get(k) == v for k, v in content_labels.items()):
                    return {"tag": tag, "image_id": img.id, "content_sha256": content, "built": False,
                            "seconds": round(time.monotonic() - t0, 2)}
            except Exception:  # noqa: BLE001 - absent image: build it
                pass
        tar_file.seek(0)
        repo, _, version = tag.rpartition(":") if ":" in tag.split("/")[-1] else (tag, "", "latest")
        from swe_taskflow.hygiene import IMAGE_LABEL, owner_id

        # every image says who built it (never the containers' owner label: containers inherit image labels)
        all_labels = {**(labels or {}), **content_labels, IMAGE_LABEL: owner_id()}
        changes = [*changes, *(f"LABEL {k}={v}" for k, v in sorted(all_labels.items()))]
        try:
            client.api.import_image_from_stream(iter(lambda: tar_file.read(1 << 20), b""), repository=repo,
                                                tag=version, changes=changes)
        except Exception as exc:  # noqa: BLE001 - any daemon failure is an infrastructure problem
            raise SandboxError(f"docker import of {tag} failed: {exc}") from exc
    img = client.images.get(tag)
    return {"tag": tag, "image_id": img.id, "content_sha256": content, "built": True,
            "seconds": round(time.monotonic() - t0, 2)}


def image_summary(info: dict) -> str:
    """One readable line for what :func:`import_rootfs` returned (the ``build-image`` commands print it;
    ``--json`` prints the dict itself)."""
    image_id = str(info.get("image_id", ""))
    short = image_id.split(":", 1)[-1][:12]
    if info.get("built"):
        return f"built image {info['tag']} (id {short}) in {info.get('seconds', 0):g} s"
    return f"image {info['tag']} is up to date (id {short}, same content; --force rebuilds it)"


def build_test_image(tag: str = DEFAULT_IMAGE, *, force: bool = False) -> dict:
    """Build (or reuse) the local proof image; returns ``{"tag", "image_id", "content_sha256", "built", "seconds"}``."""
    return import_rootfs(tag, write_rootfs_tar, changes=["ENV PATH=/usr/bin:/bin", "ENV LANG=C.UTF-8", "WORKDIR /repo"],
                         force=force)
