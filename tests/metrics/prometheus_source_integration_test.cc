// PrometheusSource and MetricsCache against Debian's real Prometheus,
// started on a loopback port and fed exact values by remote write.
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/cache.h"
#include "metrics/prometheus_source.h"
#include "tests/metrics/source_test_util.h"
#include "tests/testing/certificates.h"
#include "tests/testing/prometheus.h"
#include "tests/testing/tcp_proxy.h"
#include "tests/testing/testenv.h"

namespace ms::metrics {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using ms::testing::PrometheusServer;
using ms::testing::RemoteSeries;

MetricConfig Metric(const std::string& name, const std::string& query) {
  MetricConfig m;
  m.name = name;
  m.query = query;
  m.join.label = "node";
  m.ttl = absl::Seconds(15);
  m.max_staleness = absl::Seconds(60);
  return m;
}

std::unique_ptr<PrometheusSource> SourceFor(const std::string& url,
                                            absl::Duration timeout = absl::Seconds(5)) {
  BackendConfig backend;
  backend.url = url;
  backend.timeout = timeout;
  absl::StatusOr<std::unique_ptr<PrometheusSource>> s = PrometheusSource::Create(backend);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

// One Prometheus for the whole suite (tests use metric names of their own);
// samples are visible for one minute after their timestamp.
class PrometheusIntegrationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    PrometheusServer::Options options;
    options.lookback_delta = absl::Minutes(1);
    absl::StatusOr<std::unique_ptr<PrometheusServer>> s = PrometheusServer::Start(options);
    ASSERT_TRUE(s.ok()) << s.status();
    prom_ = s->release();
  }
  static void TearDownTestSuite() {
    delete prom_;
    prom_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(prom_, nullptr);
    source_ = SourceFor(prom_->url());
  }

  static PrometheusServer* prom_;
  std::unique_ptr<PrometheusSource> source_;
  NodeSet nodes_{{{"n1", {"10.0.0.7"}}, {"n2", {"10.0.0.8"}}, {"n3", {"10.0.0.9"}}}};
};

PrometheusServer* PrometheusIntegrationTest::prom_ = nullptr;

TEST_F(PrometheusIntegrationTest, ValuesAppearAndChange) {
  const absl::Time t = absl::Now() - absl::Seconds(10);
  ASSERT_TRUE(prom_->Write({{"appear_cpu", {{"node", "n1"}}, 0.25, t},
                            {"appear_cpu", {{"node", "n2"}}, 0.75, t}})
                  .ok());
  const MetricConfig metric = Metric("cpu", "appear_cpu");
  absl::StatusOr<FetchResult> r = source_->Fetch(metric, nodes_, absl::Seconds(5));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ValuesOf(*r), ElementsAre(Pair("n1", 0.25), Pair("n2", 0.75)));
  EXPECT_EQ(r->series, 2);
  EXPECT_EQ(r->unmatched, 0);

  ASSERT_TRUE(prom_->Write({{"appear_cpu", {{"node", "n1"}}, 0.5, t + absl::Seconds(5)},
                            {"appear_cpu", {{"node", "n3"}}, 1, t + absl::Seconds(5)}})
                  .ok());
  r = source_->Fetch(metric, nodes_, absl::Seconds(5));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ValuesOf(*r),
              ElementsAre(Pair("n1", 0.5), Pair("n2", 0.75), Pair("n3", 1)));
  EXPECT_EQ(source_->requests_sent(), 2);  // one request per fetch
}

TEST_F(PrometheusIntegrationTest, StaleSeriesAreNotReturnedAndShowAsMissing) {
  const absl::Time now = absl::Now();
  ASSERT_TRUE(prom_->Write({{"stale_cpu", {{"node", "n1"}}, 1, now},
                            {"stale_cpu", {{"node", "n2"}}, 2, now - absl::Minutes(2)}})
                  .ok());
  MetricsCache cache(source_.get(), {Metric("cpu", "stale_cpu")});
  cache.SetNodes({{"n1", {}}, {"n2", {}}});
  cache.RefreshAll();
  EXPECT_THAT(cache.Snapshot()->metrics[0].by_node.size(), 1u);
  MetricStats stats = cache.Stats()[0];
  EXPECT_EQ(stats.nodes_with_data, 1);
  EXPECT_THAT(stats.nodes_missing, ElementsAre("n2"));
}

