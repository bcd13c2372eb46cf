"""The proof worker's clean state between proofs, as shell text that runs as root in a Harbor environment.

A proof script runs as uid/gid 65534 with no groups. Everything it can leave behind for the next proof of the
same environment is covered, on busybox and GNU images alike (POSIX sh, ``find`` without ``-delete``, no tool
beyond busybox's applets):

- its processes: killed, then checked gone (a zombie holds nothing);
- what it can write: the temp folders (``/tmp``, ``/var/tmp``, ``/dev/shm``, ``/dev/mqueue``) emptied whoever
  wrote there, then every file-system entry owned by uid or gid 65534 anywhere (``/proc`` and ``/sys`` aside)
  removed; :data:`HARDEN` (once, when the environment starts) leaves it no other place: entries the image gives
  to 65534 become root's, world-writable files lose that bit, world-writable folders get the sticky bit (so it
  cannot remove or rename root's entries there);
- its System V IPC objects (shared memory, semaphores, message queues: they outlive a process);

then every one of those is checked again. Any failure, or anything left, prints one ``reset failed: ...`` line and
exits 1: the worker then reports an infrastructure error for the run, never a proof on a dirty state.
"""

from __future__ import annotations

#: The script user: its uid and gid.
NOBODY = 65534
#: Folders emptied before each proof, whoever wrote there (the docker sandbox gives a fresh /tmp and /dev/shm).
TEMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue")

#: Shell functions the reset and the hardening use (``$PRUNE``: the parts of the tree never walked).
FUNCTIONS = r"""
fail() { echo "reset failed: $*"; exit 1; }
PRUNE='( -path /proc -o -path /sys -o -path /var/lib/swe-taskflow-proof )'
walk() { find / $PRUNE -prune -o "$@"; }
uid_procs() {
  cat /proc/[0-9]*/status 2>/dev/null | awk '/^State:/{s=$2} /^Pid:/{p=$2} /^Uid:/{if ($2 == 65534 && s != "Z") print p}'
}
ipc_objects() {
  for spec in shm:8:-m sem:5:-s msg:8:-q; do
    f=/proc/sysvipc/${spec%%:*}; rest=${spec#*:}
    [ -r "$f" ] && awk -v c="${rest%%:*}" -v flag="${rest#*:}" 'NR > 1 && ($c == 65534) {print flag, $2}' "$f"
  done
  return 0
}
rm_ipc() {   # as their owner: root without CAP_SYS_ADMIN (a container's) may not remove another user's
  if command -v ipcrm >/dev/null 2>&1; then drop ipcrm "$1" "$2"
  elif command -v python3 >/dev/null 2>&1; then
    drop python3 -c 'import ctypes,sys;c=ctypes.CDLL(None);f={"-m":c.shmctl,"-s":c.semctl,"-q":c.msgctl}[sys.argv[1]]
sys.exit(0 if (f(int(sys.argv[2]),0,0) if sys.argv[1]=="-s" else f(int(sys.argv[2]),0,None))==0 else 1)' "$1" "$2"
  else return 1; fi
}
"""

#: Once, when an environment starts (before the pristine tree is hashed): nothing in the image is the script
#: user's, no file is world-writable, no world-writable folder lets it remove root's entries.
HARDEN = FUNCTIONS + r"""
set -e
walk \( -user 65534 -o -group 65534 \) -exec chown -h 0:0 {} + || fail "cannot take the image's files from uid 65534"
walk -type f -perm -0002 -exec chmod o-w {} + || fail "cannot make the image's world-writable files read-only"
walk -type d -perm -0002 ! -perm -1000 -exec chmod +t {} + || fail "cannot make world-writable folders sticky"
"""

#: Before every proof: the script user's processes, files and IPC objects gone, and checked gone.
CLEAN = FUNCTIONS + r"""
set -e
n=0
while :; do
  drop /bin/sh -c 'kill -9 -1' 2>/dev/null || true
  left=$(uid_procs)
  [ -z "$left" ] && break
  n=$((n + 1)); [ "$n" -lt 20 ] || fail "processes of uid 65534 survive: $(echo $left)"
  sleep 0.1
done
for d in /tmp /var/tmp /dev/shm /dev/mqueue; do
  [ -d "$d" ] && [ ! -L "$d" ] || continue
  for e in "$d"/* "$d"/.[!.]* "$d"/..?*; do
    if [ -e "$e" ] || [ -L "$e" ]; then rm -rf -- "$e" || fail "cannot remove $e"; fi
  done
done
walk \( -user 65534 -o -group 65534 \) -prune -exec rm -rf -- {} + || fail "cannot remove the files of uid 65534"
ipc_objects | while read -r flag id; do rm_ipc "$flag" "$id" || fail "cannot remove IPC object $flag $id"; done
# checked, not assumed
left=$(uid_procs); [ -z "$left" ] || fail "processes of uid 65534 survive: $(echo $left)"
for d in /tmp /var/tmp /dev/shm /dev/mqueue; do
  [ -d "$d" ] && [ ! -L "$d" ] || continue
  [ -z "$(ls -A "$d")" ] || fail "$d is not empty: $(ls -A "$d" | head -n 3 | tr '\n' ' ')"
done
left=$(walk \( -user 65534 -o -group 65534 -o -type f -perm -0002 -o -type d -perm -0002 ! -perm -1000 \) -print \
  | head -n 3)
[ -z "$left" ] || fail "the script user can still write or owns: $(echo $left)"
left=$(ipc_objects); [ -z "$left" ] || fail "IPC objects of uid 65534 survive: $(echo $left)"
"""

__all__ = ["CLEAN", "HARDEN", "NOBODY", "TEMP_DIRS"]
