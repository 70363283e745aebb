#!/usr/bin/env bash
# Benchmarks for the goals of issue 2, reported in docs/BENCHMARKS.md.
#
#   1. Go benchmarks of internal/bash (warm round trip, 1 GB with and without
#      spill, cancel latency), each with its baseline, run COUNT times;
#   2. whole-process figures of bin/agentsh with /usr/bin/time -v: peak RSS and
#      wall time of a 1 GB `agentsh exec` against `bash -c '... > file'`;
#   3. a summary table: medians, ratios and whether each goal is met.
#
# Needs only Go, bash and coreutils; without /usr/bin/time the peak RSS and
# CPU lines of the whole-process runs are skipped (reported as such).
# Knobs (environment): BENCH_COUNT (3), BENCH_TIME (go -benchtime, 1s),
# GO (go), TIME_BIN (/usr/bin/time).
# Exit status: 1 if a benchmark or run failed, 0 otherwise (a missed goal is
# reported in the table, not an error).
set -uo pipefail
shopt -s globstar nullglob

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
ROOT=$PWD
GO=${GO:-go}
COUNT=${BENCH_COUNT:-3}
BENCHTIME=${BENCH_TIME:-1s}
GB_CMD='yes 0123456789abcdef | head -c 1000000000'
GB=1000000000
TIME_BIN=${TIME_BIN:-/usr/bin/time}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/agentsh-bench.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
failed=0

note() { printf '== %s\n' "$*" >&2; }

# --- fixed-point helpers (bash has integer arithmetic only) ----------------

