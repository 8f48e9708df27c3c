// metrics-scheduler: the daemon and its subcommands.
//
//   metrics-scheduler [flags]                  run the scheduler
//   metrics-scheduler validate-config FILE     check a configuration file
//   metrics-scheduler explain POD|FILE         where a pod would go, and why
//   metrics-scheduler --version                the version of this build
//
// main() parses the command line (cli.h: usage, flags, the subcommands and
// the exit codes); Run is the daemon.

#include <malloc.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "config/config.h"
#include "glog/logging.h"
#include "kube/client.h"
#include "kube/cluster_config.h"
#include "kube/informer.h"
#include "metrics/cache.h"
#include "scheduler/cmd/cli.h"
#include "scheduler/cmd/flags.h"
#include "scheduler/cmd/setup.h"
#include "scheduler/cmd/version.h"
#include "scheduler/cycle/cluster_watch.h"
#include "scheduler/cycle/scheduler.h"
#include "scheduler/cycle/scheduler_api.h"
#include "scheduler/cycle/shadow.h"
#include "scheduler/ha/leader_election.h"
#include "scheduler/ha/leadership.h"
#include "scheduler/serve/delegated_auth.h"
#include "scheduler/serve/extender_server.h"
#include "scheduler/serve/serving_cert.h"
#include "scheduler/serve/status_server.h"
#include "scheduler/telemetry/cache_metrics.h"
#include "scheduler/telemetry/liveness.h"
#include "scheduler/telemetry/process_metrics.h"
#include "scheduler/telemetry/self_metrics.h"

namespace ms {
namespace {

// A binding must end before a standby may lead: well inside the write
// margin (scheduler/ha/leadership.h), with room for the moments between the
// binder's check and the request leaving.
absl::Duration BindTimeout(const Leadership& leadership) {
  return std::min(absl::Seconds(30), leadership.WriteMargin() * 4 / 5);
}

// Bounds the shutdown that starts now: if the process has not exited after
// `bound` (a write held up by an apiserver that no longer answers, Events
// still queued), it exits with `code` there and then. Nothing is lost by
// that: a binding cut short is read back by whichever replica leads next,
// and Events are advisory. kube-scheduler exits at once on a lost lease.
void BoundShutdown(absl::Duration bound, int code) {
  std::thread([bound, code] {
    absl::SleepFor(bound);
    LOG(ERROR) << "shutdown did not finish within " << bound
               << " (--shutdown-timeout): exiting with what is in flight";
    google::FlushLogFiles(google::GLOG_INFO);
    std::_Exit(code);
  }).detach();
}

// SIGTERM and SIGINT notify `stop`; a dedicated thread waits for them.
void HandleSignals(absl::Notification& stop) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set, &stop] {
    int sig = 0;
    sigwait(&set, &sig);
    LOG(INFO) << "received " << strsignal(sig) << ", shutting down";
    if (!stop.HasBeenNotified()) stop.Notify();
  }).detach();
}

// What Run reads of its flags, checked.
struct RunSettings {
  kube::ResponseLimits limits;
  SecureServing secure;
  bool shadow = false;
  bool leader_elect = true;
  std::string identity;
  uint64_t seed = 0;
  std::optional<KubeVersion> kube;  // --kube-version; else the cluster's
};

