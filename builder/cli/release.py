"""CLI: `swe-taskflow verify`, `swe-taskflow push`, `swe-taskflow trajectories import`.

Thin: parses arguments and calls swe_taskflow.verify / builder.api. Never prints a token.
"""

from __future__ import annotations

import argparse
import sys

from swe_taskflow.words import counted

from . import argtypes
from .groups import command_group


def register(sub) -> None:
    p = sub.add_parser("verify", help="verify a release folder or Hub dataset revision against its manifest",
                       description="Recompute every row, split and file hash, check the card's configs and "
                                   "features against the files and the manifest, recompute TFAS per split; "
                                   "exit 1 on any difference.")
    p.add_argument("release", metavar="PATH_OR_HUB_ID", type=argtypes.release_ref,
                   help="release folder, or ORG/NAME on the Hub")
    p.add_argument("--revision", help="Hub revision (tag, branch or commit) to verify")
    p.add_argument("--reprove", action="store_true", help="re-run every proof script in a sandbox")
    p.add_argument("--repos", metavar="DIR", help="checkouts of the source repositories (for --reprove)")
    p.add_argument("--tasks", metavar="SPEC", help="the source tasks (file, folder or Hub id, with gold patches): "
                                                   "--reprove then also checks every augmentation reference "
                                                   "derived from a gold patch")
    p.add_argument("--sandbox", default="auto",
                   help="with --reprove: the auditor's sandbox every proof re-runs in (auto: docker when a daemon "
                        "answers, else bwrap; harbor or harbor:<environment>); the sandbox a report records is "
                        "only compared, never used")
    p.add_argument("--max-timeout-s", type=argtypes.seconds, metavar="S",
                   help="with --reprove: the most seconds one re-run may take (default 120; a report's own "
                        "value is kept only when lower)")
    p.add_argument("--max-mem-mb", type=argtypes.int_range(16, 1 << 20), metavar="MB",
                   help="with --reprove: the most memory one re-run may use (default 1024)")
    p.add_argument("--max-tmpfs-mb", type=argtypes.int_range(1, 1 << 20), metavar="MB",
                   help="with --reprove: the size of each writable tmpfs of a re-run (default 256)")
    p.add_argument("--quiet", action="store_true", help="print errors only")
    _hub_timeout_option(p)
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("push", help="publish a verified release folder to the Hub (one atomic commit + tag)",
                       description="Refuses a release that does not verify. Token from HF_TOKEN or the "
                                   "huggingface_hub login; it is never printed.")
    p.add_argument("release", metavar="PATH", help="release folder written by the build")
    p.add_argument("--repo", required=True, metavar="ORG/NAME", help="dataset repository id")
    p.add_argument("--tag", help="tag to create (default: the release version)")
    p.add_argument("--private", action="store_true", help="create the repository as private")
    p.add_argument("--record", metavar="DIR",
                   help="where to keep a copy of the published manifest (default: ./manifests when it exists)")
    _hub_timeout_option(p)
    p.set_defaults(func=cmd_push)

    tsub = command_group(sub, "trajectories", dest="trajectories_command", metavar="COMMAND", required=True,
                         help="agent trajectories of a release")
    t = tsub.add_parser("import", help="import mini-swe-agent .traj.json(.gz) or Harbor ATIF files into a release",
                        description="Binds each trajectory to the split hash and row hash it was run on, then "
                                    "rewrites the release (new manifest; verify passes).")
    t.add_argument("release", metavar="PATH", help="release folder")
    t.add_argument("files", nargs="+", metavar="FILE", help="trajectory files")
    t.add_argument("--condition", required=True, help="split the trajectories were run on")
    t.add_argument("--model", help="model name (default: read from the trajectory)")
    t.add_argument("--run", type=argtypes.non_negative, default=0, help="run index (default 0)")
    t.add_argument("--format", default="auto", choices=("auto", "mini-swe-agent", "atif"))
    t.add_argument("--replace", action="store_true", help="replace trajectories already in the release")
    t.set_defaults(func=cmd_trajectories_import)


def _hub_timeout_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--hub-timeout", type=argtypes.seconds, default=None, metavar="SECONDS",
                   help="how long a Hub request may wait to connect or between two bytes before the command ends "
                        "(default: SWE_TASKFLOW_HUB_TIMEOUT, else 60; HF_HUB_ETAG_TIMEOUT and HF_HUB_DOWNLOAD_TIMEOUT "
                        "apply to downloads when set)")


def cmd_verify(args: argparse.Namespace) -> int:
    if args.reprove:   # lazy: only auditors who reprove need sandboxes
        from .. import api
        report = api.reprove(args.release, revision=args.revision, repos=args.repos, tasks=args.tasks,
                             sandbox=args.sandbox, max_timeout_s=args.max_timeout_s, max_mem_mb=args.max_mem_mb,
                             max_tmpfs_mb=args.max_tmpfs_mb, hub_timeout=args.hub_timeout,
                             progress=sys.stderr.isatty()).report
    else:
        if args.tasks:
            print("note: --tasks is read only with --reprove: no gold-patch check runs", file=sys.stderr)
        from swe_taskflow.verify import verify_release
        report = verify_release(args.release, revision=args.revision, repos_dir=args.repos,
                                progress=sys.stderr.isatty(), hub_timeout=args.hub_timeout)
    for note in report.notes:
        print(f"note: {note}", file=sys.stderr)
    if report.errors:
        for e in report.errors:
            print(f"{e.kind}: {e}", file=sys.stderr)
        if report.gold_summary():   # which of the errors above come from the source tasks' gold patches
            print(report.gold_summary(), file=sys.stderr)
        print(f"swe-taskflow: verify failed: {len(report.errors)} error(s) in {report.root}", file=sys.stderr)
        return 1
    if not args.quiet:
        print(report.table())
    return 0


def cmd_push(args: argparse.Namespace) -> int:
    from pathlib import Path
    from .. import api
    record = args.record or ("manifests" if Path("manifests").is_dir() else None)
    result = api.push(args.release, args.repo, tag=args.tag, private=args.private, record=record,
                      hub_timeout=args.hub_timeout)
    if result.rewritten:
        print(f"wrote {args.repo} into the card, croissant.json and manifest of the pushed copy "
              f"({args.release} is unchanged)")
    if result.already_published:
        print(f"{args.repo}: release already published at that revision (tag {result.tag}, commit "
              f"{result.commit_oid}); nothing sent")
    else:
        print(f"pushed {args.repo} commit {result.commit_oid} (parent {result.parent_commit})"
              + (f", tag {result.tag}" if result.tag else ""))
    print(f"{len(result.files)} files on the Hub match the manifest sha256")
    return 0


def cmd_trajectories_import(args: argparse.Namespace) -> int:
    from ..release.trajectories import add_trajectories, import_trajectories
    rows = import_trajectories(args.release, args.files, condition=args.condition, model=args.model, run=args.run,
                               fmt=args.format)
    manifest = add_trajectories(args.release, rows, replace=args.replace)
    n = sum(s.rows for s in manifest.splits if s.config == "trajectories")
    print(f"imported {counted(len(rows), 'trajectory')} into {args.release} ({n} in the release); "
          f"manifest {manifest.path_in_release}")
    return 0
