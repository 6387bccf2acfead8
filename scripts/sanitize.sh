#!/usr/bin/env bash
# The sanitizer job: the CPU suite (no CUDA) and the CLI built with clang's AddressSanitizer
# and UndefinedBehaviorSanitizer (build-sanitize/), running the unit, numeric, abi, plugin,
# cli and robustness labels. Any sanitizer report fails its test: undefined behaviour stops
# the program (-fno-sanitize-recover), a leak fails it at exit.
set -euo pipefail
cd "$(dirname "$0")/.."
labels=(unit numeric abi plugin cli robustness)
# The unit label also holds executables of their own (dense metrics, displacement fields, SyN).
bash scripts/build-sanitize.sh regpipe_cli $(printf 'regpipe_%s_tests ' "${labels[@]}") \
  regpipe_dense_metrics_tests regpipe_displacement_field_tests regpipe_syn_tests
# Leaks inside Debian's uninstrumented libraries (ITK's factories and singletons, made once
# per process) are theirs: scripts/sanitizers/lsan.supp names them.
export ASAN_OPTIONS="strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
export LSAN_OPTIONS="suppressions=$PWD/scripts/sanitizers/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1"
regex="^($(IFS='|'; echo "${labels[*]}"))\$"
# Whole registrations judged for accuracy take minutes each under ASan (15 of the 35 minutes
# the cli label takes on 2 cores); the other cli tests run the same code. REGPIPE_SANITIZE_EXCLUDE
# overrides the list ("" runs everything).
exclude=${REGPIPE_SANITIZE_EXCLUDE-"FlirtCli.TheExampleCommandLinesRecoverThePhantomsTruth|FlirtCli.GivesTheMatrixRegpipeRunGivesForTheSamePipeline|CompareTest.RealPairAroundTheCpuRegistration|CompareTest.WritesTheDocumentedFilesAndColumns|StartTest.AnInitialTransformInEveryFormatIsTheStart|CliTest.ProgressWithoutATerminalIsLinesThatOnlyGoForward"}
ctest --test-dir build-sanitize -L "$regex" ${exclude:+-E "$exclude"} --output-on-failure -j "${REGPIPE_TEST_JOBS:-2}" --timeout 1500
