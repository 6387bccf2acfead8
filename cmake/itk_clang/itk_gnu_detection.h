/* Debian 12's ITK 5.2 generated its compiler detection for GCC alone: under clang it stops
 * with "Unsupported compiler". Clang implements GCC 12's dialect, so clang builds include this
 * first (-include, cmake/Sanitizers.cmake): ITK's header reads its GCC 12 answers, and its
 * include guard keeps ITK from reading it again. */
#pragma push_macro("__clang__")
#pragma push_macro("__GNUC__")
#pragma push_macro("__GNUC_MINOR__")
#undef __clang__
#undef __GNUC__
#undef __GNUC_MINOR__
#define __GNUC__ 12
#define __GNUC_MINOR__ 2
#include <itk_compiler_detection.h>
#pragma pop_macro("__GNUC_MINOR__")
#pragma pop_macro("__GNUC__")
#pragma pop_macro("__clang__")
