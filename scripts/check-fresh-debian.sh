#!/usr/bin/env bash
# Checks that the README's two commands pass on a pristine Debian 12 (bookworm) that has only the
# build tools (debootstrap --variant=buildd): a clone of this repository's HEAD is run in a chroot
#   1. ./scripts/setup-debian.sh && ./scripts/build.sh && ./build/bin/kmux-bench
#   2. ./scripts/setup-debian.sh && ./scripts/test.sh
# so a package that setup-debian.sh forgets (one that merely happens to be installed on the
# development and CI machines, like libc6-dbg once was) shows up as a failure here.
#
# NOT run by CI (.ci/run): it downloads a Debian root and every package setup-debian.sh installs,
# then builds and tests kmux from scratch (about an hour on 2 cores). Run it by hand, as root,
# after changing setup-debian.sh, the build or the test stages:
#   sudo nice ./scripts/check-fresh-debian.sh [--prepare-only] [--worktree] [WORKDIR]
# (WORKDIR default /var/tmp/kmux-fresh-debian; --prepare-only: only fetch the pristine root;
# --worktree: the working tree's files, uncommitted changes included, on top of the clone).
# The pristine root is kept as WORKDIR/bookworm-buildd.tar (delete it to fetch a new one); each
# run unpacks it afresh. Logs: WORKDIR/bench.log, WORKDIR/test.log; the exit status is 0 only
# when both commands passed. The Debian mirror is this machine's (its apt sources), or
# $DEBIAN_MIRROR.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
prepare_only=0
worktree=0
while [ $# -gt 0 ]; do
  case "$1" in
    --prepare-only) prepare_only=1 ;; # only fetch and cache the pristine root
    --worktree) worktree=1 ;;         # test the working tree (uncommitted changes too), not HEAD
    *) break ;;
  esac
  shift
done
work=${1:-/var/tmp/kmux-fresh-debian}
suite=bookworm

if [ "$(id -u)" != 0 ]; then
  echo "check-fresh-debian: must run as root (debootstrap, chroot, mounts)" >&2
  exit 2
fi
mkdir -p "$work"
work=$(cd "$work" && pwd)
root=$work/root

mirror=${DEBIAN_MIRROR:-}
if [ -z "$mirror" ]; then
  mirror=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*debian\)[[:space:]]*$/\1/p' \
             /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
fi
if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then
  mirror=$(awk '$1 == "deb" && $3 ~ /^bookworm$/ {print $2; exit}' /etc/apt/sources.list)
fi
if [ -z "$mirror" ]; then
  echo "check-fresh-debian: no Debian mirror in this machine's apt sources; set DEBIAN_MIRROR" >&2
  exit 2
fi

cleanup() {
  for m in dev/pts dev proc sys; do
    mountpoint -q "$root/$m" 2>/dev/null && umount -l "$root/$m" || true
  done
}
trap cleanup EXIT

# ---- the pristine root (cached) ----------------------------------------------------------------
tarball=$work/$suite-buildd.tar
if [ ! -f "$tarball" ]; then
  command -v debootstrap >/dev/null || { apt-get update -qq && apt-get install -y -qq debootstrap; }
  rm -rf "$work/pristine"
  echo "check-fresh-debian: debootstrap $suite (buildd variant) from $mirror"
  debootstrap --variant=buildd "$suite" "$work/pristine" "$mirror" >"$work/debootstrap.log" 2>&1 || {
    tail -20 "$work/debootstrap.log" >&2
    exit 3
  }
  # The same apt sources as a fresh install (main, updates, security), no service starts.
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    cp /etc/apt/sources.list.d/debian.sources "$work/pristine/etc/apt/sources.list.d/"
    : >"$work/pristine/etc/apt/sources.list"
  fi
  printf '#!/bin/sh\nexit 101\n' >"$work/pristine/usr/sbin/policy-rc.d"
  chmod +x "$work/pristine/usr/sbin/policy-rc.d"
  tar -C "$work/pristine" -cf "$tarball" .
  rm -rf "$work/pristine"
fi
[ "$prepare_only" = 1 ] && exit 0

# ---- a fresh copy of it, with a clone of HEAD ----------------------------------------------------
cleanup
rm -rf "$root"
mkdir -p "$root"
tar -C "$root" -xf "$tarball"
# The apt client settings of this machine's package registry (a proxy, or a snapshot mirror whose
# Release files must not be rejected as expired), so that the root reaches the mirror as this
# machine does; kmux's own files are not among them.
for f in /etc/apt/apt.conf.d/*; do
  [ -f "$f" ] && grep -q '^Acquire::' "$f" && cp "$f" "$root/etc/apt/apt.conf.d/"
done
cp /etc/resolv.conf "$root/etc/resolv.conf"
git clone -q --no-local "$repo" "$root/src/kmux"
git -C "$root/src/kmux" checkout -q "$(git -C "$repo" rev-parse HEAD)"
if [ "$worktree" = 1 ]; then
  (cd "$repo" && git ls-files -z -co --exclude-standard | tar --null -T - -cf -) |
    tar -C "$root/src/kmux" -xf -
fi
# The clone alone: a user has nothing beside it, so nothing beside it is copied.
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"

in_root() { chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin \
  LANG=C.UTF-8 CI=true /bin/bash -c "cd /src/kmux && $1"; }

rc=0
t0=$(date +%s)
if in_root './scripts/setup-debian.sh && ./scripts/build.sh && ./build/bin/kmux-bench' \
  >"$work/bench.log" 2>&1; then
  echo "check-fresh-debian: command 1 (setup, build, kmux-bench) PASSED in $(($(date +%s) - t0)) s"
else
  echo "check-fresh-debian: command 1 (setup, build, kmux-bench) FAILED; see $work/bench.log" >&2
  tail -30 "$work/bench.log" >&2
  rc=1
fi
t1=$(date +%s)
if in_root './scripts/setup-debian.sh && ./scripts/test.sh' >"$work/test.log" 2>&1; then
  echo "check-fresh-debian: command 2 (setup, test.sh) PASSED in $(($(date +%s) - t1)) s"
else
  echo "check-fresh-debian: command 2 (setup, test.sh) FAILED; see $work/test.log" >&2
  grep -E 'tests passed|FAILED|Failed|\*\*\*' "$work/test.log" | tail -30 >&2 || true
  rc=1
fi
exit $rc
