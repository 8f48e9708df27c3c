// Happens-before annotations for Debian's Abseil, linked into every test of
// a ThreadSanitizer build (-DMS_TSAN=ON).
//
// Why: Debian's libabsl_synchronization is not built with TSan, so TSan sees
// neither absl::Mutex's nor absl::Notification's synchronisation (their
// atomics run in uninstrumented code) and reports every access to data a
// Mutex guards as a race. Suppressing those reports would suppress our own
// code's races too. Instead, this file interposes the library's
// out-of-line entry points: each one calls the library's own (found with
// dlsym(RTLD_NEXT)) and tells TSan what it did — an acquire after taking a
// lock or seeing a notification, a release before giving a lock up or
// notifying. Await/LockWhen release and re-acquire around the wait. The
// inline Notification::HasBeenNotified() cannot be interposed; code that
// polls it relies on the Mutex it shares with the notifier in practice.
#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/base/options.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace {

#define MS_STR2(x) #x
#define MS_STR(x) MS_STR2(x)

// "_ZN4absl" + the inline namespace, as the library's symbols are mangled.
std::string Prefix(const char* nested_kind) {
  std::string ns = MS_STR(ABSL_OPTION_INLINE_NAMESPACE_NAME);
  return std::string(nested_kind) + "4absl" + std::to_string(ns.size()) + ns;
}

template <typename F>
F Real(const std::string& symbol) {
  void* f = dlsym(RTLD_NEXT, symbol.c_str());
  if (f == nullptr) {
    std::fprintf(stderr, "tsan annotations: %s not found\n", symbol.c_str());
    std::abort();
  }
  return reinterpret_cast<F>(f);
}

}  // namespace

namespace absl {
ABSL_NAMESPACE_BEGIN

void Mutex::Lock() {
  static auto real = Real<void (*)(Mutex*)>(Prefix("_ZN") + "5Mutex4LockEv");
  real(this);
  __tsan_acquire(this);
}

void Mutex::Unlock() {
  static auto real =
      Real<void (*)(Mutex*)>(Prefix("_ZN") + "5Mutex6UnlockEv");
  __tsan_release(this);
  real(this);
}

bool Mutex::TryLock() {
  static auto real =
      Real<bool (*)(Mutex*)>(Prefix("_ZN") + "5Mutex7TryLockEv");
  bool locked = real(this);
  if (locked) __tsan_acquire(this);
  return locked;
}

void Mutex::ReaderLock() {
  static auto real =
      Real<void (*)(Mutex*)>(Prefix("_ZN") + "5Mutex10ReaderLockEv");
  real(this);
  __tsan_acquire(this);
}

void Mutex::ReaderUnlock() {
  static auto real =
      Real<void (*)(Mutex*)>(Prefix("_ZN") + "5Mutex12ReaderUnlockEv");
  __tsan_release(this);
  real(this);
}

void Mutex::Await(const Condition& cond) {
  static auto real = Real<void (*)(Mutex*, const Condition&)>(
      Prefix("_ZN") + "5Mutex5AwaitERKNS0_9ConditionE");
  __tsan_release(this);
  real(this, cond);
  __tsan_acquire(this);
}

bool Mutex::AwaitWithTimeout(const Condition& cond, absl::Duration timeout) {
  static auto real = Real<bool (*)(Mutex*, const Condition&, absl::Duration)>(
      Prefix("_ZN") + "5Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  __tsan_release(this);
  bool result = real(this, cond, timeout);
  __tsan_acquire(this);
  return result;
}

void Mutex::LockWhen(const Condition& cond) {
  static auto real = Real<void (*)(Mutex*, const Condition&)>(
      Prefix("_ZN") + "5Mutex8LockWhenERKNS0_9ConditionE");
  real(this, cond);
  __tsan_acquire(this);
}

void Notification::Notify() {
  static auto real =
      Real<void (*)(Notification*)>(Prefix("_ZN") + "12Notification6NotifyEv");
  __tsan_release(this);
  real(this);
}

void Notification::WaitForNotification() const {
  static auto real = Real<void (*)(const Notification*)>(
      Prefix("_ZNK") + "12Notification19WaitForNotificationEv");
  real(this);
  __tsan_acquire(const_cast<Notification*>(this));
}

bool Notification::WaitForNotificationWithTimeout(
    absl::Duration timeout) const {
  static auto real = Real<bool (*)(const Notification*, absl::Duration)>(
      Prefix("_ZNK") +
      "12Notification30WaitForNotificationWithTimeoutENS0_8DurationE");
  bool notified = real(this, timeout);
  if (notified) __tsan_acquire(const_cast<Notification*>(this));
  return notified;
}

ABSL_NAMESPACE_END
}  // namespace absl
