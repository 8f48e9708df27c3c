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
// notifying.
//
// Conditions (Await, LockWhen and their variants) are evaluated by the
// library with the lock held, by the waiting thread or by whichever thread
// is unlocking; the entry points pass the library a wrapped condition that
// acquires before evaluating the caller's and releases after, so its reads
// of guarded data are ordered like any other under the lock. The inline
// Notification::HasBeenNotified() cannot be interposed; code that polls it
// relies on the Mutex it shares with the notifier in practice.
#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>

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

// A condition evaluated under `mu`, as the library does, annotated.
struct Guarded {
  absl::Mutex* mu;
  const absl::Condition* cond;
};

bool EvalGuarded(void* arg) {
  auto* g = static_cast<Guarded*>(arg);
  __tsan_acquire(g->mu);
  bool result = g->cond->Eval();
  __tsan_release(g->mu);
  return result;
}

// Calls `real` (a waiting entry point of the library) with the condition
// wrapped, releasing the lock around a wait that starts with it held.
template <typename R, typename... Args>
R Wait(R (*real)(absl::Mutex*, const absl::Condition&, Args...),
       absl::Mutex* mu, const absl::Condition& cond, bool held,
       Args... args) {
  Guarded g{mu, &cond};
  absl::Condition wrapped(&EvalGuarded, &g);
  if (held) __tsan_release(mu);
  if constexpr (std::is_void_v<R>) {
    real(mu, wrapped, args...);
    __tsan_acquire(mu);
  } else {
    R result = real(mu, wrapped, args...);
    __tsan_acquire(mu);
    return result;
  }
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

bool Mutex::ReaderTryLock() {
  static auto real =
      Real<bool (*)(Mutex*)>(Prefix("_ZN") + "5Mutex13ReaderTryLockEv");
  bool locked = real(this);
  if (locked) __tsan_acquire(this);
  return locked;
}

void Mutex::Await(const Condition& cond) {
  static auto real = Real<void (*)(Mutex*, const Condition&)>(
      Prefix("_ZN") + "5Mutex5AwaitERKNS0_9ConditionE");
  Wait(real, this, cond, /*held=*/true);
}

bool Mutex::AwaitWithTimeout(const Condition& cond, absl::Duration t) {
  static auto real = Real<bool (*)(Mutex*, const Condition&, absl::Duration)>(
      Prefix("_ZN") + "5Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  return Wait(real, this, cond, /*held=*/true, t);
}

bool Mutex::AwaitWithDeadline(const Condition& cond, absl::Time t) {
  static auto real = Real<bool (*)(Mutex*, const Condition&, absl::Time)>(
      Prefix("_ZN") + "5Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  return Wait(real, this, cond, /*held=*/true, t);
}

void Mutex::LockWhen(const Condition& cond) {
  static auto real = Real<void (*)(Mutex*, const Condition&)>(
      Prefix("_ZN") + "5Mutex8LockWhenERKNS0_9ConditionE");
  Wait(real, this, cond, /*held=*/false);
}

bool Mutex::LockWhenWithTimeout(const Condition& cond, absl::Duration t) {
  static auto real = Real<bool (*)(Mutex*, const Condition&, absl::Duration)>(
      Prefix("_ZN") + "5Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  return Wait(real, this, cond, /*held=*/false, t);
}

bool Mutex::LockWhenWithDeadline(const Condition& cond, absl::Time t) {
  static auto real = Real<bool (*)(Mutex*, const Condition&, absl::Time)>(
      Prefix("_ZN") + "5Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  return Wait(real, this, cond, /*held=*/false, t);
}

void Mutex::ReaderLockWhen(const Condition& cond) {
  static auto real = Real<void (*)(Mutex*, const Condition&)>(
      Prefix("_ZN") + "5Mutex14ReaderLockWhenERKNS0_9ConditionE");
  Wait(real, this, cond, /*held=*/false);
}

bool Mutex::ReaderLockWhenWithTimeout(const Condition& cond, absl::Duration t) {
  static auto real = Real<bool (*)(Mutex*, const Condition&, absl::Duration)>(
      Prefix("_ZN") + "5Mutex25ReaderLockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  return Wait(real, this, cond, /*held=*/false, t);
}

bool Mutex::ReaderLockWhenWithDeadline(const Condition& cond, absl::Time t) {
  static auto real = Real<bool (*)(Mutex*, const Condition&, absl::Time)>(
      Prefix("_ZN") + "5Mutex26ReaderLockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  return Wait(real, this, cond, /*held=*/false, t);
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

bool Notification::WaitForNotificationWithDeadline(absl::Time deadline) const {
  static auto real = Real<bool (*)(const Notification*, absl::Time)>(
      Prefix("_ZNK") +
      "12Notification31WaitForNotificationWithDeadlineENS0_4TimeE");
  bool notified = real(this, deadline);
  if (notified) __tsan_acquire(const_cast<Notification*>(this));
  return notified;
}

ABSL_NAMESPACE_END
}  // namespace absl
