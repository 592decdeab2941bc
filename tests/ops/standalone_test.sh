#!/usr/bin/env bash
# The repository stands alone: no tracked file names the directory beside the checkout
# ("..", then "shared") that the project once took its benchmark tools and design from.
# A user's clone has nothing there, so a test, tool or link that reaches for it fails
# or misleads them. In a git checkout the tracked files are searched; in an unpacked
# tarball, every file outside build directories.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
fail() { echo "FAIL: $*" >&2; exit 1; }
# Spelt in two pieces so that this file does not name it itself.
pattern='\.\.'"/shared"

if [ "$(git -C "$repo" rev-parse --show-toplevel 2>/dev/null)" = "$repo" ]; then
  where="tracked files"
  hits="$(git -C "$repo" grep -n -I -e "$pattern" || true)"
else
  where="files outside build directories (not a git checkout)"
  hits="$(cd "$repo" && grep -rn -I --exclude-dir='build*' --exclude-dir=.git -e "$pattern" . || true)"
fi
if [ -n "$hits" ]; then
  echo "$hits"
  fail "$(echo "$hits" | cut -d: -f1 | sort -u | tr '\n' ' ')name a directory outside the repository"
fi
echo "no $where name a directory outside the repository"
echo "PASS"
