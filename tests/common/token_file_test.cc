#include "common/token_file.h"

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace ms {
namespace {

TEST(TokenFileTest, RereadsWhenTheFileIsReplaced) {
  std::string path = ::testing::TempDir() + "/token_file_test";
  std::ofstream(path) << "  old-token \n";
  absl::StatusOr<std::unique_ptr<TokenFile>> file =
      TokenFile::Open(path, absl::ZeroDuration());
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ((*file)->Get(), "old-token");

  // A kubelet rotates by writing a new file and renaming it over the old.
  std::string next = path + ".next";
  std::ofstream(next) << "new-token-longer";
  std::filesystem::rename(next, path);
  EXPECT_EQ((*file)->Get(), "new-token-longer");

  // A vanished file keeps the last good token.
  std::filesystem::remove(path);
  EXPECT_EQ((*file)->Get(), "new-token-longer");
}

TEST(TokenFileTest, OpenErrors) {
  EXPECT_EQ(TokenFile::Open("/nonexistent/token").status().code(),
            absl::StatusCode::kNotFound);
  std::string empty = ::testing::TempDir() + "/token_file_empty";
  std::ofstream(empty) << "\n";
  EXPECT_EQ(TokenFile::Open(empty).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ms
