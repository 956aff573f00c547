#!/usr/bin/env bash
# Install the built wheel into a fresh venv, as a user would (no dev tools, not editable, run from
# outside the checkout so the source tree cannot stand in for the installed package), then run it.
# Usage: scripts/check_dist.sh DIST_DIR SAMPLE_SESSION
set -euo pipefail
dist=$(cd "$1" && pwd)
sample=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
version=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$(dirname "$0")/../pitools/__init__.py")
wheel=$(ls "$dist"/pi_session_tools-"$version"-py3-none-any.whl)
ls "$dist"/pi_session_tools-"$version".tar.gz >/dev/null
venv=$(mktemp -d)/venv
trap 'rm -rf "$(dirname "$venv")"' EXIT
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q "$wheel"
cd "$(dirname "$venv")"
got=$("$venv/bin/pitools" --version)
[ "$got" = "pitools $version (Pi 1.6.0 semantics)" ] || { echo "check-dist: --version said: $got" >&2; exit 1; }
"$venv/bin/pitools" inspect "$sample" >/dev/null
"$venv/bin/pitools" validate --strict "$sample"
"$venv/bin/python" -m pitools context "$sample" --format json >/dev/null
# The installed package is the wheel's, not this checkout's.
where=$("$venv/bin/python" -c 'import pitools; print(pitools.__file__)')
case "$where" in "$venv"/*) ;; *) echo "check-dist: pitools imported from $where" >&2; exit 1 ;; esac
echo "check-dist: $(basename "$wheel") installs and runs: $got"