TEST_F(PrometheusIntegrationTest, NaNAndInfinityArriveAsSent) {
  const absl::Time t = absl::Now();
  ASSERT_TRUE(prom_->Write({{"nan_cpu", {{"node", "n1"}}, std::nan(""), t},
                            {"nan_cpu", {{"node", "n2"}}, INFINITY, t},
                            {"nan_cpu", {{"node", "n3"}}, -INFINITY, t}})
                  .ok());
  absl::StatusOr<FetchResult> r =
      source_->Fetch(Metric("cpu", "nan_cpu"), nodes_, absl::Seconds(5));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->by_node.size(), 3u);
  EXPECT_TRUE(std::isnan(r->by_node.at("n1").value));
  EXPECT_EQ(r->by_node.at("n2").value, std::numeric_limits<double>::infinity());
  EXPECT_EQ(r->by_node.at("n3").value, -std::numeric_limits<double>::infinity());
}

TEST_F(PrometheusIntegrationTest, AQueryMatchingNothingLeavesEveryNodeMissing) {
  MetricsCache cache(source_.get(), {Metric("cpu", "no_such_metric_anywhere")});
  cache.SetNodes({{"n1", {}}, {"n2", {}}});
  cache.RefreshAll();
  MetricStats stats = cache.Stats()[0];
  EXPECT_TRUE(stats.last_status.ok()) << stats.last_status;
  EXPECT_EQ(stats.refresh_successes, 1);
  EXPECT_EQ(stats.series, 0);
  EXPECT_EQ(stats.nodes_known, 2);
  EXPECT_EQ(stats.nodes_with_data, 0);
  EXPECT_THAT(stats.nodes_missing, ElementsAre("n1", "n2"));
}

TEST_F(PrometheusIntegrationTest, BadQueriesAreInvalidArgumentWithTheServersMessage) {
  struct Case {
    std::string query;
    std::string message_part;
  };
  const std::vector<Case> cases = {
      {"sum(rate(x[5m])",
       "metric cpu: query failed (HTTP 400, bad_data): invalid parameter "
       "\"query\": 1:16: parse error: unclosed left parenthesis"},
      {"1 + 1", "metric cpu: the query returned a scalar result"},
      {"\"text\"", "metric cpu: the query returned a string result"},
      {"up[5m]", "metric cpu: the query returned a matrix result"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.query);
    absl::StatusOr<FetchResult> r = source_->Fetch(Metric("cpu", c.query), nodes_,
                                                  absl::Seconds(5));
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.message_part));
  }
}

TEST_F(PrometheusIntegrationTest, InstanceAddressJoinsToTheNodeWithThatInternalIp) {
  ASSERT_TRUE(prom_->Write({{"inst_load", {{"instance", "10.0.0.7:9100"}, {"job", "node"}}, 3},
                            {"inst_load", {{"instance", "10.1.1.1:9100"}, {"job", "node"}}, 4}})
                  .ok());
  MetricConfig metric = Metric("load", "inst_load");
  metric.join = {.label = "instance", .match = JoinMatch::kAddress};
  absl::StatusOr<FetchResult> r = source_->Fetch(metric, nodes_, absl::Seconds(5));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ValuesOf(*r), ElementsAre(Pair("n1", 3)));
  EXPECT_EQ(r->unmatched, 1);
  EXPECT_THAT(r->unmatched_examples,
              ElementsAre(R"({__name__="inst_load", instance="10.1.1.1:9100", job="node"})"));
}

