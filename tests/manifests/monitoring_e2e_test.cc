// manifests/monitoring/ against the real thing: a Prometheus scraping a
// running scheduler (build/metrics-scheduler on the local control plane)
// that has bound pods and failed one, the way the shipped ServiceMonitor
// says: its secure port (as manifests/base runs it), over https without
// verifying the self-signed certificate, with the bearer token of a
// ServiceAccount that metrics-reader-binding.yaml binds to the
// metrics-reader ClusterRole.
//
// - `promtool check rules` accepts the PrometheusRule's groups;
// - every rule expression, every dashboard panel query and every dashboard
//   variable query returns data, and so does every series selector in
//   them, and every alternative of their regex matchers alone
//   (`queue=~"unschedulable|backoff"`: both queues): a misspelt metric
//   name, label or label value returns nothing and fails here.
//
// An alert's expression is empty while the scheduler is healthy, which
// would prove nothing. So each is evaluated as a `bool` comparison
// (`x > 0` becomes `x > bool 0`): it returns 0 or 1 for every series its
// left side has, that is whenever the series it reads exist. An `or`
// branch that always has data (`absent(...)`) could still hide a
// misspelt name on the left; the check of each selector alone catches it.
//
// The dashboard's variables are those of a real install, substituted as
// Grafana does: $job and $namespace by the values the scrape gives the
// series (the ServiceMonitor's: job metrics-scheduler, namespace
// metrics-scheduler), $__rate_interval by 1m.

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "simdjson.h"
#include "tests/manifests/manifest_checks.h"
#include "tests/testing/command.h"
#include "tests/testing/paths.h"
#include "tests/testing/prometheus.h"
#include "tests/testing/scheduler_process.h"
#include "tests/testing/testenv.h"
#include "yaml-cpp/yaml.h"

