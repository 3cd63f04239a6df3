# A dependency switch that takes AUTO (use it if found), ON (fail if missing) or OFF.
function(zipfcoll_tristate_option name doc default)
  set(${name} ${default} CACHE STRING "${doc}: AUTO, ON or OFF")
  set_property(CACHE ${name} PROPERTY STRINGS AUTO ON OFF)
  string(TOUPPER "${${name}}" value)
  if(value STREQUAL "TRUE" OR value STREQUAL "1" OR value STREQUAL "YES")
    set(value ON)
  elseif(value STREQUAL "FALSE" OR value STREQUAL "0" OR value STREQUAL "NO")
    set(value OFF)
  endif()
  if(NOT value MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "${name} must be AUTO, ON or OFF (got '${${name}}')")
  endif()
  set(${name} ${value} PARENT_SCOPE)
endfunction()

# zipfcoll_pkgconfig_dependency(<NAME> <module> <what> <package>): under ZIPFCOLL_WITH_<NAME>,
# looks for the pkg-config <module> and sets ZIPFCOLL_HAVE_<NAME>; ON fails naming the Debian
# <package> to install. The library is then the imported target PkgConfig::<NAME>. A macro, so
# that the imported target lives in the caller's scope.
macro(zipfcoll_pkgconfig_dependency name module what package)
  set(ZIPFCOLL_HAVE_${name} OFF)
  if(NOT ZIPFCOLL_WITH_${name} STREQUAL "OFF")
    find_package(PkgConfig QUIET)
    if(PKG_CONFIG_FOUND)
      pkg_check_modules(${name} QUIET IMPORTED_TARGET ${module})
    endif()
    if(${name}_FOUND)
      set(ZIPFCOLL_HAVE_${name} ON)
    elseif(ZIPFCOLL_WITH_${name} STREQUAL "ON")
      message(FATAL_ERROR "ZIPFCOLL_WITH_${name}=ON but ${module} was not found "
                          "(install ${package})")
    endif()
  endif()
  message(STATUS "zipfcoll: ${what} ${ZIPFCOLL_HAVE_${name}}")
endmacro()
