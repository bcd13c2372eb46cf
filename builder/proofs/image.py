"""Build the local test image without a registry: the host's python3 + busybox-static + git.

The rootfs holds the host interpreter and its stdlib, every shared library ``ldd`` lists for the
binaries and extension modules, busybox as /bin/sh and the usual applets, and git. It is streamed as
a tar into ``docker import`` (the SDK's ``import_image``). A label carries the hash of the file list,
so a rebuild with the same host files is skipped.
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
    out = subprocess.run([str(python), "-c", "import sysconfig;print(sysconfig.get_paths()['stdlib'])"],
                         capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def rootfs_files(include_git: bool = True) -> list[Path]:
    """Every host file that goes into the image (sorted; symlinks resolved later)."""
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
    if include_git and shutil.which("git"):
        git = Path(os.path.realpath(shutil.which("git")))
        files.add(git)
        binaries.append(git)
    files |= _ldd(binaries)
    for loader in glob.glob("/lib64/ld-linux*.so*") + glob.glob("/usr/lib64/ld-linux*.so*"):
        files.add(Path(loader))
    return sorted(files)


def _add(tar: tarfile.TarFile, name: str, data: bytes | None = None, *, mode: int = 0o644,
         kind: bytes = tarfile.REGTYPE, link: str = "") -> None:
    info = tarfile.TarInfo(name.lstrip("/"))
    info.mode, info.uid, info.gid, info.mtime, info.type = mode, 0, 0, 0, kind
    if kind == tarfile.SYMTYPE:
        info.linkname = link
        tar.addfile(info)
    elif kind == tarfile.DIRTYPE:
        tar.addfile(info)
    else:
        data = data or b""
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))


def write_rootfs_tar(out, include_git: bool = True) -> str:
    """Write the rootfs tar to the binary file ``out``; returns the sha256 of the file list and contents."""
    files = rootfs_files(include_git)
    python = _host_python()
    digest = hashlib.sha256()
    seen_dirs: set[str] = set()
    with tarfile.open(fileobj=out, mode="w|") as tar:
        def ensure_dir(path: str) -> None:
            parts = Path(path).parts[1:]
            for i in range(1, len(parts) + 1):
                d = "/" + "/".join(parts[:i])
                if d not in seen_dirs:
                    seen_dirs.add(d)
                    _add(tar, d, kind=tarfile.DIRTYPE, mode=0o755)
        # merged-/usr layout, as Debian has it
        ensure_dir("/usr/bin")
        ensure_dir("/usr/lib")
        ensure_dir("/usr/lib64")
        for link, target in (("/bin", "usr/bin"), ("/lib", "usr/lib"), ("/lib64", "usr/lib64"), ("/sbin", "usr/bin")):
            _add(tar, link, kind=tarfile.SYMTYPE, link=target)
        for d in ("/tmp", "/repo", "/proof", "/etc", "/dev", "/proc", "/sys"):
            _add(tar, d, kind=tarfile.DIRTYPE, mode=0o1777 if d == "/tmp" else 0o755)
        _add(tar, "/etc/passwd", b"root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/tmp:/bin/sh\n")
        _add(tar, "/etc/group", b"root:x:0:\nnogroup:x:65534:\n")
        written: set[str] = set()
        for f in files:
            real = Path(os.path.realpath(f))
            target = "/usr" + str(f) if not str(f).startswith("/usr/") else str(f)
            if target in written:   # /lib/x and /usr/lib/x are one file in a merged-/usr layout
                continue
            written.add(target)
            ensure_dir(str(Path(target).parent))
            data = real.read_bytes()
            digest.update(target.encode() + b"\0" + hashlib.sha256(data).digest())
            mode = 0o755 if os.access(real, os.X_OK) else 0o644
            _add(tar, target, data, mode=mode)
        _add(tar, "/usr/bin/python3", kind=tarfile.SYMTYPE, link=python.name)
        if python.name != "python":
            _add(tar, "/usr/bin/python", kind=tarfile.SYMTYPE, link=python.name)
        for applet in _APPLETS:
            if f"/usr/bin/{applet}" in written:
                continue
            _add(tar, f"/usr/bin/{applet}", kind=tarfile.SYMTYPE, link="busybox")
    return digest.hexdigest()


def build_test_image(tag: str = DEFAULT_IMAGE, *, client=None, force: bool = False,
                     include_git: bool = True) -> dict:
    """Build (or reuse) the local proof image; returns ``{"tag", "image_id", "content_sha256", "built", "seconds"}``."""
    from .docker_runner import docker_client

    client = client or docker_client()
    t0 = time.monotonic()
    with tempfile.TemporaryFile() as tar_file:
        content = write_rootfs_tar(tar_file, include_git=include_git)
        if not force:
            try:
                img = client.images.get(tag)
                if (img.labels or {}).get("swe-taskflow.rootfs-sha256") == content:
                    return {"tag": tag, "image_id": img.id, "content_sha256": content, "built": False,
                            "seconds": round(time.monotonic() - t0, 2)}
            except Exception:  # noqa: BLE001 - absent image: build it
                pass
        tar_file.seek(0)
        repo, _, version = tag.rpartition(":") if ":" in tag.split("/")[-1] else (tag, "", "latest")
        from ..hygiene import IMAGE_LABEL, owner_id

        changes = ["ENV PATH=/usr/bin:/bin", "ENV LANG=C.UTF-8", "WORKDIR /repo",
                   f"LABEL swe-taskflow.rootfs-sha256={content}", f"LABEL {IMAGE_LABEL}={owner_id()}"]
        try:
            client.api.import_image_from_stream(iter(lambda: tar_file.read(1 << 20), b""), repository=repo, tag=version, changes=changes)
        except Exception as exc:  # noqa: BLE001 - any daemon failure is an infrastructure problem
            raise SandboxError(f"docker import of the test image failed: {exc}") from exc
    img = client.images.get(tag)
    return {"tag": tag, "image_id": img.id, "content_sha256": content, "built": True,
            "seconds": round(time.monotonic() - t0, 2)}
