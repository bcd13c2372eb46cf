"""The builder's container work on Harbor environments: a worker the builder drives over JSON lines on a pipe.

Harbor needs Python >= 3.12 and its own venv (docs/proofs.md says why a worker and not one venv): the
builder (:mod:`builder.proofs.harbor_runner`) starts ``python -m swe_taskflow_harbor.proof_worker`` there
and sends it one JSON object per line on stdin; the worker answers one JSON object per line on stdout,
tagged with the request's ``id``, and serves requests concurrently (one asyncio task each).

Requests (``op``):

- ``start``: ``environment`` (an import path ``module:Class``, or a Harbor environment type such as
  ``daytona``), ``kwargs`` (passed to the environment), ``image``, ``repo_path`` (where the repository lives
  in the image, e.g. ``/app``), ``upload`` (a host folder to copy in instead, for images without the
  repository), ``label``. Answer: ``env`` (a handle), ``tree`` (the pristine repository's tree hash).
- ``run``: ``env``, ``script``, ``patch`` (applied before the run, "" none), ``limits``. Each run starts from a
  clean state (:data:`RESET`); the script runs as uid 65534 with ``ulimit`` limits, a ``timeout -s KILL``
  and stdout/stderr each cut at ``max_output_bytes + 1`` bytes. Answer: the output bytes (base64), exit
  code, whether the clock ran out, and the tree hashes before and after.
- ``stop``: ``env``. End of input (the builder exited, even by ``kill -9``) stops every environment.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import shlex
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from swe_taskflow import hygiene
from swe_taskflow_harbor.reset import CLEAN, HARDEN

#: Where the working copy of the repository is placed for each run (as the docker sandbox mounts it).
REPO = "/repo"
#: Root-only folder of the worker inside an environment: the pristine repository, captured output.
STATE = "/var/lib/swe-taskflow-proof"
NEUTRAL_ATTRIBUTES = "* -text -eol -crlf -filter -ident -working-tree-encoding -diff -merge -export-subst"
GIT = ("git -c safe.directory='*' -c core.fsmonitor=false -c core.hooksPath=/dev/null "
       "-c core.attributesFile=/dev/null -c core.untrackedCache=false -c core.autocrlf=false "
       "-c core.symlinks=true -c protocol.allow=never")
#: git with none of the repository's configuration, hooks or attributes (as builder.proofs.gitsafe on the host).
GIT_PRELUDE = f"""set -e
G=$(mktemp -d {STATE}/git.XXXXXX)
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null HOME=/nonexistent LC_ALL=C GIT_TERMINAL_PROMPT=0 \\
  GIT_OPTIONAL_LOCKS=0 GIT_NO_REPLACE_OBJECTS=1
{GIT} init -q --bare --template= "$G/g"
mkdir -p "$G/g/info" && echo '{NEUTRAL_ATTRIBUTES}' > "$G/g/info/attributes"
export GIT_DIR="$G/g" GIT_WORK_TREE={REPO} GIT_INDEX_FILE="$G/index"
if [ -d {REPO}/.git/objects ] && [ ! -L {REPO}/.git ]; then export GIT_ALTERNATE_OBJECT_DIRECTORIES={REPO}/.git/objects; fi
cd {REPO}
"""
TREE = f"{GIT} add --all --force . && {GIT} write-tree"
#: Drop to uid/gid 65534 with no groups: util-linux setpriv, else python3, else su.
DROP = ("drop() { if setpriv --help 2>&1 | grep -q reuid; then setpriv --reuid=65534 --regid=65534 --clear-groups "
        "-- \"$@\"; elif command -v python3 >/dev/null; then python3 -c 'import os,sys;os.setgroups([]);"
        "os.setgid(65534);os.setuid(65534);os.execvp(sys.argv[1],sys.argv[1:])' \"$@\"; "
        "else echo 'no way to drop to uid 65534 (setpriv, python3)' >&2; return 126; fi; }")


#: A clean state (:mod:`swe_taskflow_harbor.reset`: nothing of the last proof left anywhere the script user can
#: write, checked; else one ``reset failed:`` line and exit 1), /repo a fresh root-owned copy; then its tree hash.
RESET = (f"set -e\n{DROP}\nrm -rf {REPO} {STATE}/out\n{CLEAN}\ncp -a {STATE}/pristine {REPO}; chown -R 0:0 {REPO}; "
         f"chmod -R go-w {REPO}; mkdir -m 700 {STATE}/out\n{GIT_PRELUDE}{TREE}")


def _last_line(res: Any) -> str:
    """The last line a command printed (a tree hash, a commit), "" when it failed or printed nothing."""
    return "" if res.return_code else ((res.stdout or "").strip().splitlines() or [""])[-1]


def _run_command(limits: dict[str, Any]) -> str:
    """The script as uid 65534 under limits, stdout and stderr each cut one byte past the limit."""
    cut = int(limits["max_output_bytes"]) + 1
    ulimits = (f"ulimit -v {int(limits['mem_mb']) * 1024}; ulimit -u {int(limits['pids'])}; "
               f"ulimit -f {int(limits['fsize_mb']) * 1024}")
    return (f"{DROP}\ncd {REPO}\n"
            "if [ \"$(head -c 2 /proof/script)\" = '#!' ]; then C=/proof/script; else C='/bin/sh /proof/script'; fi\n"
            f"{{ ( {ulimits}; drop env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp "
            f"/bin/sh -c 'timeout -s KILL {float(limits['timeout_s'])} \"$@\"; exit $?' sh $C < /dev/null 2>&4; r=$?; "
            f"drop /bin/sh -c 'kill -9 -1'; echo $r > {STATE}/out/rc ) 4>&1 1>&3 3>&- 2>/dev/null "
            f"| head -c {cut} > {STATE}/out/err; }} 3>&1 | head -c {cut} > {STATE}/out/out\n")


class Worker:
    def __init__(self) -> None:
        self.envs: dict[str, Any] = {}
        self.pristine_tree: dict[str, str] = {}
        self.folders: dict[str, Any] = {}   # TemporaryDirectory per environment
        self.out_lock = asyncio.Lock()

    async def reply(self, obj: dict[str, Any]) -> None:
        async with self.out_lock:
            sys.stdout.write(json.dumps(obj, sort_keys=True) + "\n")
            sys.stdout.flush()

    # ------------------------------------------------------------------ environments

    def _make(self, req: dict[str, Any]):
        from harbor.environments.factory import EnvironmentFactory
        from harbor.models.task.config import EnvironmentConfig, NetworkMode, NetworkPolicy
        from harbor.models.trial.paths import TrialPaths
        from harbor.utils.import_path import import_class

        # in this process's owner-labelled scratch folder: swept by the project's next command if the worker
        # itself is killed with kill -9
        scratch = hygiene.scratch_temp("harbor-proof-")
        root = Path(scratch.name)
        (root / "environment").mkdir()
        trial = TrialPaths(root / "trial")
        trial.mkdir()
        kwargs = dict(environment_dir=root / "environment", environment_name=req.get("label") or "proof",
                      session_id=f"proof-{uuid.uuid4().hex[:12]}", trial_paths=trial,
                      task_env_config=EnvironmentConfig(docker_image=req["image"]),
                      network_policy=NetworkPolicy(network_mode=NetworkMode.NO_NETWORK), **(req.get("kwargs") or {}))
        spec = req["environment"]
        try:
            if ":" in spec:
                env = import_class(spec, label="environment")(**kwargs)
            else:
                from harbor.models.environment_type import EnvironmentType

                env = EnvironmentFactory.create_environment(EnvironmentType(spec), **kwargs)
        except BaseException:
            scratch.cleanup()
            raise
        self.folders[env.session_id] = scratch   # Harbor's host-side folders of this environment, removed on stop
        return env

    async def start(self, req: dict[str, Any]) -> dict[str, Any]:
        env = self._make(req)
        handle = env.session_id
        self.envs[handle] = env   # registered before start: an interrupted start is still stopped
        try:
            await env.start(force_build=False)
            if req.get("upload"):
                await env.exec(f"rm -rf {STATE}/pristine; mkdir -p -m 700 {STATE}", user="root")
                await env.upload_dir(req["upload"], f"{STATE}/pristine")
            else:
                src = shlex.quote(req.get("repo_path") or "/app")
                res = await env.exec(f"set -e; mkdir -p -m 700 {STATE}; rm -rf {STATE}/pristine; "
                                     f"cp -a {src} {STATE}/pristine", user="root")
                if res.return_code:
                    raise RuntimeError(f"no repository at {src} in {req['image']}: {(res.stdout or '')[-300:]}")
            res = await env.exec(HARDEN, user="root")
            if res.return_code:
                raise RuntimeError(f"preparing the environment failed: {(res.stdout or '')[-300:]}")
            res = await env.exec(RESET, user="root")
            if res.return_code:
                raise RuntimeError(f"hashing the repository failed: {(res.stdout or '')[-300:]}")
            self.pristine_tree[handle] = _last_line(res)
            head = _last_line(await env.exec(f"cd {REPO} && GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null "
                                             f"HOME=/nonexistent {GIT} rev-parse --verify -q HEAD 2>/dev/null || true",
                                             user="root"))
        except BaseException:
            await self.stop({"env": handle})
            raise
        return {"env": handle, "tree": self.pristine_tree[handle], "head": head}

    async def stop(self, req: dict[str, Any]) -> dict[str, Any]:
        env = self.envs.pop(req["env"], None)
        self.pristine_tree.pop(req["env"], None)
        try:
            if env is not None:
                await env.stop(delete=True)
        finally:
            folder = self.folders.pop(req["env"], None)
            if folder is not None:
                folder.cleanup()
        return {"stopped": env is not None}

    # ------------------------------------------------------------------ one proof run

    async def run(self, req: dict[str, Any]) -> dict[str, Any]:
        env, limits = self.envs[req["env"]], req["limits"]
        res = await env.exec(RESET, user="root")
        if res.return_code:
            return {"infra_error": "resetting the environment between proofs failed (a proof's leftovers could "
                                  f"reach the next): {(res.stdout or '').strip()[-300:]}"}
        clean, pristine = _last_line(res), self.pristine_tree[req["env"]]
        if clean != pristine:
            return {"infra_error": f"the reset repository's tree {clean} is not the pristine {pristine}"}
        with hygiene.scratch_temp("harbor-run-") as tmp:
            script = Path(tmp, "script")
            script.write_text(req["script"], encoding="utf-8")
            await env.exec("rm -rf /proof && mkdir -m 755 /proof", user="root")
            await env.upload_file(script, "/proof/script")
            if req.get("patch"):
                Path(tmp, "patch").write_text(req["patch"], encoding="utf-8")
                await env.upload_file(Path(tmp, "patch"), f"{STATE}/out/patch")
            await env.exec("chown 0:0 /proof/script && chmod 755 /proof/script", user="root")
            if req.get("patch"):
                res = await env.exec(GIT_PRELUDE + f"{GIT} apply --whitespace=nowarn {STATE}/out/patch && "
                                     f"rm -f {STATE}/out/patch", user="root")
                if res.return_code:
                    return {"patch_error": f"git apply failed: {(res.stdout or '').strip()[-300:]}"}
            before = _last_line(await env.exec(GIT_PRELUDE + TREE, user="root"))
            t0 = time.monotonic()
            res = await env.exec(_run_command(limits), user="root", timeout_sec=int(limits["timeout_s"]) + 120)
            duration = time.monotonic() - t0
            got = {}
            for name in ("out", "err", "rc"):
                await env.download_file(f"{STATE}/out/{name}", Path(tmp, name))
                got[name] = Path(tmp, name).read_bytes()
            after = _last_line(await env.exec(GIT_PRELUDE + TREE, user="root"))
        rc = int(got["rc"].strip() or -1)
        timed_out = rc in (124, 137) and duration >= float(limits["timeout_s"]) * 0.95
        return {"stdout": base64.b64encode(got["out"]).decode(), "stderr": base64.b64encode(got["err"]).decode(),
                "exit_code": rc, "timed_out": timed_out, "duration_s": duration,
                "tree_before": before, "tree_after": after}

    # ------------------------------------------------------------------ protocol

    async def handle(self, req: dict[str, Any]) -> None:
        try:
            body = await getattr(self, req["op"])(req)
            await self.reply({"id": req["id"], "ok": True, **body})
        except Exception as exc:  # noqa: BLE001 - every failure is answered, never lost
            await self.reply({"id": req.get("id"), "ok": False, "error": f"{type(exc).__name__}: {str(exc)[:500]}"})

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 26)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        tasks: set[asyncio.Task] = set()
        await self.reply({"id": 0, "ok": True, "ready": True})
        try:
            while line := await reader.readline():
                req = json.loads(line)
                if req.get("op") not in ("start", "run", "stop"):
                    await self.reply({"id": req.get("id"), "ok": False, "error": f"unknown op {req.get('op')!r}"})
                    continue
                task = asyncio.create_task(self.handle(req))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
        finally:   # end of input or a signal: nothing the worker started keeps running
            for task in list(tasks):
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await asyncio.gather(*(self.stop({"env": h}) for h in list(self.envs)), return_exceptions=True)


async def _amain() -> None:
    import signal

    main_task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):   # stop every environment, then exit
        loop.add_signal_handler(sig, main_task.cancel)
    await Worker().serve()


def main() -> None:
    with contextlib.suppress(KeyboardInterrupt, asyncio.CancelledError):
        asyncio.run(_amain())


if __name__ == "__main__":
    main()
