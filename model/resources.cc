#include "model/resources.h"

#include <algorithm>

namespace ms {
namespace {

template <typename Op>
void MergeScalars(std::vector<std::pair<std::string, int64_t>>& into,
                  const std::vector<std::pair<std::string, int64_t>>& from,
                  Op op) {
  for (const auto& [name, value] : from) {
    auto it = std::lower_bound(
        into.begin(), into.end(), name,
        [](const auto& entry, const std::string& n) { return entry.first < n; });
    if (it != into.end() && it->first == name) {
      it->second = op(it->second, value);
    } else {
      into.insert(it, {name, op(0, value)});
    }
  }
}

// a - b for an accumulated sum: saturated sums stay saturated.
int64_t SaturatingSub(int64_t a, int64_t b) {
  if (a == INT64_MAX) return a;
  int64_t diff;
  if (__builtin_sub_overflow(a, b, &diff)) {
    return b > 0 ? INT64_MIN : INT64_MAX;
  }
  return diff;
}

}  // namespace

void Resources::Add(const Resources& other) {
  milli_cpu = SaturatingAdd(milli_cpu, other.milli_cpu);
  memory = SaturatingAdd(memory, other.memory);
  ephemeral_storage = SaturatingAdd(ephemeral_storage, other.ephemeral_storage);
  pods = SaturatingAdd(pods, other.pods);
  MergeScalars(scalar, other.scalar, SaturatingAdd);
}

void Resources::Sub(const Resources& other) {
  milli_cpu = SaturatingSub(milli_cpu, other.milli_cpu);
  memory = SaturatingSub(memory, other.memory);
  ephemeral_storage = SaturatingSub(ephemeral_storage, other.ephemeral_storage);
  pods = SaturatingSub(pods, other.pods);
  MergeScalars(scalar, other.scalar, SaturatingSub);
}

void Resources::SetMax(const Resources& other) {
  milli_cpu = std::max(milli_cpu, other.milli_cpu);
  memory = std::max(memory, other.memory);
  ephemeral_storage = std::max(ephemeral_storage, other.ephemeral_storage);
  pods = std::max(pods, other.pods);
  MergeScalars(scalar, other.scalar,
               [](int64_t a, int64_t b) { return std::max(a, b); });
}

int64_t Resources::Scalar(const std::string& name) const {
  auto it = std::lower_bound(
      scalar.begin(), scalar.end(), name,
      [](const auto& entry, const std::string& n) { return entry.first < n; });
  return (it != scalar.end() && it->first == name) ? it->second : 0;
}

void Resources::SetScalar(const std::string& name, int64_t value) {
  auto it = std::lower_bound(
      scalar.begin(), scalar.end(), name,
      [](const auto& entry, const std::string& n) { return entry.first < n; });
  if (it != scalar.end() && it->first == name) {
    it->second = value;
  } else {
    scalar.insert(it, {name, value});
  }
}

}  // namespace ms
