#include "scoring/plugins/node_ports.h"

#include <string>

namespace ms {
namespace {

const std::string& Normalized(const std::string& s, const std::string& dflt) {
  return s.empty() ? dflt : s;
}

}  // namespace

bool HostPortsConflict(const std::vector<ContainerPort>& wanted,
                       const std::vector<ContainerPort>& used) {
  static const std::string kAnyIp = "0.0.0.0";
  static const std::string kTcp = "TCP";
  for (const ContainerPort& w : wanted) {
    const std::string& wip = Normalized(w.host_ip, kAnyIp);
    const std::string& wproto = Normalized(w.protocol, kTcp);
    for (const ContainerPort& u : used) {
      if (u.host_port != w.host_port) continue;
      if (Normalized(u.protocol, kTcp) != wproto) continue;
      const std::string& uip = Normalized(u.host_ip, kAnyIp);
      if (wip == kAnyIp || uip == kAnyIp || wip == uip) return true;
    }
  }
  return false;
}

}  // namespace ms
