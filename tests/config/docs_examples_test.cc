// The configuration examples of the documentation load, so that the
// documentation and the loader cannot drift apart: every ```yaml block of
// README.md that is a configuration (a line starting `metrics:`,
// `profiles:` or `apiVersion: metrics-scheduler/`), and every such block
// of docs/configuration.md's "Presets" section. A block without
// apiVersion and kind gets them, and one without a top-level `backend`
// gets a Prometheus URL, as a fragment shown in the docs needs.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "config/config.h"
#include "gtest/gtest.h"
#include "tests/testing/paths.h"

namespace ms {
namespace {

struct Example {
  int line = 0;         // of the block's first YAML line, 1-based
  std::string heading;  // the last Markdown heading before it
  std::string yaml;
};

bool IsConfiguration(absl::string_view yaml) {
  for (absl::string_view line : absl::StrSplit(yaml, '\n')) {
    if (absl::StartsWith(line, "metrics:") ||
        absl::StartsWith(line, "profiles:") ||
        absl::StartsWith(line, "apiVersion: metrics-scheduler/")) {
      return true;
    }
  }
  return false;
}

// The configuration blocks of the Markdown file at `path`; only those under
// the heading `section` (to the next heading of its level or above) when
// it is not empty.
std::vector<Example> Examples(const std::string& path,
                              absl::string_view section) {
  std::vector<Example> out;
  std::vector<std::string> lines =
      absl::StrSplit(testing::ReadFileOrDie(path), '\n');
  std::string heading;
  bool inside = section.empty();
  bool in_block = false;
  Example current;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (in_block) {
      if (line == "```") {
        if (inside && IsConfiguration(current.yaml)) out.push_back(current);
        in_block = false;
      } else {
        absl::StrAppend(&current.yaml, line, "\n");
      }
      continue;
    }
    if (absl::StartsWith(line, "```yaml")) {
      current = {.line = static_cast<int>(i) + 2, .heading = heading};
      in_block = true;
    } else if (absl::StartsWith(line, "#")) {
      heading = line;
      if (!section.empty()) {
        if (line == section) {
          inside = true;
        } else if (inside && line.find(' ') <= section.find(' ')) {
          inside = false;  // a heading of the section's level or above
        }
      }
    }
  }
  return out;
}

// `yaml` made a whole configuration.
std::string Completed(const std::string& yaml) {
  std::string out;
  if (!absl::StrContains(yaml, "apiVersion:")) {
    out =
        "apiVersion: metrics-scheduler/v1alpha1\n"
        "kind: MetricsSchedulerConfiguration\n";
  }
  if (!absl::StartsWith(yaml, "backend:") &&
      !absl::StrContains(yaml, "\nbackend:")) {
    absl::StrAppend(&out, "backend: {url: http://prometheus.example:9090}\n");
  }
  return out + yaml;
}

void ExpectAllLoad(const std::string& file, const std::vector<Example>& all) {
  for (const Example& e : all) {
    absl::StatusOr<Config> c = LoadConfigString(Completed(e.yaml), file);
    EXPECT_TRUE(c.ok()) << file << ":" << e.line << " (under " << e.heading
                        << "): " << c.status() << "\n"
                        << e.yaml;
  }
}

TEST(DocsExamplesTest, EveryReadmeConfigurationLoads) {
  const std::string path = testing::SourceDir() + "/README.md";
  std::vector<Example> all = Examples(path, "");
  ExpectAllLoad("README.md", all);
  // The peers' policies the placement-quality benchmark runs
  // (bench/quality/policies.h), each with an example under its heading.
  for (const char* peer :
       {"TargetLoadPacking", "LoadVariationRiskBalancing", "LoadAware"}) {
    int found = 0;
    for (const Example& e : all) found += absl::StrContains(e.heading, peer);
    EXPECT_GE(found, 1) << "no README configuration under a heading naming "
                        << peer;
  }
}

TEST(DocsExamplesTest, EveryPresetsSectionConfigurationLoads) {
  const std::string path = testing::SourceDir() + "/docs/configuration.md";
  std::vector<Example> all = Examples(path, "## Presets");
  EXPECT_GE(all.size(), 3u);
  ExpectAllLoad("docs/configuration.md", all);
}

TEST(DocsExamplesTest, TheRebalancingConfigurationLoads) {
  const std::string path = testing::SourceDir() + "/docs/rebalance.md";
  std::vector<Example> all = Examples(path, "");
  ASSERT_EQ(all.size(), 1u);
  ExpectAllLoad("docs/rebalance.md", all);
  absl::StatusOr<Config> c =
      LoadConfigString(Completed(all[0].yaml), "docs/rebalance.md");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->rebalance.mode, RebalanceMode::kDryRun);
  EXPECT_EQ(c->rebalance.hot.size(), 1u);
}

}  // namespace
}  // namespace ms