namespace ms {
namespace {

using ::ms::testing::PrometheusServer;
using ::ms::testing::CommandResult;
using ::ms::testing::ReadFileOrDie;
using ::ms::testing::RunCommandLine;
using ::ms::testing::SchedulerProcess;
using ::ms::testing::SourceDir;
using ::ms::testing::SchedulerProcesses;
using ::ms::testing::Testenv;
using ::ms::testing::WaitFor;

// The job and namespace the ServiceMonitor's scrape gives the series, as
// manifests/monitoring/prometheusrule.yaml selects them.
constexpr char kJob[] = "metrics-scheduler";
constexpr char kNamespace[] = "metrics-scheduler";

std::string Monitoring(const std::string& name) {
  return absl::StrCat(SourceDir(), "/manifests/monitoring/", name);
}

// ---------------------------------------------------------------------------
// Just enough of PromQL's lexer for the expressions of manifests/monitoring.

bool IsIdentStart(char c) {
  return absl::ascii_isalpha(c) || c == '_' || c == ':';
}
bool IsIdent(char c) { return IsIdentStart(c) || absl::ascii_isdigit(c); }

// The index just past the quoted string that starts at `at`.
size_t SkipString(const std::string& expr, size_t at) {
  const char quote = expr[at];
  size_t i = at + 1;
  while (i < expr.size() && expr[i] != quote) i += expr[i] == '\\' ? 2 : 1;
  return i + 1;
}

// The index just past the bracket that closes the one at `at` (`{`, `(`,
// `[`), strings skipped.
size_t SkipGroup(const std::string& expr, size_t at) {
  const char open = expr[at];
  const char close = open == '{' ? '}' : open == '(' ? ')' : ']';
  int depth = 0;
  for (size_t i = at; i < expr.size();) {
    const char c = expr[i];
    if (c == '"' || c == '\'' || c == '`') {
      i = SkipString(expr, i);
      continue;
    }
    if (c == open) ++depth;
    if (c == close && --depth == 0) return i + 1;
    ++i;
  }
  return expr.size();
}

size_t SkipSpaces(const std::string& expr, size_t i) {
  while (i < expr.size() && absl::ascii_isspace(expr[i])) ++i;
  return i;
}

// Series selectors of `expr`: each metric name with its matchers, as
// written (`up{job="x"}`). Functions, aggregations, keywords, grouping
// labels, strings, ranges and numbers are not selectors.
std::vector<std::string> Selectors(const std::string& expr) {
  static const std::set<std::string> kKeywords = {
      "sum",    "min",    "max",    "avg",      "group",        "stddev",
      "stdvar", "count",  "count_values", "bottomk", "topk",   "quantile",
      "and",    "or",     "unless", "bool",     "offset",       "inf",
      "nan",    "by",     "without", "on",      "ignoring",     "group_left",
      "group_right"};
  static const std::set<std::string> kGrouping = {
      "by", "without", "on", "ignoring", "group_left", "group_right"};
  std::vector<std::string> selectors;
  for (size_t i = 0; i < expr.size();) {
    const char c = expr[i];
    if (c == '"' || c == '\'' || c == '`') {
      i = SkipString(expr, i);
    } else if (c == '[' || c == '{') {
      i = SkipGroup(expr, i);
    } else if (absl::ascii_isdigit(c) || c == '.') {
      while (i < expr.size() && (IsIdent(expr[i]) || expr[i] == '.')) ++i;
    } else if (IsIdentStart(c)) {
      size_t end = i;
      while (end < expr.size() && IsIdent(expr[end])) ++end;
      const std::string word = expr.substr(i, end - i);
      const size_t next = SkipSpaces(expr, end);
      const bool call = next < expr.size() && expr[next] == '(';
      if (kGrouping.count(word) && call) {
        i = SkipGroup(expr, next);  // by (le, metric): labels, not metrics
      } else if (call || kKeywords.count(word)) {
        i = end;
      } else if (next < expr.size() && expr[next] == '{') {
        i = SkipGroup(expr, next);
        selectors.push_back(word + expr.substr(next, i - next));
      } else {
        selectors.push_back(word);
        i = end;
      }
    } else {
      ++i;
    }
  }
  return selectors;
}

// The text of a PromQL string literal (`"a\\.b"` -> `a\.b`): quotes
// removed, escaped backslashes and quotes undone (other escapes kept as
// written); a raw string (backquotes) as it is.
std::string Unquote(const std::string& literal) {
  if (literal.size() < 2) return literal;
  const char quote = literal.front();
  const std::string body = literal.substr(1, literal.size() - 2);
  if (quote == '`') return body;
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] == '\\' && i + 1 < body.size() &&
        (body[i + 1] == '\\' || body[i + 1] == quote)) {
      ++i;
    }
    out += body[i];
  }
  return out;
}

// `text` as a double-quoted PromQL string.
std::string Quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out + "\"";
}

// The top-level alternatives of a regular expression (`a|b(c|d)` -> `a`,
// `b(c|d)`): a `|` escaped, in a group or in a character class does not
// split.
std::vector<std::string> Alternatives(const std::string& regex) {
  std::vector<std::string> out;
  std::string current;
  int depth = 0;
  bool in_class = false;
  for (size_t i = 0; i < regex.size(); ++i) {
    const char c = regex[i];
    if (c == '\\' && i + 1 < regex.size()) {
      current += regex.substr(i++, 2);
      continue;
    }
    if (in_class) {
      in_class = c != ']';
    } else if (c == '[') {
      in_class = true;
      current += c;
      // `[]...]` and `[^]...]`: that first `]` is a member.
      if (i + 1 < regex.size() && regex[i + 1] == '^') current += regex[++i];
      if (i + 1 < regex.size() && regex[i + 1] == ']') current += regex[++i];
      continue;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      --depth;
    } else if (c == '|' && depth == 0) {
      out.push_back(current);
      current.clear();
      continue;
    }
    current += c;
  }
  out.push_back(current);
  return out;
}

