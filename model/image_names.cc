#include "model/image_names.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace ms {
namespace {

struct Names {
  absl::Mutex mu;
  absl::flat_hash_map<std::string, uint32_t> ids ABSL_GUARDED_BY(mu);
  std::vector<int64_t> sizes ABSL_GUARDED_BY(mu);  // by id
};

Names& Get() {
  static Names* const names = new Names;  // never destroyed
  return *names;
}

uint32_t InternLocked(Names& names, absl::string_view name, int64_t size_bytes)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(names.mu) {
  auto [it, added] = names.ids.try_emplace(
      name, static_cast<uint32_t>(names.ids.size()));
  if (added) names.sizes.push_back(0);
  int64_t& size = names.sizes[it->second];
  if (size == 0) size = size_bytes;
  return it->second;
}

}  // namespace

uint32_t InternImageName(absl::string_view name, int64_t size_bytes) {
  Names& names = Get();
  absl::MutexLock lock(&names.mu);
  return InternLocked(names, name, size_bytes);
}

void InternImageNames(absl::Span<const ImageName> names,
                      std::vector<uint32_t>& ids) {
  Names& all = Get();
  ids.reserve(ids.size() + names.size());
  absl::MutexLock lock(&all.mu);
  for (const ImageName& n : names) {
    ids.push_back(InternLocked(all, n.name, n.size_bytes));
  }
}

std::optional<uint32_t> FindImageName(absl::string_view name) {
  Names& names = Get();
  absl::MutexLock lock(&names.mu);
  auto it = names.ids.find(name);
  if (it == names.ids.end()) return std::nullopt;
  return it->second;
}

int64_t ImageSize(uint32_t id) {
  Names& names = Get();
  absl::MutexLock lock(&names.mu);
  return id < names.sizes.size() ? names.sizes[id] : 0;
}

}  // namespace ms
