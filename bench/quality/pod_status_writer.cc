#include "bench/quality/pod_status_writer.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "bench/quality/cluster_objects.h"
#include "common/http.h"
#include "glog/logging.h"

namespace ms::quality {

PodStatusWriter::PodStatusWriter(const bench::Admin& admin,
                                 std::string pod_namespace, int threads)
    : namespace_(std::move(pod_namespace)) {
  for (int i = 0; i < threads; ++i) admins_.push_back(admin.Clone());
  for (auto& a : admins_) {
    threads_.emplace_back([this, &a = *a] { Work(a); });
  }
}

PodStatusWriter::~PodStatusWriter() { Stop(); }

void PodStatusWriter::Started(const std::string& name, absl::Time start) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  queue_.push_back({.name = name, .start = start, .queued = absl::Now()});
}

PodStatusWriter::Counts PodStatusWriter::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  absl::MutexLock lock(&mu_);
  counts_.dropped += static_cast<int>(queue_.size());
  queue_.clear();
  return counts_;
}

void PodStatusWriter::Work(bench::Admin& admin) {
  while (true) {
    Pending next;
    {
      absl::MutexLock lock(
          &mu_, absl::Condition(this, &PodStatusWriter::HasWorkOrStopping));
      if (stopping_) return;
      next = std::move(queue_.front());
      queue_.pop_front();
    }
    Write(admin, next);
  }
}

void PodStatusWriter::Write(bench::Admin& admin, const Pending& pod) {
  const std::string path = absl::StrCat("/api/v1/namespaces/", namespace_,
                                        "/pods/", pod.name, "/status");
  absl::StatusOr<HttpResponse> r =
      admin.Call("PATCH", path, PodRunningPatch(pod.start),
                 "application/merge-patch+json");
  const absl::Duration wait = absl::Now() - pod.queued;
  if (r.ok() && r->status / 100 == 2) {
    Count(Outcome::kWritten, wait, "");
  } else if (r.ok() && r->status == 404) {
    Count(Outcome::kGone, wait, "");
  } else {
    Count(Outcome::kFailed, wait,
          absl::StrCat("PATCH ", path, ": ",
                       r.ok() ? absl::StrCat("HTTP ", r->status, " ",
                                             r->body.substr(0, 300))
                              : r.status().ToString()));
  }
}

void PodStatusWriter::Count(Outcome outcome, absl::Duration wait,
                            const std::string& failure) {
  absl::MutexLock lock(&mu_);
  counts_.longest_wait = std::max(counts_.longest_wait, wait);
  switch (outcome) {
    case Outcome::kWritten:
      ++counts_.written;
      return;
    case Outcome::kGone:
      ++counts_.gone;
      return;
    case Outcome::kFailed:
      ++counts_.failed;
      // One line, not one per pod: a failure that repeats (the apiserver
      // down, RBAC) would otherwise bury the run's own output.
      if (!failure_logged_) {
        failure_logged_ = true;
        LOG(WARNING) << "writing a started pod's status (later failures are "
                        "only counted): "
                     << failure;
      }
      return;
  }
}

}  // namespace ms::quality
