#include "scheduler/telemetry/process_metrics.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/telemetry/self_metrics.h"

namespace ms {
namespace {

using ::testing::HasSubstr;

ProcessStats Read() {
  absl::StatusOr<ProcessStats> stats = ReadProcessStats();
  EXPECT_TRUE(stats.ok()) << stats.status();
  return stats.ok() ? *stats : ProcessStats{};
}

TEST(ProcessMetricsTest, FiguresArePlausible) {
  const ProcessStats stats = Read();
  EXPECT_GT(stats.resident_memory_bytes, 0);
  EXPECT_GT(stats.virtual_memory_bytes, stats.resident_memory_bytes);
  EXPECT_GE(stats.open_fds, 3);  // stdin, stdout, stderr
  EXPECT_GE(stats.max_fds, stats.open_fds);
  EXPECT_GE(stats.cpu_seconds, 0);
  // This process started before now, and not long before (the test
  // binary's start; /proc counts in clock ticks from a boot time in
  // seconds, so allow a second the other way).
  const double now = static_cast<double>(absl::ToUnixMillis(absl::Now())) / 1000;
  EXPECT_LE(stats.start_time_seconds, now + 1);
  EXPECT_GT(stats.start_time_seconds, now - 600);
}

TEST(ProcessMetricsTest, OpenFdsCountsAFileOpened) {
  const double before = Read().open_fds;
  const int fd = open("/proc/self/stat", O_RDONLY);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(Read().open_fds, before + 1);
  close(fd);
  EXPECT_EQ(Read().open_fds, before);
}

TEST(ProcessMetricsTest, CpuSecondsGrowWithWork) {
  const double before = Read().cpu_seconds;
  // Work until the kernel has counted at least one more clock tick.
  volatile uint64_t sink = 0;
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  while (Read().cpu_seconds <= before && absl::Now() < give_up) {
    for (int i = 0; i < 1000000; ++i) sink = sink + i;
  }
  EXPECT_GT(Read().cpu_seconds, before);
}

// The families, typed as Prometheus' client libraries type them, each with
// one sample.
TEST(ProcessMetricsTest, RegistersTheClientLibraryNames) {
  Registry registry;
  AddProcessMetrics(registry);
  const std::string text = registry.Render();
  EXPECT_THAT(text, HasSubstr("# TYPE process_cpu_seconds_total counter\n"
                              "process_cpu_seconds_total "));
  for (const char* gauge :
       {"process_resident_memory_bytes", "process_virtual_memory_bytes",
        "process_open_fds", "process_max_fds", "process_start_time_seconds"}) {
    EXPECT_THAT(text, HasSubstr(std::string("# TYPE ") + gauge + " gauge\n" +
                                gauge + " "))
        << gauge;
  }
}

}  // namespace
}  // namespace ms
