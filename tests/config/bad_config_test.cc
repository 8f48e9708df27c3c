// Malformed configurations: every file under tests/testdata/config/bad/ is
// rejected with exactly the message in its .want file next to it (FILE
// stands for the file's path). The binary's exit codes over the same files
// are tested in tests/scheduler/cli_test.cc.
#include <dirent.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "config/config.h"
#include "gtest/gtest.h"
#include "tests/testing/paths.h"

namespace ms {
namespace {

// The bad configurations' paths, sorted.
std::vector<std::string> BadConfigs() {
  std::string dir = testing::TestDataPath("config/bad");
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  EXPECT_NE(d, nullptr) << dir;
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    if (absl::EndsWith(e->d_name, ".yaml")) out.push_back(dir + "/" + e->d_name);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// The expected message for `path`: its .want file, FILE replaced by path.
std::string Want(const std::string& path) {
  std::string want = testing::ReadFileOrDie(
      std::string(absl::StripSuffix(path, ".yaml")) + ".want");
  return absl::StrReplaceAll(absl::StripTrailingAsciiWhitespace(want),
                             {{"FILE", path}});
}

TEST(BadConfigTest, EachFileFailsWithItsMessage) {
  std::vector<std::string> files = BadConfigs();
  EXPECT_GE(files.size(), 30u);
  for (const std::string& path : files) {
    absl::StatusOr<Config> config = LoadConfigFile(path, {.check_files = true});
    ASSERT_FALSE(config.ok()) << path;
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument)
        << path;
    EXPECT_EQ(std::string(config.status().message()), Want(path));
  }
}

// The files a configuration names are checked only when asked: a
// configuration written for the cluster (manifests/) loads anywhere.
TEST(BadConfigTest, FilesAreCheckedOnlyWhenAsked) {
  std::string path = testing::TestDataPath("config/bad/missing-token-file.yaml");
  absl::StatusOr<Config> config = LoadConfigFile(path);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->backend.token_file, "/nonexistent/metrics-token");
}

}  // namespace
}  // namespace ms