// For each `=~` matcher of `selector` (as Selectors() returns it) with two
// or more alternatives, one selector per alternative: the same with that
// matcher narrowed to it (`x{a=~"p|q", b="r"}` -> `x{a=~"p", b="r"}`,
// `x{a=~"q", b="r"}`). A misspelt alternative leaves the selector with
// data, from the others; narrowed to it, the selector has none.
std::vector<std::string> AlternativeSelectors(const std::string& selector) {
  const size_t open = selector.find('{');
  if (open == std::string::npos) return {};
  struct Matcher {
    std::string text;   // as written: `a=~"p|q"`
    std::string label;  // `a`
    std::string op;     // `=~`
    std::string value;  // unquoted: `p|q`
  };
  std::vector<Matcher> matchers;
  const size_t close = SkipGroup(selector, open) - 1;
  for (size_t i = open + 1; i < close;) {
    if (absl::ascii_isspace(selector[i]) || selector[i] == ',') {
      ++i;
      continue;
    }
    Matcher m;
    const size_t start = i;
    while (i < close && IsIdent(selector[i])) ++i;
    m.label = selector.substr(start, i - start);
    i = SkipSpaces(selector, i);
    const size_t op = i;
    while (i < close &&
           (selector[i] == '=' || selector[i] == '!' || selector[i] == '~')) {
      ++i;
    }
    m.op = selector.substr(op, i - op);
    i = SkipSpaces(selector, i);
    const size_t end = SkipString(selector, i);
    m.value = Unquote(selector.substr(i, end - i));
    m.text = selector.substr(start, end - start);
    matchers.push_back(std::move(m));
    i = end;
  }
  std::vector<std::string> out;
  for (size_t k = 0; k < matchers.size(); ++k) {
    if (matchers[k].op != "=~") continue;
    const std::vector<std::string> alternatives =
        Alternatives(matchers[k].value);
    if (alternatives.size() < 2) continue;
    for (const std::string& alternative : alternatives) {
      std::vector<std::string> texts;
      for (size_t j = 0; j < matchers.size(); ++j) {
        texts.push_back(
            j == k ? absl::StrCat(matchers[k].label, "=~", Quote(alternative))
                   : matchers[j].text);
      }
      out.push_back(absl::StrCat(selector.substr(0, open), "{",
                                 absl::StrJoin(texts, ", "), "}"));
    }
  }
  return out;
}

// `expr` with each comparison made a `bool` one (`a < 1` -> `a < bool 1`).
std::string WithBoolComparisons(const std::string& expr) {
  std::string out;
  for (size_t i = 0; i < expr.size();) {
    const char c = expr[i];
    if (c == '"' || c == '\'' || c == '`' || c == '{' || c == '[') {
      size_t end = c == '{' || c == '[' ? SkipGroup(expr, i)
                                        : SkipString(expr, i);
      out += expr.substr(i, end - i);
      i = end;
      continue;
    }
    const char next = i + 1 < expr.size() ? expr[i + 1] : '\0';
    size_t op = 0;
    if ((c == '=' || c == '!' || c == '<' || c == '>') && next == '=') {
      op = 2;
    } else if (c == '<' || c == '>') {
      op = 1;
    }
    if (op == 0) {
      out += c;
      ++i;
      continue;
    }
    out += expr.substr(i, op);
    i += op;
    if (!absl::StartsWith(expr.substr(SkipSpaces(expr, i)), "bool")) {
      out += " bool";
    }
  }
  return out;
}

// A dashboard query with its variables replaced as Grafana replaces them
// for the install the rules select.
std::string Substitute(const std::string& expr) {
  return absl::StrReplaceAll(expr, {{"$__rate_interval", "1m"},
                                    {"${job}", kJob},
                                    {"$job", kJob},
                                    {"${namespace}", kNamespace},
                                    {"$namespace", kNamespace}});
}

TEST(PromqlScanTest, FindsSelectorsAndMakesComparisonsBool) {
  EXPECT_EQ(
      Selectors(R"(histogram_quantile(0.99, sum by (le, metric) (rate()"
                R"(a_bucket{job="j", x=~"p|q"}[1m]))) / on (job) b > 0.5)"
                R"( or absent(up{job="j"}) and c offset 5m)"),
      (std::vector<std::string>{R"(a_bucket{job="j", x=~"p|q"})", "b",
                                R"(up{job="j"})", "c"}));
  EXPECT_EQ(Selectors(R"(max by (namespace, job) (metrics_scheduler_leader))"),
            (std::vector<std::string>{"metrics_scheduler_leader"}));
  EXPECT_EQ(WithBoolComparisons(R"(max(a{x!="1"}) < 1 or b{y=~"z"} >= 2)"),
            R"(max(a{x!="1"}) < bool 1 or b{y=~"z"} >= bool 2)");
  EXPECT_EQ(WithBoolComparisons("a > bool 1"), "a > bool 1");
  EXPECT_EQ(Substitute(R"(rate(x{job="$job"}[$__rate_interval]))"),
            R"(rate(x{job="metrics-scheduler"}[1m]))");
}

