#!/usr/bin/env bash
# Fetch Debian's source package of redis once, into a cache directory
# (default .compat/ at the top of the repository), for `make compat`.
#
# The machine's own apt configuration is left untouched: the deb-src lines
# are written to a private sources list, made from the machine's `deb`
# entries (same archives, same suites), and apt-get is pointed at it and at a
# private lists directory.  Nothing else is downloaded.  When the unpacked
# tree is already there, this does nothing.
#
# Usage: scripts/compat-fetch.sh [CACHE_DIR]
# Prints the path of the unpacked source tree on its last line.

set -euo pipefail

cache=${1:-.compat}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)

find_tree() {
  local d
  for d in "$cache"/src/redis-*/; do
    if [ -f "$d/tests/test_helper.tcl" ]; then
      echo "${d%/}"
      return 0
    fi
  done
  return 1
}

if tree=$(find_tree); then
  echo "$tree"
  exit 0
fi

command -v apt-get >/dev/null 2>&1 || { echo "error: apt-get not found (a Debian-like system is needed)" >&2; exit 1; }
command -v dpkg-source >/dev/null 2>&1 || { echo "error: dpkg-source not found (apt-get install dpkg-dev)" >&2; exit 1; }

apt_dir="$cache/apt"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$cache/src"
list="$apt_dir/sources.list"

# The machine's `deb` entries, one-line (sources.list) and deb822 (*.sources)
# forms, turned into `deb-src` lines.
python3 - "$list" <<'PY'
import glob
import os
import sys

out = []

def one_line(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line.startswith("deb "):
                out.append("deb-src " + line[4:])

def deb822(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    for stanza in text.split("\n\n"):
        fields = {}
        key = None
        for raw in stanza.splitlines():
            if raw.startswith("#") or not raw.strip():
                continue
            if raw[0].isspace() and key:
                fields[key] += " " + raw.strip()
                continue
            if ":" in raw:
                key, _, value = raw.partition(":")
                key = key.strip().lower()
                fields[key] = value.strip()
        if "deb" not in fields.get("types", "").split():
            continue
        if fields.get("enabled", "yes").lower() == "no":
            continue
        opts = ""
        signed = fields.get("signed-by", "")
        if signed and not signed.startswith("-----"):
            opts = " [signed-by=%s]" % signed.split()[0]
        for uri in fields.get("uris", "").split():
            for suite in fields.get("suites", "").split():
                comps = fields.get("components", "")
                out.append(f"deb-src{opts} {uri} {suite} {comps}".rstrip())

if os.path.exists("/etc/apt/sources.list"):
    one_line("/etc/apt/sources.list")
for path in sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
    one_line(path)
for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
    deb822(path)
if not out:
    sys.exit("error: no `deb` entries found in the machine's apt sources")
with open(sys.argv[1], "w", encoding="utf-8") as f:
    f.write("\n".join(dict.fromkeys(out)) + "\n")
PY

apt_opts=(
  -o "Dir::Etc::SourceList=$list"
  -o "Dir::Etc::SourceParts=/dev/null"
  -o "Dir::State::Lists=$apt_dir/lists"
  -o "Dir::Cache::Archives=$apt_dir/archives"
  -o "Dir::Cache::pkgcache="
  -o "Dir::Cache::srcpkgcache="
  -o "APT::Sandbox::User=root"
)
echo "+ apt-get update (private source list $list)" >&2
apt-get "${apt_opts[@]}" update >&2
echo "+ apt-get source redis" >&2
(cd "$cache/src" && apt-get "${apt_opts[@]}" source redis >&2)

tree=$(find_tree) || { echo "error: no redis source tree with tests/test_helper.tcl under $cache/src" >&2; exit 1; }
echo "$tree"
