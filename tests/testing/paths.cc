#include "tests/testing/paths.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

namespace ms::testing {

std::string SourceDir() {
  const char* root = std::getenv("MS_SOURCE_DIR");
  if (root == nullptr) {
    ADD_FAILURE() << "MS_SOURCE_DIR is not set; run the test through ctest";
    return ".";
  }
  return root;
}

std::string TestDataPath(const std::string& name) {
  return SourceDir() + "/tests/testdata/" + name;
}

std::string ReadFileOrDie(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "cannot read " << path;
    return "";
  }
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace ms::testing