TEST(PromqlScanTest, SplitsRegexMatchersIntoAlternatives) {
  EXPECT_EQ(Alternatives("error|unschedulable"),
            (std::vector<std::string>{"error", "unschedulable"}));
  // Groups, classes and escapes do not split.
  EXPECT_EQ(Alternatives(R"(a(b|c)|[|x]|d\|e|)"),
            (std::vector<std::string>{"a(b|c)", "[|x]", R"(d\|e)", ""}));
  EXPECT_EQ(Alternatives("[]|]|[^]|]"),
            (std::vector<std::string>{"[]|]", "[^]|]"}));
  EXPECT_EQ(Alternatives("5.."), (std::vector<std::string>{"5.."}));

  // One selector per alternative; other matchers as written.
  EXPECT_EQ(AlternativeSelectors(
                R"(attempts_total{job="j", result=~"error|unschedulable"})"),
            (std::vector<std::string>{
                R"(attempts_total{job="j", result=~"error"})",
                R"(attempts_total{job="j", result=~"unschedulable"})"}));
  EXPECT_EQ(AlternativeSelectors(R"(x{a=~'p|q\\.r',b!~"s|t"})"),
            (std::vector<std::string>{R"(x{a=~"p", b!~"s|t"})",
                                      R"(x{a=~"q\\.r", b!~"s|t"})"}));
  // Nothing to split: no regex, one alternative, a negative matcher.
  EXPECT_TRUE(AlternativeSelectors("up").empty());
  EXPECT_TRUE(AlternativeSelectors(R"(up{job="a|b"})").empty());
  EXPECT_TRUE(AlternativeSelectors(R"(up{code=~"5.."})").empty());
  EXPECT_TRUE(AlternativeSelectors(R"(up{code!~"4..|5.."})").empty());
}

// ---------------------------------------------------------------------------

// The series (or scalar) an instant query returns; 0 for none or an error
// (`*error` says which).
size_t ResultSize(PrometheusServer& prom, const std::string& promql,
                  std::string* error) {
  absl::StatusOr<std::string> answer = prom.Query(promql);
  if (!answer.ok()) {
    *error = answer.status().ToString();
    return 0;
  }
  *error = *answer;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(*answer).get(doc) != simdjson::SUCCESS) return 0;
  std::string_view status, type;
  if (doc["status"].get(status) != simdjson::SUCCESS || status != "success" ||
      doc["data"]["resultType"].get(type) != simdjson::SUCCESS) {
    return 0;
  }
  if (type == "scalar") return 1;
  simdjson::dom::array result;
  if (doc["data"]["result"].get(result) != simdjson::SUCCESS) return 0;
  return result.size();
}

class MonitoringTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(env_.server().empty());
    env_.ApplySchedulerRbac();
    static int counter = 0;
    suite_ = absl::StrCat("monitoring-", getpid(), "-", counter++);
    env_.CreateNamespace(suite_);
    absl::StatusOr<std::unique_ptr<PrometheusServer>> backend =
        PrometheusServer::Start();
    ASSERT_TRUE(backend.ok()) << backend.status();
    backend_ = std::move(*backend);
    ASSERT_NO_FATAL_FAILURE(BindPrometheus());
  }

  void TearDown() override {
    schedulers_.StopAll(HasFailure());
    (void)env_.Admin(
        "DELETE",
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/" + suite_);
    env_.DeleteNamespace(suite_);
    for (const std::string& n : nodes_) env_.DeleteNode(n);
    if (!token_file_.empty()) std::remove(token_file_.c_str());
  }

  // The monitoring Prometheus' identity, as an install gives it: the
  // ServiceAccount `prometheus` of the suite's namespace, bound by
  // manifests/monitoring/metrics-reader-binding.yaml (its subject and name
  // made the suite's) to manifests/base/metrics-reader.yaml's ClusterRole.
  // Its token goes into token_file_ and metrics_token_.
  void BindPrometheus() {
    env_.Kubectl(absl::StrCat("apply -f ", SourceDir(),
                              "/manifests/base/metrics-reader.yaml"));
    metrics_token_ = env_.ServiceAccountToken(suite_, "prometheus");
    ASSERT_FALSE(metrics_token_.empty());
    YAML::Node binding = manifests::Only(
        YAML::LoadAllFromFile(Monitoring("metrics-reader-binding.yaml")),
        "ClusterRoleBinding");
    ASSERT_TRUE(binding.IsMap());
    ASSERT_EQ(binding["subjects"].size(), 1u);
    binding["metadata"]["name"] = suite_;
    binding["subjects"][0]["name"] = "prometheus";
    binding["subjects"][0]["namespace"] = suite_;
    const std::string file =
        absl::StrCat(::testing::TempDir(), "/binding-", suite_, ".yaml");
    {
      YAML::Emitter out;
      out << binding;
      std::ofstream(file) << out.c_str() << "\n";
    }
    env_.Kubectl("apply -f " + file);
    std::remove(file.c_str());
    const std::string user =
        absl::StrCat("system:serviceaccount:", suite_, ":prometheus");
    ASSERT_TRUE(env_.WaitUntilAllowedToGet(user, "/metrics"))
        << user << " is not allowed to get /metrics";
    token_file_ = absl::StrCat(::testing::TempDir(), "/token-", suite_);
    std::ofstream(token_file_) << metrics_token_;
  }

  void AddNode(const std::string& name) {
    env_.CreateNode(name, "4", "16Gi",
                    absl::StrCat(R"({"e2e-suite":")", suite_,
                                 R"(","kubernetes.io/hostname":")", name,
                                 R"("})"));
    nodes_.push_back(name);
  }

  void CreatePod(const std::string& name, const std::string& cpu) {
    env_.AdminOk(
        "POST", "/api/v1/namespaces/" + suite_ + "/pods",
        absl::StrCat(
            R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name,
            R"("},"spec":{"schedulerName":"metrics-scheduler",)",
            R"("nodeSelector":{"e2e-suite":")", suite_,
            R"("},"containers":[{"name":"c","image":"registry.k8s.io/pause:3.10",)",
            R"("resources":{"requests":{"cpu":")", cpu,
            R"(","memory":"64Mi"}}}]}})"));
  }

  // A scheduler whose one metric, http_latency, the backend has for both
  // of the suite's nodes, after it has bound three pods and parked one
  // that fits nowhere.
  SchedulerProcess* StartBusyScheduler() {
    const std::string n0 = suite_ + "-n0", n1 = suite_ + "-n1";
    AddNode(n0);
    AddNode(n1);
    absl::Status written = backend_->Write(
        {{"http_latency_seconds", {{"node", n0}, {"suite", suite_}}, 0.1},
         {"http_latency_seconds", {{"node", n1}, {"suite", suite_}}, 0.2}});
    EXPECT_TRUE(written.ok()) << written;
    const std::string config = absl::StrCat(
        R"(apiVersion: metrics-scheduler/v1alpha1
kind: MetricsSchedulerConfiguration
backend: {type: prometheus, url: ")",
        backend_->url(), R"(", timeout: 1s}
cache: {ttl: 1s, maxStaleness: 5m, refreshTimeout: 1s}
metrics:
  - name: http_latency
    query: 'http_latency_seconds{suite=")",
        suite_, R"("}'
    weight: 10
    direction: lower
    missing: neutral
)");
    // With its secure port, as manifests/base runs it: /metrics is there
    // only, and the test reads it with the Prometheus' token.
    SchedulerProcess* s =
        schedulers_.Start({.config_yaml = config,
                           .kubeconfig = env_.dir() + "/scheduler.kubeconfig",
                           .identity = "monitoring",
                           .extra_args = {"--leader-elect=false"},
                           .secure_port = true,
                           .metrics_token = metrics_token_});
    if (s == nullptr) return nullptr;
    const std::string refreshed =
        R"(metrics_scheduler_metric_nodes_with_data{metric="http_latency"})";
    EXPECT_TRUE(WaitFor([&] { return s->Metric(refreshed) == 2; })) << s->Log();
    for (int i = 0; i < 3; ++i) CreatePod(absl::StrCat("fits-", i), "100m");
    CreatePod("too-big", "64");
    EXPECT_TRUE(WaitFor([&] {
      return s->Metric(R"(metrics_scheduler_schedule_attempts_total{)"
                       R"(result="scheduled",profile="metrics-scheduler"})") ==
                 3 &&
             s->Metric(R"(metrics_scheduler_pending_pods{queue="unschedulable"})") ==
                 1;
    })) << s->Log();
    return s;
  }

  Testenv env_;
  std::string suite_;
  std::vector<std::string> nodes_;
  std::unique_ptr<PrometheusServer> backend_;  // the metrics the scheduler reads
  std::string metrics_token_;  // the monitoring Prometheus' bearer token
  std::string token_file_;     // the same, in a file, for its scrape
  SchedulerProcesses schedulers_;
};

