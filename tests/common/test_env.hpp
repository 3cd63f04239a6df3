// Where the tests find the shared text corpora: the ZIPFCOLL_TEST_DATA directory that CMake
// passes in when ../shared/data exists beside the source tree.
#pragma once

#include <sys/stat.h>

#include <cstdlib>
#include <string>

namespace zfc {
namespace test {

// The corpus directory `name` (e.g. "gutenberg"), or "" when it is not available.
inline std::string corpus_dir(const char* name) {
  const char* root = std::getenv("ZIPFCOLL_TEST_DATA");
  if (root == nullptr || *root == '\0') return "";
  std::string dir = std::string(root) + "/" + name;
  struct stat st;
  return stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) ? dir : "";
}

}  // namespace test
}  // namespace zfc

// Skips the current test, saying which corpus is missing and why.
#define ZFC_REQUIRE_CORPUS(dir_var, name)                                                  \
  const std::string dir_var = ::zfc::test::corpus_dir(name);                               \
  if (dir_var.empty()) {                                                                   \
    GTEST_SKIP() << "corpus '" << (name) << "' not found: set ZIPFCOLL_TEST_DATA to the "  \
                 << "directory holding it (the build sets it when ../shared/data exists)"; \
  }
