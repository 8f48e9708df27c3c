#include "common/token_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace ms {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int err = errno;
    std::string msg = absl::StrCat(path, ": ", std::strerror(err));
    if (err == ENOENT) return absl::NotFoundError(msg);
    if (err == EACCES) return absl::PermissionDeniedError(msg);
    return absl::UnavailableError(msg);
  }
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

absl::StatusOr<std::unique_ptr<TokenFile>> TokenFile::Open(
    const std::string& path, absl::Duration recheck) {
  std::unique_ptr<TokenFile> file(new TokenFile(path, recheck));
  absl::MutexLock lock(&file->mu_);
  absl::Status status = file->Reload();
  if (!status.ok()) return status;
  file->next_check_ = absl::Now() + recheck;
  return file;
}

absl::Status TokenFile::Reload() const {
  struct stat st;
  if (stat(path_.c_str(), &st) != 0) {
    int err = errno;
    std::string msg = absl::StrCat("token file ", path_, ": ",
                                   std::strerror(err));
    return err == ENOENT ? absl::NotFoundError(msg)
                         : absl::PermissionDeniedError(msg);
  }
  int64_t mtime_ns =
      int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
  // A file renamed over the old one (how Secrets are rotated) is a new
  // inode even when its size and coarse mtime match the old one's.
  const uint64_t inode = st.st_ino;
  if (inode == inode_ && mtime_ns == mtime_ns_ && st.st_size == size_) {
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> content = ReadFile(path_);
  if (!content.ok()) return content.status();
  std::string token(absl::StripAsciiWhitespace(*content));
  if (token.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("token file ", path_, " is empty"));
  }
  token_ = std::move(token);
  inode_ = inode;
  mtime_ns_ = mtime_ns;
  size_ = st.st_size;
  return absl::OkStatus();
}

std::string TokenFile::Get() const {
  absl::MutexLock lock(&mu_);
  absl::Time now = absl::Now();
  if (now >= next_check_) {
    next_check_ = now + recheck_;
    // A failed re-read keeps the last good token; it is retried next time.
    (void)Reload();
  }
  return token_;
}

}  // namespace ms
