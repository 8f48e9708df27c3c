// The version of this build, for --version and the logs.
//
// The project's version (CMakeLists.txt: project(... VERSION ...)), then,
// when built from a git checkout, "+" and the commit's abbreviated hash,
// then ".dirty" if tracked files had uncommitted changes:
// "0.1.0+3e190c9a1b2c.dirty". Generated at every build by
// cmake/version.cmake.
#ifndef METRICS_SCHEDULER_SCHEDULER_CMD_VERSION_H_
#define METRICS_SCHEDULER_SCHEDULER_CMD_VERSION_H_

namespace ms {

extern const char kVersion[];

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_CMD_VERSION_H_