// A metric without `join` over node-exporter's series: the cache's fetch
// finds that `instance` holds the nodes' addresses (its `nodename`, the
// machines' host names, names no node).
TEST_F(PrometheusIntegrationTest, AutomaticJoinFindsNodeExporterInstances) {
  const std::vector<RemoteSeries> series = {{"auto_load1",
                                             {{"instance", "10.0.0.7:9100"},
                                              {"job", "node-exporter"},
                                              {"nodename", "ip-10-0-0-7"}},
                                             0.5},
                                            {"auto_load1",
                                             {{"instance", "10.0.0.8:9100"},
                                              {"job", "node-exporter"},
                                              {"nodename", "ip-10-0-0-8"}},
                                             1.5}};
  ASSERT_TRUE(prom_->Write(series).ok());
  MetricConfig metric = Metric("load", "auto_load1");
  metric.join.automatic = true;
  MetricsCache cache(source_.get(), {metric});
  cache.SetNodes(nodes_.nodes());
  cache.RefreshAll();
  MetricStats stats = cache.Stats()[0];
  EXPECT_TRUE(stats.last_status.ok()) << stats.last_status;
  EXPECT_EQ(stats.detected_join, "instance (address)");
  EXPECT_EQ(stats.series, 2);
  EXPECT_EQ(stats.unmatched, 0);
  EXPECT_THAT(stats.nodes_missing, ElementsAre("n3"));
  std::map<std::string, double> values;
  for (const auto& [node, sample] : cache.Snapshot()->metrics[0].by_node) {
    values[node] = sample.value;
  }
  EXPECT_THAT(values, ElementsAre(Pair("n1", 0.5), Pair("n2", 1.5)));
}

TEST_F(PrometheusIntegrationTest, APerPodQueryKeysEachSeriesByNamespaceAndPod) {
  const absl::Time t = absl::Now() - absl::Seconds(5);
  ASSERT_TRUE(
      prom_
          ->Write(
              {{"pod_cpu", {{"namespace", "shop"}, {"pod", "web-1"}}, 1.5, t},
               {"pod_cpu", {{"namespace", "shop"}, {"pod", "web-2"}}, 0.5, t},
               {"pod_cpu", {{"namespace", "batch"}, {"pod", "web-1"}}, 2, t},
               {"pod_cpu", {{"pod", "orphan"}}, 9, t}})
          .ok());
  MetricConfig metric = Metric("cpu", "unused");
  metric.estimate.siblings_query = "sum by (namespace, pod) (pod_cpu)";
  absl::StatusOr<PodFetchResult> r =
      source_->FetchPods(metric, absl::Seconds(5));
  ASSERT_TRUE(r.ok()) << r.status();
  std::map<std::string, double> values;
  for (const auto& [key, sample] : r->by_pod) values[key] = sample.value;
  EXPECT_THAT(values,
              ElementsAre(Pair("batch/web-1", 2), Pair("shop/web-1", 1.5),
                          Pair("shop/web-2", 0.5)));
  EXPECT_EQ(r->series, 4);
  EXPECT_EQ(r->unlabelled, 1);  // no namespace
  // Evaluated now, so sampled after the values were written.
  EXPECT_GE(r->by_pod.at("shop/web-1").time_ms, absl::ToUnixMillis(t));
}

TEST_F(PrometheusIntegrationTest, ASlowBackendGivesDeadlineExceededOnTime) {
  absl::StatusOr<std::unique_ptr<ms::testing::TcpProxy>> proxy =
      ms::testing::TcpProxy::Start(prom_->port());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  (*proxy)->SetDelay(absl::Seconds(2));
  const absl::Duration timeout = absl::Milliseconds(500);
  auto source = SourceFor(absl::StrCat("http://127.0.0.1:", (*proxy)->port()), timeout);
  const absl::Time start = absl::Now();
  absl::StatusOr<FetchResult> r =
      source->Fetch(Metric("cpu", "up"), nodes_, absl::Seconds(5));
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
  EXPECT_LT(took, 3 * timeout);
}

TEST_F(PrometheusIntegrationTest, BackgroundCacheFollowsTheValues) {
  ASSERT_TRUE(prom_->Write({{"bg_cpu", {{"node", "n1"}}, 1}}).ok());
  MetricConfig metric = Metric("cpu", "bg_cpu");
  metric.ttl = absl::Milliseconds(100);
  MetricsCache cache(source_.get(), {metric});
  cache.SetNodes({{"n1", {}}});
  cache.Start();
  ASSERT_TRUE(cache.WaitForFirstRefresh(absl::Seconds(10)));
  EXPECT_EQ(cache.Snapshot()->metrics[0].by_node.at("n1").value, 1);
  ASSERT_TRUE(prom_->Write({{"bg_cpu", {{"node", "n1"}}, 2}}).ok());
  EXPECT_TRUE(ms::testing::WaitFor([&] {
    auto snap = cache.Snapshot();
    auto it = snap->metrics[0].by_node.find("n1");
    return it != snap->metrics[0].by_node.end() && it->second.value == 2;
  }));
  cache.Stop();
}

