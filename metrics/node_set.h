// NodeSet: the nodes a metric's series are joined to, indexed for lookup.
//
// metrics/ knows nothing of Kubernetes objects: the scheduler hands the
// cache each Node's name, addresses (InternalIP, ExternalIP, Hostname, in
// any order) and allocatable cpu and memory as NodeAddresses, and the cache
// builds one immutable NodeSet per node list. Sources look series up in it by name, address or short name
// (the name up to its first dot, as Sysdig reports host names).
//
// Thread-compatible; an immutable NodeSet may be shared between threads.
#ifndef METRICS_SCHEDULER_METRICS_NODE_SET_H_
#define METRICS_SCHEDULER_METRICS_NODE_SET_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"

namespace ms::metrics {

struct NodeAddresses {
  std::string name;
  // Every address the Node reports (status.addresses[*].address).
  std::vector<std::string> addresses;
  // status.allocatable cpu (cores) and memory (bytes); 0 when the Node has
  // none. The metricsServer source divides usage by them.
  double allocatable_cpu = 0;
  double allocatable_memory = 0;

  friend bool operator==(const NodeAddresses&, const NodeAddresses&) = default;
};

class NodeSet {
 public:
  NodeSet() = default;
  // Nodes with an empty or repeated name are dropped (the first is kept).
  explicit NodeSet(std::vector<NodeAddresses> nodes);

  const std::vector<NodeAddresses>& nodes() const { return nodes_; }
  size_t size() const { return nodes_.size(); }

  // Each returns the matching node's name, or nullptr when none matches.
  //
  // Exact node name.
  const std::string* FindByName(absl::string_view name) const;
  // The node named `name` exactly, or nullptr.
  const NodeAddresses* Find(absl::string_view name) const;
  // One of the node's addresses, exactly. An address reported by two nodes
  // matches neither.
  const std::string* FindByAddress(absl::string_view address) const;
  // The node whose name up to its first dot is `short_name`, when exactly
  // one node has that short name.
  const std::string* FindByShortName(absl::string_view short_name) const;

 private:
  std::vector<NodeAddresses> nodes_;
  absl::flat_hash_map<std::string, size_t> by_name_;
  absl::flat_hash_map<std::string, size_t> by_address_;   // SIZE_MAX: ambiguous
  absl::flat_hash_map<std::string, size_t> by_short_name_;  // likewise
};

// `name` up to its first dot: "ip-10-0-0-7" for "ip-10-0-0-7.ec2.internal".
absl::string_view ShortName(absl::string_view name);

// The host part of an address: "10.0.0.7" for "10.0.0.7:9100", "::1" for
// "[::1]:9100"; an address without a port (including a bare IPv6 address)
// is returned unchanged.
absl::string_view StripPort(absl::string_view address);

}  // namespace ms::metrics

#endif  // METRICS_SCHEDULER_METRICS_NODE_SET_H_
