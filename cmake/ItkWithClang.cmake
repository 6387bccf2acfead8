# REGPIPE_ITK_COMPILE_OPTIONS: what a target that includes ITK's headers compiles with. Debian's
# ITK 5.2 headers refuse every compiler but GCC; under clang (the sanitizer and fuzz builds)
# they are first shown GCC's answers (cmake/itk_clang/itk_gnu_detection.h).
set(REGPIPE_ITK_COMPILE_OPTIONS "")
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  set(REGPIPE_ITK_COMPILE_OPTIONS "SHELL:-include ${CMAKE_CURRENT_LIST_DIR}/itk_clang/itk_gnu_detection.h")
endif()
