#!/usr/bin/env bash
# The fuzz job: builds the libFuzzer targets (build-sanitize/, shared with scripts/sanitize.sh),
# replays the committed regression inputs (fuzz/regressions/<target>: fixed findings; those
# in fuzz/regressions/open/ still wait for theirs), then fuzzes each target
# for REGPIPE_FUZZ_SECONDS (default 60) from its seed corpus (fuzz/corpus/<target>).
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
  echo "fuzz: $target for ${REGPIPE_FUZZ_SECONDS:-60} s"
  "$fuzzer" "${options[@]}" -max_total_time="${REGPIPE_FUZZ_SECONDS:-60}" -print_final_stats=1 \
    "$work/corpus" "fuzz/corpus/$target" > "$work/fuzz.log" 2>&1 || { tail -80 "$work/fuzz.log"; exit 1; }
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "$work/fuzz.log" | sed "s/^/fuzz: $target: /"
done
