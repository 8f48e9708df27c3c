#include "model/image_names.h"

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace ms {
namespace {

struct Names {
  absl::Mutex mu;
  absl::flat_hash_map<std::string, uint32_t> ids ABSL_GUARDED_BY(mu);
};

Names& Get() {
  static Names* const names = new Names;  // never destroyed
  return *names;
}

}  // namespace

uint32_t InternImageName(absl::string_view name) {
  Names& names = Get();
  absl::MutexLock lock(&names.mu);
  auto [it, added] = names.ids.try_emplace(
      name, static_cast<uint32_t>(names.ids.size()));
  return it->second;
}

std::optional<uint32_t> FindImageName(absl::string_view name) {
  Names& names = Get();
  absl::MutexLock lock(&names.mu);
  auto it = names.ids.find(name);
  if (it == names.ids.end()) return std::nullopt;
  return it->second;
}

}  // namespace ms
