// The int a C caller passed where the API takes an enum. C lets an enum variable hold any
// int; C++ allows only the values the enum's bits can hold, and switching on or comparing
// anything else is undefined behaviour. Reading the bytes as an int is defined for all.
#pragma once

#include <cstring>
#include <type_traits>

namespace zfc {

template <class E>
int enum_value(const E& e) {
  static_assert(std::is_enum<E>::value && sizeof(E) == sizeof(int), "an int-sized C enum");
  int v = 0;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

}  // namespace zfc
