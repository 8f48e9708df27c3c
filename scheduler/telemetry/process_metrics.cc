#include "scheduler/telemetry/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace ms {
namespace {

absl::StatusOr<std::string> Slurp(const char* path) {
  std::ifstream in(path);
  if (!in) return absl::UnavailableError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The system's boot time, in seconds since the epoch: /proc/stat's btime.
absl::StatusOr<double> BootTime() {
  absl::StatusOr<std::string> stat = Slurp("/proc/stat");
  if (!stat.ok()) return stat.status();
  for (absl::string_view line : absl::StrSplit(*stat, '\n')) {
    double btime;
    if (absl::ConsumePrefix(&line, "btime ") &&
        absl::SimpleAtod(line, &btime)) {
      return btime;
    }
  }
  return absl::UnavailableError("/proc/stat has no btime");
}

// Entries of /proc/self/fd (the one open to read it included, as Go's
// client counts them).
absl::StatusOr<int> OpenFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return absl::UnavailableError("cannot list /proc/self/fd");
  int n = 0;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++n;
  }
  closedir(dir);
  return n;
}

}  // namespace

absl::StatusOr<ProcessStats> ReadProcessStats() {
  absl::StatusOr<std::string> stat = Slurp("/proc/self/stat");
  if (!stat.ok()) return stat.status();
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so
  // the fields are counted from after its last ')'. Field 3 (state) is
  // fields[0].
  size_t paren = stat->rfind(')');
  if (paren == std::string::npos) {
    return absl::UnavailableError("/proc/self/stat: no command name");
  }
  std::vector<absl::string_view> fields =
      absl::StrSplit(absl::string_view(*stat).substr(paren + 1), ' ',
                     absl::SkipEmpty());
  auto field = [&fields](int number, double* out) {
    size_t i = static_cast<size_t>(number - 3);
    return i < fields.size() && absl::SimpleAtod(fields[i], out);
  };
  double utime, stime, starttime, vsize, rss;
  if (!field(14, &utime) || !field(15, &stime) || !field(22, &starttime) ||
      !field(23, &vsize) || !field(24, &rss)) {
    return absl::UnavailableError("/proc/self/stat: fields missing");
  }
  absl::StatusOr<double> boot = BootTime();
  if (!boot.ok()) return boot.status();
  absl::StatusOr<int> fds = OpenFds();
  if (!fds.ok()) return fds.status();
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return absl::UnavailableError("getrlimit(RLIMIT_NOFILE) failed");
  }
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  return ProcessStats{
      .cpu_seconds = (utime + stime) / ticks,
      .resident_memory_bytes = rss * page,
      .virtual_memory_bytes = vsize,
      .open_fds = static_cast<double>(*fds),
      .max_fds = static_cast<double>(limit.rlim_cur),
      .start_time_seconds = *boot + starttime / ticks};
}

void AddProcessMetrics(Registry& registry) {
  // One sample, read at scrape time; none when /proc cannot be read.
  auto sample = [](double ProcessStats::*field) {
    return [field] {
      absl::StatusOr<ProcessStats> stats = ReadProcessStats();
      return stats.ok() ? Registry::GaugeSamples{{{}, (*stats).*field}}
                        : Registry::GaugeSamples{};
    };
  };
  registry.AddCounterFunc("process_cpu_seconds_total",
                          "Total user and system CPU time spent in seconds.",
                          {}, sample(&ProcessStats::cpu_seconds));
  registry.AddGauge("process_resident_memory_bytes",
                    "Resident memory size in bytes.", {},
                    sample(&ProcessStats::resident_memory_bytes));
  registry.AddGauge("process_virtual_memory_bytes",
                    "Virtual memory size in bytes.", {},
                    sample(&ProcessStats::virtual_memory_bytes));
  registry.AddGauge("process_open_fds", "Number of open file descriptors.",
                    {}, sample(&ProcessStats::open_fds));
  registry.AddGauge("process_max_fds",
                    "Maximum number of open file descriptors.", {},
                    sample(&ProcessStats::max_fds));
  registry.AddGauge(
      "process_start_time_seconds",
      "Start time of the process since unix epoch in seconds.", {},
      sample(&ProcessStats::start_time_seconds));
}

}  // namespace ms
