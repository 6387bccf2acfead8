# REGPIPE_SANITIZE: AddressSanitizer + UndefinedBehaviorSanitizer over everything regpipe builds
# (scripts/sanitize.sh). REGPIPE_FUZZ adds libFuzzer's coverage instrumentation everywhere and
# builds the fuzz/ targets (scripts/fuzz.sh); it needs clang and implies REGPIPE_SANITIZE, so
# one build serves both jobs. Debian's ITK, yaml-cpp and GoogleTest are not instrumented: a
# fault inside them is caught only where it touches memory regpipe allocated.
if(REGPIPE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "REGPIPE_FUZZ needs clang (libFuzzer): -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang")
  endif()
  set(REGPIPE_SANITIZE ON)
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
if(REGPIPE_SANITIZE)
  # Every undefined behaviour stops the program (ctest then fails) instead of printing and going
  # on. UBSan's `function` check (calls through a function pointer of another type) is left out:
  # clang 14 fails on some of the plugins' code with it ("Cannot represent a difference across
  # sections").
  set(_regpipe_sanitizers -fsanitize=address,undefined -fno-sanitize=function -fno-sanitize-recover=all)
  add_compile_options(${_regpipe_sanitizers} -fno-omit-frame-pointer -gline-tables-only)
  add_link_options(${_regpipe_sanitizers})
endif()
