#!/usr/bin/env bash
# The fuzz job: builds the libFuzzer targets (build-sanitize/, shared with scripts/sanitize.sh),
# replays the committed regression inputs (fuzz/regressions/<target>: fixed findings; those
# in fuzz/regressions/open/ still wait for theirs), then fuzzes each target
# from its seed corpus (fuzz/corpus/<target>). CI's runs are the same every time (a fixed seed
# and REGPIPE_FUZZ_RUNS inputs, default 20000: a finding fails every run until fixed, never
# one run in ten); REGPIPE_FUZZ_SECONDS, when set, fuzzes for that long from a fresh seed
# instead (exploration, off CI).
# New corpus inputs go to build-sanitize/fuzz/<target>/corpus, crashes to .../artifacts.
#   REGPIPE_FUZZ_SECONDS=1200 nice -n 19 bash scripts/fuzz.sh image   # one target, 20 minutes
set -euo pipefail
cd "$(dirname "$0")/.."
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(image transform pipeline)
bash scripts/build-sanitize.sh $(printf 'regpipe_fuzz_%s ' "${targets[@]}")
# Images whose headers promise more than 512 MB are refused by regpipe itself, below
# libFuzzer's 1 GB allocation limit: any larger allocation is then a finding.
export REGPIPE_IMAGE_MEMORY_MB=512
export LSAN_OPTIONS="suppressions=$PWD/scripts/sanitizers/lsan.supp:print_suppressions=0"
for target in "${targets[@]}"; do
  fuzzer=build-sanitize/bin/regpipe_fuzz_$target
  work=build-sanitize/fuzz/$target
  mkdir -p "$work/corpus" "$work/artifacts"
  options=(-rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=30 -artifact_prefix="$work/artifacts/")
  regressions=(fuzz/regressions/$target/*)
  if [ -e "${regressions[0]}" ]; then
    echo "fuzz: $target: replaying ${#regressions[@]} regression inputs"
    "$fuzzer" "${options[@]}" "${regressions[@]}" > "$work/regressions.log" 2>&1 ||
      { tail -50 "$work/regressions.log"; exit 1; }
  fi
  if [ -n "${REGPIPE_FUZZ_SECONDS:-}" ]; then
    echo "fuzz: $target for $REGPIPE_FUZZ_SECONDS s"
    budget=(-max_total_time="$REGPIPE_FUZZ_SECONDS" "$work/corpus")
  else
    echo "fuzz: $target, ${REGPIPE_FUZZ_RUNS:-20000} inputs from seed 1"
    # New inputs go to an emptied folder: every run starts from the committed corpus alone.
    rm -rf "$work/ci_corpus" && mkdir -p "$work/ci_corpus"
    budget=(-seed=1 -runs="${REGPIPE_FUZZ_RUNS:-20000}" "$work/ci_corpus")
  fi
  "$fuzzer" "${options[@]}" "${budget[@]}" -print_final_stats=1 \
    "fuzz/corpus/$target" > "$work/fuzz.log" 2>&1 || { tail -80 "$work/fuzz.log"; exit 1; }
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "$work/fuzz.log" | sed "s/^/fuzz: $target: /"
done
