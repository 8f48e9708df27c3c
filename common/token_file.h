// TokenFile: a secret read from a file and re-read when the file changes.
//
// Service-account tokens and mounted Secrets are rotated by the kubelet by
// swapping the file; the caller asks for the current value before every
// request and gets the new one once the file's inode, modification time or
// size changed. Reading is cheap when nothing changed (one stat(2) at most every
// `recheck` interval). Thread-safe.
#ifndef METRICS_SCHEDULER_COMMON_TOKEN_FILE_H_
#define METRICS_SCHEDULER_COMMON_TOKEN_FILE_H_

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ms {

class TokenFile {
 public:
  // Reads `path` once. NotFound / PermissionDenied / InvalidArgument (empty
  // file) when it cannot be used.
  static absl::StatusOr<std::unique_ptr<TokenFile>> Open(
      const std::string& path, absl::Duration recheck = absl::Seconds(1));

  // The current token, surrounding white space removed. When a re-read
  // fails, the last good token is returned (and the failure retried later).
  std::string Get() const;

  const std::string& path() const { return path_; }

 private:
  TokenFile(std::string path, absl::Duration recheck)
      : path_(std::move(path)), recheck_(recheck) {}
  absl::Status Reload() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string path_;
  const absl::Duration recheck_;
  mutable absl::Mutex mu_;
  mutable std::string token_ ABSL_GUARDED_BY(mu_);
  mutable uint64_t inode_ ABSL_GUARDED_BY(mu_) = 0;
  mutable int64_t mtime_ns_ ABSL_GUARDED_BY(mu_) = -1;
  mutable int64_t size_ ABSL_GUARDED_BY(mu_) = -1;
  mutable absl::Time next_check_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

// Reads a whole file. NotFound, PermissionDenied or Unavailable on failure,
// the message naming the path.
absl::StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace ms

#endif  // METRICS_SCHEDULER_COMMON_TOKEN_FILE_H_