// The Prometheus scrape of a ServiceMonitor endpoint of
// manifests/monitoring/servicemonitor.yaml, as prometheus-operator writes
// it, of `target` (the pod's port the endpoint names), with `token_file`
// in place of the Prometheus pod's own token. The interval is the test's
// (1 s). A field not translated here fails the test: the scrape would not
// be the shipped one.
PrometheusServer::Options::ScrapeJob ScrapeOf(const YAML::Node& endpoint,
                                              const std::string& target,
                                              const std::string& token_file) {
  PrometheusServer::Options::ScrapeJob job{
      .job = kJob, .targets = {target}, .labels = {{"namespace", kNamespace}}};
  for (const auto& field : endpoint) {
    const std::string key = field.first.as<std::string>();
    const YAML::Node& value = field.second;
    if (key == "port" || key == "interval" || key == "scrapeTimeout") {
      continue;  // the target; the test's own pace
    } else if (key == "scheme") {
      job.scheme = value.as<std::string>();
    } else if (key == "path") {
      job.metrics_path = value.as<std::string>();
    } else if (key == "bearerTokenFile") {
      EXPECT_EQ(value.as<std::string>(),
                "/var/run/secrets/kubernetes.io/serviceaccount/token");
      job.bearer_token_file = token_file;
    } else if (key == "tlsConfig") {
      for (const auto& tls : value) {
        const std::string tls_key = tls.first.as<std::string>();
        if (tls_key == "insecureSkipVerify") {
          job.insecure_skip_verify = tls.second.as<bool>();
        } else {
          ADD_FAILURE() << "tlsConfig." << tls_key << " is not translated";
        }
      }
    } else {
      ADD_FAILURE() << key << " is not translated";
    }
  }
  return job;
}

// The container port a ServiceMonitor endpoint reaches: the Service's port
// of that name, its targetPort the container's port of that name. 0 when
// the chain breaks.
int ContainerPortOf(const std::string& endpoint_port, const YAML::Node& service,
                    const YAML::Node& deployment) {
  std::string target;
  for (const YAML::Node& p : service["spec"]["ports"]) {
    if (p["name"].as<std::string>("") == endpoint_port) {
      target = p["targetPort"].as<std::string>("");
    }
  }
  for (const YAML::Node& p :
       deployment["spec"]["template"]["spec"]["containers"][0]["ports"]) {
    if (!target.empty() && p["name"].as<std::string>("") == target) {
      return p["containerPort"].as<int>(0);
    }
  }
  return 0;
}

