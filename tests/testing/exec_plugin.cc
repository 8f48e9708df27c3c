#include "tests/testing/exec_plugin.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/token_file.h"
#include "gtest/gtest.h"

namespace ms::testing {

namespace fs = std::filesystem;

void WriteScript(const std::string& path, const std::string& body) {
  {
    std::ofstream out(path, std::ios::trunc);
    out << "#!/bin/sh\n" << body;
    out.close();
    ASSERT_TRUE(out) << "cannot write " << path;
  }
  fs::permissions(path,
                  fs::perms::owner_all | fs::perms::group_read |
                      fs::perms::group_exec | fs::perms::others_read |
                      fs::perms::others_exec,
                  fs::perm_options::replace);
}

std::string TokenCredential(const std::string& token,
                            const std::string& expiry,
                            const std::string& api_version) {
  std::string status = absl::StrCat(R"({"token":")", token, R"(")");
  if (!expiry.empty()) {
    absl::StrAppend(&status, R"(,"expirationTimestamp":")", expiry, R"(")");
  }
  return absl::StrCat(R"({"apiVersion":")", api_version,
                      R"(","kind":"ExecCredential","status":)", status, "}}");
}

std::string PrintCredential(const std::string& json) {
  return absl::StrCat("cat <<END_OF_CREDENTIAL\n", json,
                      "\nEND_OF_CREDENTIAL\n");
}

std::string CountRuns(const std::string& counter_file) {
  return absl::StrCat("n=$(cat '", counter_file,
                      "' 2>/dev/null || echo 0)\nn=$((n + 1))\necho $n >'",
                      counter_file, "'\n");
}

int RunsCounted(const std::string& counter_file) {
  absl::StatusOr<std::string> text = ReadFile(counter_file);
  int n = 0;
  if (!text.ok() ||
      !absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &n)) {
    return 0;
  }
  return n;
}

}  // namespace ms::testing
