# regpipe_add_plugin(<target> SOURCES <files...> [LINK <targets...>])
#
# Builds a regpipe plugin: a MODULE library that exports only `regpipe_plugin_entry`
# (hidden visibility + linker version script), placed where the host looks for plugins.
# Used by the project's own plugins and, through find_package(regpipe), by third parties.
set(_REGPIPE_PLUGIN_MAP ${CMAKE_CURRENT_LIST_DIR}/plugin.map)

function(regpipe_add_plugin target)
  cmake_parse_arguments(ARG "" "" "SOURCES;LINK" ${ARGN})
  add_library(${target} MODULE ${ARG_SOURCES})
  if(TARGET regpipe::sdk)
    target_link_libraries(${target} PRIVATE regpipe::sdk)
  else()
    target_link_libraries(${target} PRIVATE regpipe_sdk)
  endif()
  if(ARG_LINK)
    target_link_libraries(${target} PRIVATE ${ARG_LINK})
  endif()
  set_target_properties(${target} PROPERTIES
    CXX_VISIBILITY_PRESET hidden
    CUDA_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_link_options(${target} PRIVATE "LINKER:--version-script=${_REGPIPE_PLUGIN_MAP}")
  # A sanitized build's runtimes live in the executable that loads the plugin.
  if(NOT REGPIPE_SANITIZE)
    target_link_options(${target} PRIVATE "LINKER:--no-undefined")
  endif()
  if(DEFINED REGPIPE_PLUGIN_OUTPUT_DIR)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${REGPIPE_PLUGIN_OUTPUT_DIR})
  endif()
  if(TARGET regpipe_all_plugins)
    add_dependencies(regpipe_all_plugins ${target})
  endif()
  if(DEFINED REGPIPE_INSTALL_PLUGIN_DIR)
    install(TARGETS ${target} LIBRARY DESTINATION ${REGPIPE_INSTALL_PLUGIN_DIR})
  endif()
endfunction()
