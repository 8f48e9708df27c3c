// Where tests find their inputs: the source tree's testdata and the build
// tree, as ctest passes them in MS_SOURCE_DIR and MS_BINARY_DIR.
#ifndef METRICS_SCHEDULER_TESTS_TESTING_PATHS_H_
#define METRICS_SCHEDULER_TESTS_TESTING_PATHS_H_

#include <string>

namespace ms::testing {

// $MS_SOURCE_DIR, the source tree. Fails the test (and returns ".") when
// unset.
std::string SourceDir();

// $MS_SOURCE_DIR/tests/testdata/<name>. Fails the test when unset.
std::string TestDataPath(const std::string& name);

// The whole content of a file; fails the test when unreadable.
std::string ReadFileOrDie(const std::string& path);

}  // namespace ms::testing

#endif  // METRICS_SCHEDULER_TESTS_TESTING_PATHS_H_