# milli VALUE prints VALUE*1000 as an integer ("12.5" -> 12500); empty if
# VALUE is not a plain decimal number.
milli() {
	local v=$1 int frac
	[[ $v =~ ^[0-9]+(\.[0-9]+)?$ ]] || return 0
	int=${v%%.*}
	frac=000
	[[ $v == *.* ]] && frac=${v#*.}000
	printf '%d\n' "$((10#$int * 1000 + 10#${frac:0:3}))"
}

# fmt3 MILLI [DIGITS] prints MILLI/1000 rounded to DIGITS (0-3, default 3)
# decimals.
fmt3() {
	local m=$1 d=${2:-3} s= scale=1 p=1 i
	[[ -z $m ]] && { printf 'n/a'; return; }
	((m < 0)) && { s=-; m=$((-m)); }
	for ((i = d; i < 3; i++)); do scale=$((scale * 10)); done
	for ((i = 0; i < d; i++)); do p=$((p * 10)); done
	m=$(((m + scale / 2) / scale))
	if ((d == 0)); then
		printf '%s%d' "$s" "$m"
	else
		printf '%s%d.%0*d' "$s" "$((m / p))" "$d" "$((m % p))"
	fi
}

# fmtx MILLI prints a ratio as "0.18x" (or "n/a").
fmtx() {
	[[ -z $1 ]] && { printf 'n/a'; return; }
	printf '%sx' "$(fmt3 "$1" 2)"
}

# ratio A B prints A/B in milli units (empty if either is missing or B is 0).
ratio() {
	[[ -n $1 && -n $2 && $2 != 0 ]] || return 0
	printf '%d\n' "$((($1 * 1000 + $2 / 2) / $2))"
}

# median INT... prints the median (mean of the two middle values if even).
median() {
	(($# > 0)) || return 0
	local -a s
	mapfile -t s < <(printf '%s\n' "$@" | sort -n)
	local n=${#s[@]}
	if ((n % 2)); then printf '%s\n' "${s[n / 2]}"; else printf '%s\n' "$(((s[n / 2 - 1] + s[n / 2]) / 2))"; fi
}

# --- 1. build ----------------------------------------------------------------

note "build bin/agentsh (no race detector)"
if ! "$GO" build -o bin/agentsh ./cmd/agentsh; then
	echo "build failed" >&2
	exit 1
fi

# --- 2. Go benchmarks ---------------------------------------------------------

note "go benchmarks: -benchtime=$BENCHTIME -count=$COUNT (takes a few minutes)"
if ! AGENTSH_BENCH_GB=1 "$GO" test -run '^$' -bench 'Warm|Fresh|Gigabyte|Cancel' \
	-benchtime="$BENCHTIME" -count="$COUNT" -timeout 60m ./internal/bash | tee "$TMP/go.txt"; then
	echo "go benchmarks failed" >&2
	failed=1
fi

# Samples per "Benchmark/unit", as milli-units, space separated.
declare -A samples=()
while read -r -a f; do
	[[ ${f[0]:-} == Benchmark* ]] || continue
	name=${f[0]%-*}
	name=${name#Benchmark}
	for ((i = 2; i + 1 < ${#f[@]}; i += 2)); do
		m=$(milli "${f[i]}")
		[[ -n $m ]] && samples["$name/${f[i + 1]}"]+="$m "
	done
done <"$TMP/go.txt"

# med NAME UNIT: median of a Go benchmark metric, in milli-units.
med() {
	# shellcheck disable=SC2086 # word splitting of the sample list is intended
	median ${samples["$1/$2"]:-}
}

# --- 3. whole-process runs ---------------------------------------------------

have_time=1
if [[ ! -x $TIME_BIN ]]; then
	have_time=0
	echo "note: $TIME_BIN not found: skipping the peak RSS and CPU figures of the whole-process runs" >&2
fi

# timed OUTFILE CMD...: runs CMD and sets WALL_MS (milli-seconds, integer),
# RSS_KB (peak RSS in KiB) and CPU_MS (user+system of CMD and the children it
# waited for, milli-seconds); the last two are empty without /usr/bin/time.
timed() {
	local out=$1 t0 t1 rc
	shift
	RSS_KB= CPU_MS=
	local cpu=0
	t0=$(date +%s%N)
	if ((have_time)); then
		"$TIME_BIN" -v -o "$TMP/time.txt" "$@" >"$out" 2>"$TMP/stderr.txt"
	else
		"$@" >"$out" 2>"$TMP/stderr.txt"
	fi
	rc=$?
	t1=$(date +%s%N)
	WALL_MS=$(((t1 - t0) / 1000000))
	if ((have_time)); then
		local line
		while IFS= read -r line; do
			case $line in
			*"Maximum resident set size (kbytes):"*) RSS_KB=${line##*: } ;;
			*"User time (seconds):"* | *"System time (seconds):"*)
				cpu=$((cpu + $(milli "${line##*: }"))) CPU_MS=$cpu ;;
			esac
		done <"$TMP/time.txt"
	fi
	return "$rc"
}

mkdir -p "$TMP/work" "$TMP/config"
declare -a exec_wall=() exec_rss=() exec_cpu=() bash_wall=() bash_cpu=()
for ((r = 1; r <= COUNT; r++)); do
	note "whole process, round $r/$COUNT: agentsh exec -- '$GB_CMD'"
	rm -rf "$TMP/data"
	mkdir -p "$TMP/data"
	# A private XDG_DATA_HOME (the 1 GB artifact lands there) and an empty
	# XDG_CONFIG_HOME, run from an empty directory: no user or project settings.
	if (cd "$TMP/work" && XDG_DATA_HOME="$TMP/data" XDG_CONFIG_HOME="$TMP/config" \
		timed "$TMP/exec.out" "$ROOT/bin/agentsh" exec -- "$GB_CMD" &&
		printf '%s %s %s\n' "$WALL_MS" "${RSS_KB:--}" "${CPU_MS:--}" >"$TMP/exec.res"); then
		read -r w k c <"$TMP/exec.res"
		size=0
		for a in "$TMP"/data/**/*.bash.log; do size=$(($(stat -c %s "$a") + size)); done
		if ((size != GB)); then
			echo "agentsh exec: artifact holds $size bytes, want $GB" >&2
			failed=1
		fi
		printf '   agentsh exec: wall %s ms, peak RSS %s KiB, CPU %s ms\n' "$w" "$k" "$c" >&2
		exec_wall+=("$w")
		[[ $k != - ]] && exec_rss+=("$k")
		[[ $c != - ]] && exec_cpu+=("$c")
	else
		echo "agentsh exec failed:" >&2
		cat "$TMP/stderr.txt" "$TMP/exec.out" >&2 2>/dev/null
		failed=1
	fi
	rm -rf "$TMP/data"

	note "whole process, round $r/$COUNT: bash -c '$GB_CMD > file'"
	if timed /dev/null bash -c "$GB_CMD"' >"$1"' bench "$TMP/out"; then
		printf '   bash -c: wall %s ms, CPU %s ms\n' "$WALL_MS" "${CPU_MS:--}" >&2
		bash_wall+=("$WALL_MS")
		[[ -n $CPU_MS ]] && bash_cpu+=("$CPU_MS")
	else
		echo "bash baseline failed" >&2
		failed=1
	fi
	rm -f "$TMP/out"
done

# --- 4. summary ---------------------------------------------------------------

# Go metrics (milli-units).
warm_ns=$(med WarmTrueExecutor ns/op)
fresh_ns=$(med FreshBashTrue ns/op)
spill=$(med GigabyteSpill MB/s)
tofile=$(med GigabyteBashToFile MB/s)
nospill=$(med GigabyteNoSpill MB/s)
catnull=$(med GigabyteBashCatDevNull MB/s)
warm_cpu=$(med WarmTrueExecutor cpu-us/op)
fresh_cpu=$(med FreshBashTrue cpu-us/op)
spill_cpu=$(med GigabyteSpill cpu-s/op)
tofile_cpu=$(med GigabyteBashToFile cpu-s/op)
nospill_cpu=$(med GigabyteNoSpill cpu-s/op)
catnull_cpu=$(med GigabyteBashCatDevNull cpu-s/op)
cterm=$(med CancelHonoursTerm ms/op)
cterm_max=$(med CancelHonoursTerm max-ms)
cign=$(med CancelIgnoresTerm ms/op)
cign_max=$(med CancelIgnoresTerm max-ms)
# Whole-process (milli-units): wall ms*1000, RSS in MB (1e6 bytes) *1000.
ew=$(median "${exec_wall[@]}")
bw=$(median "${bash_wall[@]}")
[[ -n $ew ]] && ew=$((ew * 1000))
[[ -n $bw ]] && bw=$((bw * 1000))
ecpu=$(median "${exec_cpu[@]}")
bcpu=$(median "${bash_cpu[@]}")
rss=$(median "${exec_rss[@]}")
[[ -n $rss ]] && rss=$((rss * 1024 / 1000))

# verdict VALUE OP LIMIT (milli-units): "met", "MISSED" or "n/a".
verdict() {
	[[ -n $1 ]] || { printf 'n/a'; return; }
	case $2 in
	le) (($1 <= $3)) && printf 'met' || printf 'MISSED' ;;
	ge) (($1 >= $3)) && printf 'met' || printf 'MISSED' ;;
	esac
}

row() { printf '%-34s %14s %14s %8s %10s  %s\n' "$@"; }

echo
echo "Summary (median of $COUNT; $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg))"
row "figure" "agentsh" "baseline" "ratio" "goal" "verdict"
row "----------------------------------" "--------------" "--------------" "--------" "----------" "-------"
warm_ms=
[[ -n $warm_ns ]] && warm_ms=$((warm_ns / 1000000))
r=$(ratio "$warm_ns" "$fresh_ns")
row "warm true round trip (ms)" "$(fmt3 "$warm_ms")" "$(fmt3 "$([[ -n $fresh_ns ]] && echo $((fresh_ns / 1000000)))")" \
	"$(fmtx "$r")" "<=0.3 ms" "$(verdict "$warm_ms" le 300)"
row "  warm / fresh bash -c true" "" "" "$(fmtx "$r")" "<=0.30x" "$(verdict "$r" le 300)"
r=$(ratio "$warm_cpu" "$fresh_cpu")
row "  CPU per round trip (us)" "$(fmt3 "$warm_cpu" 0)" "$(fmt3 "$fresh_cpu" 0)" "$(fmtx "$r")" "info" "CPU time, all processes"
r=$(ratio "$spill" "$tofile")
row "1 GB with spill (MB/s)" "$(fmt3 "$spill" 0)" "$(fmt3 "$tofile" 0)" "$(fmtx "$r")" ">=0.80x" "$(verdict "$r" ge 800)"
r=$(ratio "$tofile_cpu" "$spill_cpu")
row "  CPU per GB (s)" "$(fmt3 "$spill_cpu" 2)" "$(fmt3 "$tofile_cpu" 2)" "$(fmtx "$r")" "info" "baseline CPU / agentsh CPU"
r=$(ratio "$nospill" "$catnull")
row "1 GB without spill (MB/s)" "$(fmt3 "$nospill" 0)" "$(fmt3 "$catnull" 0)" "$(fmtx "$r")" ">=0.50x" "$(verdict "$r" ge 500)"
r=$(ratio "$catnull_cpu" "$nospill_cpu")
row "  CPU per GB (s)" "$(fmt3 "$nospill_cpu" 2)" "$(fmt3 "$catnull_cpu" 2)" "$(fmtx "$r")" "info" "baseline CPU / agentsh CPU"
row "cancel, honours TERM (ms)" "$(fmt3 "$cterm" 1)" "" "" "<=50 ms" "$(verdict "$cterm" le 50000)"
row "  worst iteration (ms)" "$(fmt3 "$cterm_max" 1)" "" "" "<=50 ms" "$(verdict "$cterm_max" le 50000)"
row "cancel, ignores TERM (ms)" "$(fmt3 "$cign" 1)" "" "" "<=600 ms" "$(verdict "$cign" le 600000)"
row "  worst iteration (ms)" "$(fmt3 "$cign_max" 1)" "" "" "<=600 ms" "$(verdict "$cign_max" le 600000)"
if ((have_time)); then
	row "agentsh exec 1 GB peak RSS (MB)" "$(fmt3 "$rss" 1)" "" "" "<=30 MB" "$(verdict "$rss" le 30000)"
else
	row "agentsh exec 1 GB peak RSS (MB)" "skipped" "" "" "<=30 MB" "n/a (no $TIME_BIN)"
fi
r=$(ratio "$bw" "$ew")
row "agentsh exec 1 GB wall (s)" "$(fmt3 "$((${ew:-0} / 1000))" 2)" "$(fmt3 "$((${bw:-0} / 1000))" 2)" \
	"$(fmtx "$r")" "info" "throughput ratio (bash wall / agentsh wall)"
r=$(ratio "$bcpu" "$ecpu")
row "  CPU (s)" "$(fmt3 "$ecpu" 2)" "$(fmt3 "$bcpu" 2)" "$(fmtx "$r")" "info" "baseline CPU / agentsh CPU"
echo
echo "MB = 10^6 bytes; ratios are agentsh throughput / baseline throughput, or time / time for the round trip."
echo "Numbers on a shared machine are noisy: compare ratios, not absolute values."
exit "$failed"