TEST_F(MonitoringTest, RulesAndDashboardQueriesReturnData) {
  SchedulerProcess* scheduler = StartBusyScheduler();
  ASSERT_NE(scheduler, nullptr);
  ASSERT_FALSE(HasFailure());

  // The Prometheus that monitors the scheduler, scraping it every second as
  // the ServiceMonitor's scrape would, with its job and namespace labels:
  // its endpoint reaches the base's container port passed as --secure-port
  // (here a free loopback port in place of 10259).
  const YAML::Node service_monitor =
      YAML::LoadFile(Monitoring("servicemonitor.yaml"));
  ASSERT_EQ(service_monitor["spec"]["endpoints"].size(), 1u);
  const YAML::Node endpoint = service_monitor["spec"]["endpoints"][0];
  const std::string base = SourceDir() + "/manifests/base/";
  const YAML::Node deployment = manifests::Only(
      YAML::LoadAllFromFile(base + "deployment.yaml"), "Deployment");
  const int port = ContainerPortOf(
      endpoint["port"].as<std::string>(""),
      manifests::Only(YAML::LoadAllFromFile(base + "service.yaml"), "Service"),
      deployment);
  std::set<std::string> args;
  for (const YAML::Node& a :
       deployment["spec"]["template"]["spec"]["containers"][0]["args"]) {
    args.insert(a.as<std::string>());
  }
  EXPECT_TRUE(args.count(absl::StrCat("--secure-port=", port)))
      << "the ServiceMonitor scrapes container port " << port
      << ", not the secure port";
  PrometheusServer::Options options;
  options.scrape_jobs = {
      ScrapeOf(endpoint, absl::StrCat("127.0.0.1:", scheduler->secure_port()),
               token_file_)};
  EXPECT_EQ(options.scrape_jobs[0].scheme, "https");
  ASSERT_FALSE(HasFailure());
  absl::StatusOr<std::unique_ptr<PrometheusServer>> started =
      PrometheusServer::Start(options);
  ASSERT_TRUE(started.ok()) << started.status();
  PrometheusServer& monitor = **started;

  // The PrometheusRule's groups, as a rules file promtool accepts.
  const YAML::Node rule = YAML::LoadFile(Monitoring("prometheusrule.yaml"));
  ASSERT_EQ(rule["kind"].as<std::string>(""), "PrometheusRule");
  YAML::Emitter groups;
  groups << rule["spec"];
  const std::string rules_file =
      absl::StrCat(::testing::TempDir(), "/rules-", suite_, ".yaml");
  std::ofstream(rules_file) << groups.c_str() << "\n";
  const CommandResult check =
      RunCommandLine("promtool check rules " + rules_file);
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err << "\n"
                                << groups.c_str();
  EXPECT_TRUE(absl::StrContains(check.out + check.err,
                                "SUCCESS: 5 rules found"))
      << check.out << check.err;
  std::remove(rules_file.c_str());

  // What must return data, by where it comes from.
  std::map<std::string, std::string> queries;  // PromQL -> its origin
  std::set<std::string> alerts;
  for (const YAML::Node& group : rule["spec"]["groups"]) {
    for (const YAML::Node& r : group["rules"]) {
      const std::string name = r["alert"].as<std::string>("");
      alerts.insert(name);
      queries[WithBoolComparisons(r["expr"].as<std::string>())] =
          "alert " + name;
    }
  }
  EXPECT_EQ(alerts, (std::set<std::string>{
                        "MetricsSchedulerDown", "MetricsSchedulerNoLeader",
                        "MetricsSchedulerFallbackHigh",
                        "MetricsSchedulerMetricCoverageLow",
                        "MetricsSchedulerPodsPending"}));

  // JSON is YAML: the dashboard's panels and variables.
  const YAML::Node dashboard = YAML::LoadFile(Monitoring("dashboard.json"));
  std::set<std::string> variables;
  for (const YAML::Node& v : dashboard["templating"]["list"]) {
    variables.insert(v["name"].as<std::string>());
    if (v["type"].as<std::string>() != "query") continue;
    // label_values(SELECTOR, LABEL): the values of LABEL among the series.
    const std::string text = v["query"]["query"].as<std::string>();
    absl::string_view query = text;
    ASSERT_TRUE(absl::ConsumePrefix(&query, "label_values(") &&
                absl::ConsumeSuffix(&query, ")"))
        << text;
    const size_t comma = query.rfind(',');
    ASSERT_NE(comma, absl::string_view::npos) << text;
    queries[Substitute(absl::StrCat(
        "count by (", absl::StripAsciiWhitespace(query.substr(comma + 1)),
        ") (", query.substr(0, comma), ")"))] =
        "variable " + v["name"].as<std::string>();
  }
  EXPECT_EQ(variables,
            (std::set<std::string>{"datasource", "namespace", "job"}));
  int targets = 0;
  for (const YAML::Node& panel : dashboard["panels"]) {
    const std::string title = panel["title"].as<std::string>();
    EXPECT_EQ(panel["datasource"]["uid"].as<std::string>(""), "${datasource}")
        << title;
    EXPECT_GT(panel["targets"].size(), 0u) << title;
    for (const YAML::Node& t : panel["targets"]) {
      const std::string expr = Substitute(t["expr"].as<std::string>());
      EXPECT_FALSE(absl::StrContains(expr, "$"))
          << title << ": a variable the dashboard does not define: " << expr;
      queries[expr] = "panel " + title;
      ++targets;
    }
  }
  EXPECT_GE(targets, 10);

  // Each selector alone, and each alternative of its regex matchers
  // alone, too. Those of alerts and panels read the scheduler's job only
  // (the variables list what there is).
  std::map<std::string, std::string> pending = queries;
  for (const auto& [query, origin] : queries) {
    for (const std::string& selector : Selectors(query)) {
      pending.emplace(selector, "a selector of " + origin);
      for (const std::string& alternative : AlternativeSelectors(selector)) {
        pending.emplace(alternative,
                        "one alternative of a regex matcher of " + origin);
      }
      if (!absl::StartsWith(origin, "variable ")) {
        EXPECT_TRUE(absl::StrContains(selector, absl::StrCat("job=\"", kJob,
                                                             "\"")))
            << origin << " reads other jobs' series: " << selector;
      }
    }
  }

  // Scrapes come every second; rate() needs two of them. Wait until each
  // query returns data, then report those that never did.
  std::map<std::string, std::string> last_answer;
  WaitFor(
      [&] {
        for (auto it = pending.begin(); it != pending.end();) {
          if (ResultSize(monitor, it->first, &last_answer[it->first]) > 0) {
            it = pending.erase(it);
          } else {
            ++it;
          }
        }
        return pending.empty();
      },
      absl::Seconds(60));
  for (const auto& [query, origin] : pending) {
    ADD_FAILURE() << origin << " returns no data: " << query
                  << "\nanswer: " << last_answer[query];
  }
  EXPECT_GT(queries.size(), 15u);

  // The alternatives' check catches what the others miss: with `backoff`
  // misspelt in MetricsSchedulerPodsPending, the expression and its
  // selector still return data (the `unschedulable` series), but that
  // alternative alone returns none.
  if (!HasFailure()) {
    std::string expr;
    for (const YAML::Node& r : rule["spec"]["groups"][0]["rules"]) {
      if (r["alert"].as<std::string>("") == "MetricsSchedulerPodsPending") {
        expr = r["expr"].as<std::string>();
      }
    }
    ASSERT_TRUE(absl::StrContains(expr, R"(queue=~"unschedulable|backoff")"))
        << expr;
    const std::string broken = absl::StrReplaceAll(
        expr, {{"unschedulable|backoff", "unschedulable|bakcoff"}});
    std::string answer;
    EXPECT_GT(ResultSize(monitor, WithBoolComparisons(broken), &answer), 0u)
        << answer;
    std::vector<std::string> empty;
    for (const std::string& selector : Selectors(broken)) {
      EXPECT_GT(ResultSize(monitor, selector, &answer), 0u) << answer;
      for (const std::string& alternative : AlternativeSelectors(selector)) {
        if (ResultSize(monitor, alternative, &answer) == 0) {
          empty.push_back(alternative);
        }
      }
    }
    EXPECT_EQ(empty, (std::vector<std::string>{
                         absl::StrCat(R"(metrics_scheduler_pending_pods{job=")",
                                      kJob, R"(", namespace=")", kNamespace,
                                      R"(", queue=~"bakcoff"})")}));
  }
  if (HasFailure()) {
    std::string up;
    ResultSize(monitor, "up", &up);
    std::cerr << "up: " << up << "\nmonitor's log:\n"
              << monitor.LogTail() << "\n";
  }
}

}  // namespace
}  // namespace ms