// Step 1: the flags Run reads, checked (InvalidArgument, the message
// naming the flag), and those that override the configuration applied to
// `config`.
absl::StatusOr<RunSettings> ReadRunFlags(Config& config) {
  for (absl::Duration d : {absl::GetFlag(FLAGS_shutdown_timeout),
                           absl::GetFlag(FLAGS_liveness_stall_timeout)}) {
    if (d <= absl::ZeroDuration()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--shutdown-timeout and --liveness-stall-timeout must be "
          "positive, got ",
          absl::FormatDuration(d)));
    }
  }
  for (auto [flag, value] :
       {std::pair<const char*, int64_t>{"--bind-workers",
                                        absl::GetFlag(FLAGS_bind_workers)},
        {"--max-bindings-in-flight",
         absl::GetFlag(FLAGS_max_bindings_in_flight)},
        {"--extender-max-node-names",
         absl::GetFlag(FLAGS_extender_max_node_names)}}) {
    if (value < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, " must be at least 1, got ", value));
    }
  }
  RunSettings out;
  if (std::string v = absl::GetFlag(FLAGS_kube_version); !v.empty()) {
    absl::StatusOr<KubeVersion> kube = ParseKubeVersion(v);
    if (!kube.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--kube-version: ", kube.status().message()));
    }
    out.kube = *kube;
  }
  ASSIGN_OR_RETURN(out.limits, ResponseLimitsFromFlags());
  ASSIGN_OR_RETURN(out.secure, SecureServingFromFlags());
  if (out.secure.extender_secure && config.extender.listen_address.empty()) {
    return absl::InvalidArgumentError(
        "--extender-secure is set but extender.listenAddress is empty (no "
        "extender port)");
  }
  if (out.secure.extender_secure && out.secure.tls.client_ca_pem.empty()) {
    LOG(WARNING) << "--extender-secure without --client-ca-file: only bearer "
                    "tokens authenticate, and kube-scheduler's extender "
                    "client cannot send one (it sends a client certificate)";
  }
  if (!absl::GetFlag(FLAGS_lease_name).empty()) {
    config.leader_election.lease_name = absl::GetFlag(FLAGS_lease_name);
  }
  if (!absl::GetFlag(FLAGS_lease_namespace).empty()) {
    config.leader_election.lease_namespace =
        absl::GetFlag(FLAGS_lease_namespace);
  }
  if (!absl::GetFlag(FLAGS_http_address).empty()) {
    config.http.listen_address = absl::GetFlag(FLAGS_http_address);
  }
  out.shadow = absl::GetFlag(FLAGS_shadow);
  out.leader_elect = absl::GetFlag(FLAGS_leader_elect) &&
                     config.leader_election.enabled && !out.shadow;
  out.identity = absl::GetFlag(FLAGS_identity);
  if (out.identity.empty()) out.identity = DefaultIdentity();
  out.seed = absl::GetFlag(FLAGS_seed);
  if (out.seed == 0) out.seed = std::random_device()();
  return out;
}

// metrics_scheduler_kube_rules_info: whose kube-scheduler rules apply.
void AddKubeRulesInfo(Registry& registry, KubeVersion kube) {
  registry.AddGauge(
      "metrics_scheduler_kube_rules_info",
      "Always 1: the Kubernetes release whose kube-scheduler rules the "
      "scheduler follows (the cluster's, or --kube-version).",
      {"release"}, [release = kube.ToString()] {
        return Registry::GaugeSamples{{{release}, 1}};
      });
}

// metrics_scheduler_build_info: the version of this build.
void AddBuildInfo(Registry& registry) {
  registry.AddGauge("metrics_scheduler_build_info",
                    "Always 1: the version of the running scheduler.",
                    {"version"}, [] {
                      return Registry::GaugeSamples{{{kVersion}, 1}};
                    });
}

// The scheduler's options: from the flags, with the bind timeout the
// leadership allows.
SchedulerOptions SchedulerOptionsOf(const RunSettings& run,
                                    absl::Duration bind_timeout,
                                    KubeVersion kube) {
  return {.identity = run.identity,
          .bind_workers = absl::GetFlag(FLAGS_bind_workers),
          .max_bindings_in_flight = absl::GetFlag(FLAGS_max_bindings_in_flight),
          .bind_timeout = bind_timeout,
          .volume_binding_timeout = absl::GetFlag(FLAGS_volume_binding_timeout),
          .seed = run.seed,
          .kube = kube};
}

// The metrics cache and what feeds it; all null when no metric has a
// query (fallback scoring only).
struct MetricsPipeline {
  std::unique_ptr<metrics::MetricsSource> source;
  std::unique_ptr<BackendQueryMetrics> queries;
  std::unique_ptr<metrics::MetricsCache> cache;
};

// Step 2: the configured backend's source and its cache, with their
// metrics in `registry`.
absl::StatusOr<MetricsPipeline> MakeMetricsPipeline(const Config& config,
                                                    kube::KubeClient& client,
                                                    Registry& registry) {
  MetricsPipeline out;
  if (QueryMetrics(config).empty()) return out;
  absl::StatusOr<std::unique_ptr<metrics::MetricsSource>> source =
      MakeSource(config, client);
  if (!source.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics backend: ", source.status().ToString()));
  }
  out.source = std::move(*source);
  out.queries =
      std::make_unique<BackendQueryMetrics>(registry, QueryMetrics(config));
  out.cache = std::make_unique<metrics::MetricsCache>(
      out.source.get(), QueryMetrics(config),
      metrics::CacheOptions{
          .refresh_timeout = config.cache.refresh_timeout,
          .on_fetch = [queries = out.queries.get()](
                          const MetricConfig& metric, absl::Duration duration,
                          const absl::Status& status) {
            queries->Observe(metric, duration, status);
          }});
  AddCacheMetrics(registry, *out.cache);
  return out;
}

