#!/usr/bin/env bash
# run.sh: OpenTofu v1.12.6 with tflock as its provider installer.
#
# Takes an OpenTofu source tree at v1.12.6 from OPENTOFU_SRC (never
# modified: it is copied to a temporary directory), drops in the adapter
# (testdata/adapter, as internal/tflocksource), applies the hooks
# (testdata/hooks.patch: provider installation, "providers lock",
# "providers mirror"; on when TOFU_TFLOCK=1), requires this checkout of
# tflock through a replace, builds tofu once, then:
#
#   - end to end, against the in-repository registry (testdata/registry):
#     tofu init (cold, warm, re-init, plugin_cache_dir), providers lock
#     for three platforms and providers mirror, with and without
#     TOFU_TFLOCK=1, comparing lock files and trees byte for byte, and
#     what tofu printed (its lines sorted);
#   - OpenTofu's own tests of internal/getproviders,
#     internal/providercache, internal/depsfile and the offline
#     internal/command/e2etest (TF_ACC unset), with and without
#     TOFU_TFLOCK=1.
#
# It prints one summary line per comparison and per suite and mode, e.g.
#   internal/depsfile tflock=off: 40 passed, 0 failed
# (top-level tests; skipped ones are not counted), and the top-level
# tests that pass only without tflock. The suites run without the
# caller's TF_, TOFU_ and OPENTOFU_ variables. Logs stay in
# $OPENTOFU_OUT (default: a directory it prints). Set SUITES to a
# space-separated subset of "e2e getproviders providercache depsfile
# e2etest" to run only those (in that order). Without OPENTOFU_SRC it
# does nothing.
set -euo pipefail

if [ -z "${OPENTOFU_SRC:-}" ]; then
	echo "skipped: OPENTOFU_SRC not set (an OpenTofu v1.12.6 source tree)"
	exit 0
fi
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
src=$(cd "$OPENTOFU_SRC" && pwd)
want=1.12.6
have=$(cat "$src/version/VERSION" 2>/dev/null || true)
if [ "$have" != "$want" ]; then
	echo "run.sh: $src is OpenTofu ${have:-(no version/VERSION)}, not $want" >&2
	exit 2
fi
suites=${SUITES:-e2e getproviders providercache depsfile e2etest}