// Prometheus stopped mid-test: Unavailable within the timeout, the last good
// values kept until maxStaleness, then missing; back after a restart.
TEST(PrometheusOutageTest, CacheKeepsLastGoodValuesUntilMaxStaleness) {
  absl::StatusOr<std::unique_ptr<PrometheusServer>> started = PrometheusServer::Start();
  ASSERT_TRUE(started.ok()) << started.status();
  PrometheusServer& prom = **started;
  ASSERT_TRUE(prom.Write({{"outage_cpu", {{"node", "n1"}}, 0.5},
                          {"outage_cpu", {{"node", "n2"}}, 0.6},
                          {"outage_lat", {{"node", "n1"}}, 7}})
                  .ok());
  const absl::Duration timeout = absl::Seconds(2);
  auto source = SourceFor(prom.url(), timeout);
  FakeClock clock(absl::Now());
  MetricsCache cache(source.get(),
                     {Metric("cpu", "outage_cpu"), Metric("lat", "outage_lat")},
                     {.refresh_timeout = timeout, .clock = &clock});
  cache.SetNodes({{"n1", {}}, {"n2", {}}});
  cache.RefreshAll();
  ASSERT_EQ(cache.Stats()[0].nodes_with_data, 2);

  ASSERT_TRUE(prom.Stop().ok());
  absl::Time start = absl::Now();
  absl::StatusOr<FetchResult> direct =
      source->Fetch(Metric("cpu", "outage_cpu"), NodeSet(), timeout);
  EXPECT_EQ(direct.status().code(), absl::StatusCode::kUnavailable) << direct.status();
  EXPECT_LT(absl::Now() - start, timeout);

  clock.Advance(absl::Seconds(15));
  cache.RefreshAll();
  std::vector<MetricStats> stats = cache.Stats();
  for (const MetricStats& s : stats) {
    EXPECT_EQ(s.last_status.code(), absl::StatusCode::kUnavailable) << s.name;
    EXPECT_EQ(s.refresh_failures, 1);
  }
  EXPECT_EQ(stats[0].nodes_with_data, 2);
  EXPECT_EQ(stats[1].nodes_with_data, 1);
  auto snap = cache.Snapshot();
  EXPECT_EQ(snap->metrics[0].by_node.at("n1").value, 0.5);
  EXPECT_THAT(snap->metrics[0].last_error, HasSubstr("UNAVAILABLE: metric cpu: "));

  clock.Advance(absl::Seconds(50));  // 65 s after the samples: stale
  cache.RefreshAll();
  stats = cache.Stats();
  EXPECT_EQ(stats[0].nodes_with_data, 0);
  EXPECT_THAT(stats[0].nodes_missing, ElementsAre("n1", "n2"));
  EXPECT_THAT(cache.Snapshot()->metrics[0].by_node, IsEmpty());

  ASSERT_TRUE(prom.Restart().ok());
  clock.Set(absl::Now());
  cache.RefreshAll();
  stats = cache.Stats();
  EXPECT_TRUE(stats[0].last_status.ok()) << stats[0].last_status;
  EXPECT_EQ(stats[0].nodes_with_data, 2);
  EXPECT_EQ(cache.Snapshot()->metrics[0].by_node.at("n2").value, 0.6);
}

// Prometheus behind its own --web.config.file, as operators secure it.
class SecuredPrometheusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "/ms-secured-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    absl::StatusOr<ms::testing::TestCertificates> certs =
        ms::testing::MakeTestCertificates(dir_);
    ASSERT_TRUE(certs.ok()) << certs.status();
    certs_ = *certs;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Starts Prometheus with `web_config` and writes `secured_up{node="n1"}`
  // through the same door.
  void Start(PrometheusServer::Options options) {
    absl::StatusOr<std::unique_ptr<PrometheusServer>> s =
        PrometheusServer::Start(options);
    ASSERT_TRUE(s.ok()) << s.status();
    prom_ = std::move(*s);
    ASSERT_TRUE(prom_->Write({{"secured_up", {{"node", "n1"}}, 1}}).ok());
  }

  std::unique_ptr<PrometheusSource> Source(const BackendConfig& backend) {
    absl::StatusOr<std::unique_ptr<PrometheusSource>> s =
        PrometheusSource::Create(backend);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? std::move(*s) : nullptr;
  }

  absl::StatusOr<FetchResult> Fetch(PrometheusSource& source) {
    return source.Fetch(Metric("up", "secured_up"), nodes_, absl::Seconds(5));
  }

  std::string dir_;
  ms::testing::TestCertificates certs_;
  std::unique_ptr<PrometheusServer> prom_;
  NodeSet nodes_{{{"n1", {}}}};
};