// Step 3: the status endpoints, on the plain port and, with
// --secure-port, over HTTPS with /metrics guarded by the apiserver's
// reviews (then served there only, as kube-scheduler does: the plain port
// keeps the probes the kubelet calls).
absl::Status ServeStatus(StatusServer& status, const Config& config,
                         const RunSettings& run, DelegatedAuth& auth) {
  const SecureServing& secure = run.secure;
  const bool metrics_on_secure_port = secure.port != 0;
  absl::StatusOr<int> port =
      status.Start(config.http.listen_address,
                   metrics_on_secure_port ? PlainPort::ProbesOnly(secure.port)
                                          : PlainPort::All());
  if (!port.ok()) return port.status();
  LOG(INFO) << "metrics-scheduler " << run.identity << ": serving /livez, "
            << "/healthz, /readyz"
            << (metrics_on_secure_port ? "" : " and /metrics") << " on port "
            << *port;
  if (secure.port == 0) return absl::OkStatus();
  absl::StatusOr<int> secure_port =
      status.StartSecure(secure.address, secure.tls, auth);
  if (!secure_port.ok()) {
    return absl::Status(
        secure_port.status().code(),
        absl::StrCat("--secure-port: ", secure_port.status().message()));
  }
  LOG(INFO) << "serving HTTPS on " << secure.address
            << ": /metrics for identities allowed to get it, /livez, "
               "/healthz and /readyz to anyone";
  return absl::OkStatus();
}

// Step 4: kube-scheduler's extender calls, answered by every replica;
// null when extender.listenAddress is empty.
absl::StatusOr<std::unique_ptr<ExtenderServer>> ServeExtender(
    const Config& config, const RunSettings& run, Scheduler& scheduler,
    metrics::MetricsCache* cache, Registry& registry, DelegatedAuth& auth) {
  if (config.extender.listen_address.empty()) return nullptr;
  auto extender = std::make_unique<ExtenderServer>(
      scheduler.state(), scheduler.scoring(), cache, registry,
      static_cast<size_t>(absl::GetFlag(FLAGS_extender_max_node_names)));
  const bool secure = run.secure.extender_secure;
  absl::StatusOr<int> port =
      secure ? extender->StartSecure(config.extender.listen_address,
                                     run.secure.tls, auth)
             : extender->Start(config.extender.listen_address);
  if (!port.ok()) {
    return absl::Status(port.status().code(),
                        absl::StrCat("extender: ", port.status().message()));
  }
  LOG(INFO) << "serving kube-scheduler's extender protocol (POST /filter, "
               "/prioritize) on port "
            << *port
            << (secure ? " over HTTPS, for identities allowed to post them"
                       : "");
  return extender;
}

// Step 5: every informer started and listed (standbys keep theirs warm,
// so a takeover schedules at once), unless a stop comes first.
void StartWatching(ClusterWatch& watch, metrics::MetricsCache* cache,
                   const absl::Notification& stop) {
  watch.Start();
  if (cache != nullptr) cache->Start();
  while (!watch.Synced(absl::Seconds(1))) {
    if (stop.HasBeenNotified()) return;
    LOG(INFO) << "waiting for informers to sync";
  }
  // The first lists held every object in full at once; give the pages
  // they left free back to the system.
  malloc_trim(0);
}

// The process's life after start: the scheduling loop (on the leader
// only; never in shadow mode) until `stop`, then an orderly stop: stop
// taking pods, let in-flight bindings finish, hand the lease over.
class Lifecycle {
 public:
  explicit Lifecycle(absl::Notification& stop) : stop_(stop) {}

  LeaderElector::Callbacks ElectorCallbacks() {
    return {.on_started_leading = [this] { started_.Notify(); },
            .on_stopped_leading =
                [this] {
                  exit_code_.store(kExitFailure);
                  if (!stop_.HasBeenNotified()) stop_.Notify();
                }};
  }

