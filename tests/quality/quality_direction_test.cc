// The placement-quality benchmark, short (docs/quality.md): the
// heterogeneous and identical traces, kube-scheduler against
// metrics-scheduler, one run. It asserts directions only, never the
// targets, which `make quality` measures: on a fleet of fast, slow and
// noisy nodes the pods placed by metrics-scheduler run with a lower mean
// latency than kube-scheduler's, and on identical nodes it does no harm:
// within 5 % of kube-scheduler's even spread by requests.
#include <cstdlib>
#include <string>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "simdjson.h"
#include "tests/testing/command.h"
#include "tests/testing/paths.h"

namespace ms::quality {
namespace {

using ::ms::testing::CommandResult;
using ::ms::testing::ReadFileOrDie;
using ::ms::testing::RunCommandLine;
using ::ms::testing::SourceDir;

// The median mean latency of `policy` on `trace` in quality.json.
double MeanLatency(simdjson::dom::element doc, const std::string& trace,
                   const std::string& policy) {
  for (simdjson::dom::element t : doc["traces"].get_array()) {
    if (std::string_view(t["trace"].get_string()) != trace) continue;
    for (simdjson::dom::element p : t["policies"].get_array()) {
      if (std::string_view(p["policy"].get_string()) != policy) continue;
      return double(p["median"]["mean_latency_s"]);
    }
  }
  ADD_FAILURE() << "no " << policy << " on " << trace;
  return 0;
}

TEST(QualityDirectionTest,
     OursBeatsKubeSchedulerWhereNodesDifferAndDoesNoHarm) {
  const char* build = std::getenv("MS_BINARY_DIR");
  ASSERT_NE(build, nullptr);
  std::string dir = ::testing::TempDir() + "ms-quality-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  absl::Cleanup remove = [&] { std::system(("rm -rf " + dir).c_str()); };
  CommandResult r = RunCommandLine(
      absl::StrCat(build, "/bench/quality_bench --build_dir=", build,
                   " --source_dir=", SourceDir(), " --out_dir=", dir,
                   " --traces=heterogeneous,identical",
                   " --policies=kube-scheduler,metrics-scheduler --runs=1",
                   " --duration=90 --scrape_interval=5s"),
      absl::Minutes(5));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::cerr << r.out;  // the tables, for the log

  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  std::string json = ReadFileOrDie(absl::StrCat(dir, "/quality.json"));
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json;
  EXPECT_LT(MeanLatency(doc, "heterogeneous", "metrics-scheduler"),
            MeanLatency(doc, "heterogeneous", "kube-scheduler"));
  EXPECT_LE(MeanLatency(doc, "identical", "metrics-scheduler"),
            1.05 * MeanLatency(doc, "identical", "kube-scheduler"));
}

}  // namespace
}  // namespace ms::quality