// TLS that requires a client certificate from the CA: the source presents
// certFile and keyFile, and when they are rotated (renamed over, as the
// kubelet swaps a mounted Secret) it presents the new pair without a
// restart.
TEST_F(SecuredPrometheusTest, AClientCertificateIsPresentedAndRereadOnRotation) {
  Start({.web_config = absl::StrCat("tls_server_config:\n  cert_file: ",
                                    certs_.server_cert, "\n  key_file: ",
                                    certs_.server_key,
                                    "\n  client_auth_type: "
                                    "RequireAndVerifyClientCert\n"
                                    "  client_ca_file: ",
                                    certs_.ca, "\n"),
         .https = true,
         .client_tls = {.ca_file = certs_.ca,
                        .client_cert_file = certs_.client_cert,
                        .client_key_file = certs_.client_key}});
  ASSERT_THAT(prom_->url(), ::testing::StartsWith("https://"));

  BackendConfig backend;
  backend.url = prom_->url();
  backend.ca_file = certs_.ca;
  // No certificate: refused.
  std::unique_ptr<PrometheusSource> without = Source(backend);
  ASSERT_NE(without, nullptr);
  EXPECT_FALSE(Fetch(*without).ok());

  // A certificate the server does not trust, then the right one.
  const std::string cert = dir_ + "/mounted.crt";
  const std::string key = dir_ + "/mounted.key";
  auto mount = [&](const std::string& from_cert, const std::string& from_key) {
    std::filesystem::copy_file(from_cert, cert + ".new",
                               std::filesystem::copy_options::overwrite_existing);
    std::filesystem::copy_file(from_key, key + ".new",
                               std::filesystem::copy_options::overwrite_existing);
    std::filesystem::rename(cert + ".new", cert);
    std::filesystem::rename(key + ".new", key);
  };
  mount(certs_.stranger_cert, certs_.stranger_key);
  backend.cert_file = cert;
  backend.key_file = key;
  std::unique_ptr<PrometheusSource> source = Source(backend);
  ASSERT_NE(source, nullptr);
  absl::StatusOr<FetchResult> refused = Fetch(*source);
  EXPECT_FALSE(refused.ok());

  mount(certs_.client_cert, certs_.client_key);
  absl::StatusOr<FetchResult> r;
  ASSERT_TRUE(ms::testing::WaitFor([&] {
    r = Fetch(*source);
    return r.ok();
  })) << r.status();
  EXPECT_THAT(ValuesOf(*r), ElementsAre(Pair("n1", 1)));
}

// Basic auth as Prometheus checks it (a bcrypt hash in web.config.file):
// the right password is let in, a wrong one is a 401 the error names.
TEST_F(SecuredPrometheusTest, BasicAuth) {
  // bcrypt of "metrics-test-password", cost 10.
  Start({.web_config = "basic_auth_users:\n  alice: "
                       "$2a$10$/snBPkfpE0iWfm8yiDsVN.oGGM2Z/kvrbFyFM/"
                       "a0OQXxXGeX6t0Um\n",
         .basic_auth = "alice:metrics-test-password"});
  TempFile password("metrics-test-password\n");
  BackendConfig backend;
  backend.url = prom_->url();
  backend.basic_auth = {.username = "alice", .password_file = password.path()};
  std::unique_ptr<PrometheusSource> source = Source(backend);
  ASSERT_NE(source, nullptr);
  absl::StatusOr<FetchResult> r = Fetch(*source);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(ValuesOf(*r), ElementsAre(Pair("n1", 1)));

  TempFile wrong("not-the-password\n");
  backend.basic_auth.password_file = wrong.path();
  std::unique_ptr<PrometheusSource> refused = Source(backend);
  ASSERT_NE(refused, nullptr);
  r = Fetch(*refused);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kPermissionDenied)
      << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("401"));
}

}  // namespace
}  // namespace ms::metrics