  // Step 6: schedules until stopped; returns the exit code.
  int Schedule(const Config& config, const RunSettings& run,
               Scheduler& scheduler, LeaderElector& elector,
               metrics::MetricsCache* cache) {
    std::thread scheduling;
    if (!stop_.HasBeenNotified() && !run.shadow) {
      if (run.leader_elect) {
        LOG(INFO) << "campaigning for lease "
                  << config.leader_election.lease_namespace << "/"
                  << config.leader_election.lease_name;
        scheduling = std::thread([&] {
          started_.WaitForNotification();
          if (!stop_.HasBeenNotified()) scheduler.Run();
        });
        elector.Run(stop_);
      } else {
        scheduling = std::thread([&] { scheduler.Run(); });
      }
    }
    stop_.WaitForNotification();
    BoundShutdown(absl::GetFlag(FLAGS_shutdown_timeout), exit_code_.load());
    scheduler.Stop();
    if (!started_.HasBeenNotified()) started_.Notify();
    if (scheduling.joinable()) scheduling.join();
    if (run.leader_elect) elector.Release();
    if (cache != nullptr) cache->Stop();
    return exit_code_.load();
  }

 private:
  absl::Notification& stop_;
  absl::Notification started_;  // leading, or stopping
  std::atomic<int> exit_code_{kExitOk};
};

int Run(Config config) {
  LOG(INFO) << "metrics-scheduler " << kVersion;
  absl::StatusOr<RunSettings> run = ReadRunFlags(config);
  if (!run.ok()) {
    LOG(ERROR) << run.status().message();
    return kExitUsage;
  }
  absl::StatusOr<kube::ClusterConfig> cluster = ClusterConfigFromFlags();
  if (!cluster.ok()) {
    LOG(ERROR) << "cannot reach the cluster: " << cluster.status();
    return kExitUsage;
  }
  if (cluster->tls.insecure_skip_verify) {
    LOG(WARNING) << "insecure-skip-tls-verify is set in the kubeconfig: the "
                    "apiserver's TLS certificate is not verified";
  }
  for (const std::string& warning : ConfigWarnings(config)) {
    LOG(WARNING) << warning;
  }
  kube::KubeClient client(*cluster, "metrics-scheduler/" + run->identity,
                          run->limits);
  Registry registry;
  AddBuildInfo(registry);
  AddProcessMetrics(registry);
  absl::StatusOr<MetricsPipeline> pipeline =
      MakeMetricsPipeline(config, client, registry);
  if (!pipeline.ok()) {
    LOG(ERROR) << pipeline.status().message();
    return kExitUsage;
  }
  metrics::MetricsCache* cache = pipeline->cache.get();

  absl::Notification stop;
  HandleSignals(stop);
  absl::StatusOr<KubeVersion> kube = KubeVersionOf(run->kube, client, stop);
  if (!kube.ok()) {  // stopped before the apiserver answered
    LOG(INFO) << kube.status().message();
    return kExitOk;
  }
  AddKubeRulesInfo(registry, *kube);
  Lifecycle lifecycle(stop);
  KubeLeaseStore lease_store(client);
  KubeSchedulerApi api(client);
  // The elector exists from the start, so that /metrics may ask it; it
  // campaigns once the informers have synced.
  LeaderElector elector(
      lease_store, RealClock::Get(),
      LeaderElectionOptions{
          .lease_name = config.leader_election.lease_name,
          .lease_namespace = config.leader_election.lease_namespace,
          .identity = run->identity,
          .lease_duration = config.leader_election.lease_duration,
          .renew_deadline = config.leader_election.renew_deadline,
          .retry_period = config.leader_election.retry_period},
      lifecycle.ElectorCallbacks());
  AlwaysLeader always;
  Leadership& leadership =
      run->leader_elect ? static_cast<Leadership&>(elector) : always;
  absl::Duration bind_timeout = BindTimeout(leadership);
  LOG(INFO) << "bindings time out after " << bind_timeout;
  LivenessMonitor liveness(RealClock::Get(),
                           absl::GetFlag(FLAGS_liveness_stall_timeout));
  Scheduler scheduler(config, SchedulerOptionsOf(*run, bind_timeout, *kube),
                      api, cache, RealClock::Get(), registry, leadership,
                      &liveness);
  // Shadow mode: the pending pods are the watched scheduler's, judged when
  // they are seen bound; the scheduling loop never runs.
  std::optional<Shadow> shadow;
  if (run->shadow) {
    shadow.emplace(absl::GetFlag(FLAGS_shadow_of), scheduler.state(),
                   scheduler.scoring(), cache, registry);
    LOG(INFO) << "shadow mode: judging the pods of " << shadow->watched()
              << "; binding nothing";
  }
  ClusterWatch watch(client, config, scheduler,
                     shadow.has_value() ? &*shadow : nullptr, liveness,
                     registry);

  // Declared before the servers that use it, so it outlives them.
  KubeAccessReviewer reviewer(client);
  DelegatedAuth auth(reviewer, RealClock::Get());
  StatusServer status(
      registry, [&] { return watch.Synced(absl::ZeroDuration()); },
      [&] { return liveness.Stalled(); });
  if (absl::Status served = ServeStatus(status, config, *run, auth);
      !served.ok()) {
    LOG(ERROR) << served;
    return kExitFailure;
  }
  absl::StatusOr<std::unique_ptr<ExtenderServer>> extender =
      ServeExtender(config, *run, scheduler, cache, registry, auth);
  if (!extender.ok()) {
    LOG(ERROR) << extender.status();
    return kExitFailure;
  }

  StartWatching(watch, cache, stop);
  const int exit_code =
      lifecycle.Schedule(config, *run, scheduler, elector, cache);
  watch.Stop();
  if (*extender != nullptr) (*extender)->Stop();
  status.Stop();
  LOG(INFO) << "stopped";
  return exit_code;
}

}  // namespace
}  // namespace ms

