"""A bundled task's container image, built locally with no registry (SWE-Bench Pro images' layout).

The project's rootfs (host python3 and stdlib, busybox with every applet, git) plus bash, a
non-root ``agent`` user, and the task's repository at ``/app`` at its ``base_commit`` with its git
history, owned by that user so an agent can edit it. The tag is derived from what the image is
meant to hold (the repository commit, the layout below and the test command), never from this
host's binaries, so a task row can name its image before it is built and every machine names it
alike; what is actually imported (bytes, modes, folders, owners) is hashed into its content labels.
"""

from __future__ import annotations

import os
from pathlib import Path

from swe_taskflow.errors import ConfigError
from swe_taskflow.hashing import canonical_sha256
from swe_taskflow.owned import owned_temp

from ..proofs.image import GROUP, PASSWD, RootfsWriter, import_rootfs, write_rootfs_tar
from .repo import commit_folder

#: Bump when the layout changes: it is part of every task image's tag.
LAYOUT_VERSION = 1
WORKDIR = "/app"
AGENT_USER, AGENT_UID = "agent", 1000
TOOLS = ("bash", "busybox", "git", "python3")
#: /etc/gitconfig: root (a verifier) may use the agent's repository, and git never waits on a pager.
GITCONFIG = "[safe]\n\tdirectory = *\n[core]\n\tpager = cat\n[user]\n\tname = agent\n\temail = agent@localhost\n"


def layout(repo: str, base_commit: str, test_command: str) -> dict:
    """What the image holds, as data: the tag is its hash."""
    return {"format": "swe-taskflow/task-image", "layout_version": LAYOUT_VERSION, "repo": repo,
            "base_commit": base_commit, "workdir": WORKDIR, "user": f"{AGENT_USER}:{AGENT_UID}",
            "tools": list(TOOLS), "test_command": test_command}


def image_tag(repo: str, base_commit: str, test_command: str) -> str:
    """``swe-taskflow/<name>:<sha12>``, e.g. ``swe-taskflow/ticketdesk:1a2b3c4d5e6f``."""
    name = repo.split("/")[-1].lower()
    return f"swe-taskflow/{name}:{canonical_sha256(layout(repo, base_commit, test_command))[:12]}"


def _add_tree(w: RootfsWriter, src: Path, dest: str) -> None:
    """Every file, folder and link under ``src`` (``.git`` included) at ``dest``, owned by the agent user.

    A link stays a link (as git checks it out), never the bytes it points at; ``src`` is a committed
    copy whose links builder.bundled.repo.check_folder kept inside it."""
    w.dir(dest, uid=AGENT_UID, gid=AGENT_UID)
    for root, dirs, files in os.walk(src):   # a folder link is listed in dirs, never entered
        dirs.sort()
        rel = Path(root).relative_to(src)
        for name in dirs + sorted(files):   # folders first: the order earlier images were written in
            path, where = Path(root, name), f"{dest}/{(rel / name).as_posix()}"
            if path.is_symlink():
                w.symlink(where, os.readlink(path), uid=AGENT_UID, gid=AGENT_UID)
            elif name in dirs:
                w.dir(where, uid=AGENT_UID, gid=AGENT_UID)
            else:
                mode = 0o755 if os.access(path, os.X_OK) else 0o644
                w.file(where, path.read_bytes(), mode=mode, uid=AGENT_UID, gid=AGENT_UID)


def build_task_image(task, files_dir: Path, *, client=None, force: bool = False) -> dict:
    """Build (or reuse) the image ``task.image_name`` names, from the repository files in ``files_dir``.

    The files are committed reproducibly first; their commit must be the task's ``base_commit`` and
    the tag the one :func:`image_tag` derives (a ConfigError names the field otherwise).
    Returns ``{"tag", "image_id", "content_sha256", "built", "seconds"}``.
    """
    with owned_temp("swe-taskflow-taskimage-") as tmp:
        repo_dir = Path(tmp, "app")
        commit = commit_folder(Path(files_dir), repo_dir)
        if commit != task.base_commit:
            raise ConfigError("the bundled repository's commit is not the task's base_commit", path=str(files_dir),
                              field="base_commit", expected=task.base_commit, actual=commit,
                              hint="the files changed: update the task row (see docs/example-task.md)")
        tag = image_tag(task.repo, commit, task.test_command)
        if task.image_name != tag:
            raise ConfigError("the task's image_name is not the tag its content gives", field="image_name",
                              expected=tag, actual=task.image_name)
        passwd = PASSWD + f"{AGENT_USER}:x:{AGENT_UID}:{AGENT_UID}:{AGENT_USER}:/home/{AGENT_USER}:/bin/bash\n"
        group = GROUP + f"{AGENT_USER}:x:{AGENT_UID}:\n"

        def extra(w: RootfsWriter) -> None:
            w.file("/etc/gitconfig", GITCONFIG.encode())
            w.dir("/root", mode=0o700)
            w.dir(f"/home/{AGENT_USER}", uid=AGENT_UID, gid=AGENT_UID)
            w.dir("/logs", mode=0o1777)
            _add_tree(w, repo_dir, WORKDIR)

        def write(out) -> str:
            return write_rootfs_tar(out, include_git=True, extra_binaries=("bash",), applets=("*",),
                                    passwd=passwd, group=group, extra=extra)

        changes = ["ENV PATH=/usr/local/bin:/usr/bin:/bin", "ENV LANG=C.UTF-8", "ENV PYTHONDONTWRITEBYTECODE=1",
                   f"WORKDIR {WORKDIR}", 'CMD ["/bin/bash"]']
        return import_rootfs(tag, write, changes=changes, client=client, force=force,
                             labels={"swe-taskflow.task-repo": task.repo, "swe-taskflow.base-commit": commit})
