#include "scheduler/telemetry/self_metrics.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ms {
namespace {

using ::testing::HasSubstr;

// Each family renders with its HELP and TYPE lines, counters kept
// elsewhere (AddCounterFunc) typed as counters.
TEST(RegistryTest, RendersEachKindWithItsType) {
  Registry registry;
  registry.AddCounter("c_total", "A counter.", {"result"})
      .With({"ok"})
      .Inc(2);
  registry.AddGauge("g", "A gauge.", {}, [] {
    return Registry::GaugeSamples{{{}, 1.5}};
  });
  registry.AddCounterFunc("f_total", "Counted elsewhere.", {"metric", "result"},
                          [] {
                            return Registry::GaugeSamples{
                                {{"cpu", "success"}, 7}, {{"cpu", "failure"}, 0}};
                          });
  const std::string text = registry.Render();
  EXPECT_THAT(text, HasSubstr("# HELP c_total A counter.\n# TYPE c_total "
                              "counter\nc_total{result=\"ok\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE g gauge\ng 1.5\n"));
  EXPECT_THAT(text,
              HasSubstr("# HELP f_total Counted elsewhere.\n# TYPE f_total "
                        "counter\nf_total{metric=\"cpu\",result=\"success\"} "
                        "7\nf_total{metric=\"cpu\",result=\"failure\"} 0\n"));
}

// Values keep every digit they need: a timestamp, a byte count.
TEST(RegistryTest, RendersNumbersInFull) {
  Registry registry;
  registry.AddGauge("g", "A gauge.", {"k"}, [] {
    return Registry::GaugeSamples{{{"ts"}, 1700000000.03},
                                  {{"bytes"}, 123456789},
                                  {{"small"}, 0.00001}};
  });
  const std::string text = registry.Render();
  EXPECT_THAT(text, HasSubstr("g{k=\"ts\"} 1700000000.03\n"));
  EXPECT_THAT(text, HasSubstr("g{k=\"bytes\"} 123456789\n"));
  EXPECT_THAT(text, HasSubstr("g{k=\"small\"} 1e-05\n"));
}

}  // namespace
}  // namespace ms