int main(int argc, char** argv) {
  // The process holds the apiserver and metrics tokens in memory: no core
  // dump may write them to disk, and no other process of the same user may
  // attach to read them.
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  // glibc gives each busy thread an arena of its own (up to 8 per core);
  // with ~25 threads that is tens of megabytes of fragmentation for no
  // gain: two arenas serve the binders and informers as fast.
  mallopt(M_ARENA_MAX, 2);
  // Blocks of 256 KiB and more (a list page's body and parser buffers,
  // megabytes each) come from mmap and go back to the system when freed.
  // Left to itself glibc raises this bound to the largest block freed, and
  // serves the next large blocks from the heap, where they stay as
  // fragmentation: with 5,000 nodes and 20,000 pods, 6 MB of RSS.
  mallopt(M_MMAP_THRESHOLD, 256 << 10);
  // Debian's Abseil is built with absl::Mutex's deadlock detection on: a
  // lock-order graph updated on every lock, a few per cent of the CPU per
  // pod. The tests keep it; the scheduler does without.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  if (ms::PrintHelpIfAsked(argc, argv)) return ms::kExitOk;
  if (ms::PrintVersionIfAsked(argc, argv)) return ms::kExitOk;
  ms::DashesToUnderscores(argc, argv);
  std::vector<char*> args = ms::TakeVerbosity(argc, argv);
  if (ms::FlagCheck check = ms::CheckFlags(args); !check.error.empty()) {
    std::cerr << "metrics-scheduler: " << check.error << "\n"
              << ms::UsageOf(check.command) << "\n";
    return ms::kExitUsage;
  }
  absl::SetProgramUsageMessage(ms::kUsage);
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_help_flags = [](absl::string_view file) {
    return absl::EndsWith(file, "scheduler/cmd/flags.cc");
  };
  absl::SetFlagsUsageConfig(usage_config);
  std::vector<char*> positional =
      absl::ParseCommandLine(static_cast<int>(args.size()), args.data());
  ms::InitLogging(argv[0], absl::GetFlag(FLAGS_logging_format));

  std::vector<char*> rest(positional.begin() + 1, positional.end());
  if (!rest.empty()) {
    std::string command = rest[0];
    rest.erase(rest.begin());
    if (command == "validate-config") return ms::ValidateConfig(rest);
    if (command == "explain") return ms::ExplainCommand(rest);
    if (command == "probe") return ms::ProbeCommand(rest);
    std::cerr << "metrics-scheduler: unknown command \"" << command << "\"\n"
              << ms::kRunUsage << "\n";
    return ms::kExitUsage;
  }

  ms::Config config;
  std::string path = absl::GetFlag(FLAGS_config);
  if (!path.empty()) {
    absl::StatusOr<ms::Config> loaded =
        ms::LoadConfigFile(path, ms::FileChecks());
    if (!loaded.ok()) {
      std::cerr << loaded.status().message() << "\n";
      return ms::kExitUsage;
    }
    config = *std::move(loaded);
  }
  return ms::Run(std::move(config));
}