# OPENTOFU_WORK: the work directory (emptied first, removed at the end);
# a fixed one lets Go's build cache serve the next run. Default: a new
# temporary directory.
if [ -n "${OPENTOFU_WORK:-}" ]; then
	work=$OPENTOFU_WORK
	chmod -R u+w "$work" 2>/dev/null || true
	rm -rf "$work"
	mkdir -p "$work"
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/tflock-opentofu.XXXXXX")
fi
cleanup() { chmod -R u+w "$work" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
out=${OPENTOFU_OUT:-}
if [ -z "$out" ]; then
	out=$(mktemp -d "${TMPDIR:-/tmp}/tflock-opentofu-logs.XXXXXX")
fi
mkdir -p "$out"
echo "logs: $out"

# The tree, with the adapter and the hooks.
ot=$work/opentofu
mkdir -p "$ot"
(cd "$src" && tar --exclude=./.git --exclude=./tofu -cf - .) | (cd "$ot" && tar -xf -)
mkdir -p "$ot/internal/tflocksource"
cp "$here/testdata/adapter/"*.go "$ot/internal/tflocksource/"
(cd "$ot" && patch -s -p1 <"$here/testdata/hooks.patch")
(cd "$ot" && go mod edit -require=github.com/tflock/tflock@v0.0.0 -replace=github.com/tflock/tflock="$repo")
# The tflock module's requirements enter go.sum; OpenTofu's own versions
# (its hcl fork's replace included) stay selected where they are higher.
(cd "$ot" && GOFLAGS=-mod=mod go list -deps ./internal/tflocksource >/dev/null)
(cd "$ot" && go list -m github.com/hashicorp/hcl/v2 github.com/zclconf/go-cty) >"$out/versions.txt"

echo "building tofu"
(cd "$ot" && go build -o "$work/tofu" ./cmd/tofu) >"$out/build.log" 2>&1 || {
	cat "$out/build.log" >&2
	exit 1
}
tofu=$work/tofu

summary=()

# count LOG: "N passed, M failed" of go test -json's top-level tests.
count() {
	local p f
	p=$(grep -c '"Action":"pass","Package":"[^"]*","Test":"[^"/]*"' "$1" || true)
	f=$(grep -c '"Action":"fail","Package":"[^"]*","Test":"[^"/]*"' "$1" || true)
	echo "$p passed, $f failed"
}

# suite NAME PKG: OpenTofu's tests of PKG, tflock off then on.
suite() {
	local name=$1 pkg=$2 mode log file=${1//\//_}
	for mode in off on; do
		log=$out/$file-tflock=$mode.json
		# None of the caller's TF_, TOFU_ or OPENTOFU_ variables (TF_ACC
		# among them: offline; a TF_CLI_CONFIG_FILE that names a missing
		# file makes tofu warn, which fails tests that expect no stderr).
		local env=(env) v
		for v in $(compgen -e); do
			case $v in TF_* | TOFU_* | OPENTOFU_*) env+=(-u "$v") ;; esac
		done
		if [ $mode = on ]; then
			env+=(TOFU_TFLOCK=1 TOFU_TFLOCK_CACHE="$work/suite-cache")
		fi
		(cd "$ot" && "${env[@]}" go test -count=1 -p 1 -json "$pkg" >"$log" 2>&1) || true
		summary+=("$name tflock=$mode: $(count "$log")")
		echo "${summary[-1]}"
	done
	# The top-level tests that pass without tflock and not with it.
	comm -23 \
		<(grep -o '"Action":"pass","Package":"[^"]*","Test":"[^"/]*"' "$out/$file-tflock=off.json" | sed 's/.*"Test":"//; s/"$//' | sort) \
		<(grep -o '"Action":"pass","Package":"[^"]*","Test":"[^"/]*"' "$out/$file-tflock=on.json" | sed 's/.*"Test":"//; s/"$//' | sort) \
		>"$out/$file-lost.txt"
	if [ -s "$out/$file-lost.txt" ]; then
		summary+=("$name: passes only without tflock: $(tr '\n' ' ' <"$out/$file-lost.txt")")
		echo "${summary[-1]}"
	fi
}

# tree DIR: every entry's path, type, mode, link target and content hash.
tree() {
	(cd "$1" && find . -mindepth 1 -printf '%P %y %m %l\n' | sort | while read -r p y m l; do
		if [ "$y" = f ]; then
			echo "$p f $m $(sha256sum <"$p" | cut -c1-64)"
		else
			echo "$p $y $m $l"
		fi
	done)
}

e2e() {
	local reg=$work/registry
	mkdir -p "$reg"
	(cd "$repo" && go build -o "$work/registry-server" ./internal/opentofu/testdata/registry)
	exec 3> >("$work/registry-server" "$reg" >"$reg/out" 2>&1)
	local i
	for i in $(seq 100); do
		[ -s "$reg/out" ] && break
		sleep 0.1
	done
	grep -q ready "$reg/out"
	local home=$work/home
	mkdir -p "$home"
	cp "$reg/cli.tfrc" "$work/cli.tfrc"
	{ cat "$reg/cli.tfrc"; echo "plugin_cache_dir = \"$work/plugin-cache-MODE\""; } >"$work/cli-cache.tfrc"
	local base=(env -i PATH="$PATH" HOME="$home" SSL_CERT_FILE="$reg/certs.pem" CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1
		HTTPS_PROXY=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 NO_PROXY=127.0.0.1,localhost)
	local config='terraform {
  required_providers {
    alpha    = { source = "registry.example.test/example/alpha", version = "~> 1.0" }
    unsigned = { source = "example/unsigned" }
  }
}
'
	local mode dir rc=0 step
	local steps=(init-cold init-warm reinit-upgrade plugin-cache providers-lock providers-mirror)
	for mode in off on; do
		local env=("${base[@]}" TF_CLI_CONFIG_FILE="$work/cli.tfrc")
		if [ $mode = on ]; then
			env+=(TOFU_TFLOCK=1 TOFU_TFLOCK_CACHE="$work/e2e-cache")
		fi
		dir=$work/e2e-$mode
		mkdir -p "$dir/cold" "$dir/cache" "$dir/lock" "$dir/mirror" "$work/plugin-cache-$mode"
		for d in cold cache lock mirror; do printf '%s' "$config" >"$dir/$d/main.tf"; done
		(
			set -e
			cd "$dir/cold"
			"${env[@]}" "$tofu" init -input=false >"$out/e2e-$mode-init-cold.log" 2>&1 || exit 1
			tree . >"$dir/init-cold.tree"
			rm -rf .terraform
			"${env[@]}" "$tofu" init -input=false >"$out/e2e-$mode-init-warm.log" 2>&1 || exit 1
			tree . >"$dir/init-warm.tree"
			"${env[@]}" "$tofu" init -input=false -upgrade >"$out/e2e-$mode-reinit-upgrade.log" 2>&1 || exit 1
			tree . >"$dir/reinit-upgrade.tree"
			cd "$dir/cache"
			sed "s/MODE/$mode/" "$work/cli-cache.tfrc" >"$dir/cli-cache.tfrc"
			"${env[@]}" TF_CLI_CONFIG_FILE="$dir/cli-cache.tfrc" "$tofu" init -input=false >"$out/e2e-$mode-plugin-cache.log" 2>&1 || exit 1
			{ tree .; echo "--- plugin cache"; tree "$work/plugin-cache-$mode"; } | sed "s#$work/plugin-cache-$mode#PLUGIN_CACHE#" >"$dir/plugin-cache.tree"
			cd "$dir/lock"
			"${env[@]}" "$tofu" providers lock -platform=linux_amd64 -platform=darwin_arm64 -platform=windows_amd64 >"$out/e2e-$mode-providers-lock.log" 2>&1 || exit 1
			tree . >"$dir/providers-lock.tree"
			cd "$dir/mirror"
			"${env[@]}" "$tofu" providers mirror -platform=linux_amd64 -platform=darwin_arm64 "$dir/mirror-out" >"$out/e2e-$mode-providers-mirror.log" 2>&1 || exit 1
			tree "$dir/mirror-out" >"$dir/providers-mirror.tree"
		) || { echo "e2e tflock=$mode failed; see $out/e2e-$mode-*.log" >&2; rc=1; }
	done
	exec 3>&-
	local same=0 differ=0 names=()
	for step in "${steps[@]}"; do
		if [ -f "$work/e2e-off/$step.tree" ] && cmp -s "$work/e2e-off/$step.tree" "$work/e2e-on/$step.tree"; then
			same=$((same + 1))
		else
			differ=$((differ + 1))
			names+=("$step")
			diff "$work/e2e-off/$step.tree" "$work/e2e-on/$step.tree" >"$out/e2e-$step.diff" 2>&1 || true
		fi
	done
	summary+=("e2e tofu init/lock/mirror, tflock off vs on: $same identical, $differ different${names:+ (${names[*]})}")
	echo "${summary[-1]}"
	# What tofu printed, line by line in sorted order (tofu installs
	# providers concurrently, so their lines come in any order), without
	# the work directory.
	same=0 differ=0 names=()
	local norm="s#$work/e2e-o[nf]*#DIR#g; s#plugin-cache-o[nf]*#PLUGIN_CACHE#g"
	for step in "${steps[@]}"; do
		if cmp -s <(sed "$norm" "$out/e2e-off-$step.log" | sort) <(sed "$norm" "$out/e2e-on-$step.log" | sort); then
			same=$((same + 1))
		else
			differ=$((differ + 1))
			names+=("$step")
		fi
	done
	summary+=("e2e tofu output (sorted lines), tflock off vs on: $same identical, $differ different${names:+ (${names[*]})}")
	echo "${summary[-1]}"
	cp "$work"/e2e-off/*.tree "$out/" 2>/dev/null || true
	return $rc
}

for s in $suites; do
	case $s in
	e2e) e2e || true ;;
	getproviders) suite internal/getproviders ./internal/getproviders/ ;;
	providercache) suite internal/providercache ./internal/providercache/ ;;
	depsfile) suite internal/depsfile ./internal/depsfile/ ;;
	e2etest) suite internal/command/e2etest ./internal/command/e2etest/ ;;
	*) echo "run.sh: unknown suite $s" >&2 ;;
	esac
done

echo "== summary (OpenTofu $want, tflock $(cd "$repo" && git describe --always --dirty 2>/dev/null || echo checkout))"
printf '%s\n' "${summary[@]}"
