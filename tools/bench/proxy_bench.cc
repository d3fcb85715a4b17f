// build/podflow-bench proxy: kube-proxy's iptables ruleset for 5,000
// Services × 10 endpoints (one in ten a NodePort, one in twenty with
// externalTrafficPolicy Local, endpoints over 1,000 nodes): the time to
// render a node's whole document from nothing, and to render it again after
// one endpoint changed — incrementally (only that service port re-rendered)
// and, for comparison in the same run, from nothing. Each figure is the
// median of several runs. (--quick: 500 Services.)
#include <chrono>
#include <string>

#include "bench.h"
#include "stages/proxy/rules/iptables.h"

namespace podflow::bench {
namespace {

using proxy::rules::Endpoint;
using proxy::rules::Ruleset;
using proxy::rules::ServicePort;

constexpr int kEndpointsPerService = 10;
constexpr int kNodes = 1000;

ServicePort MakeService(int i) {
  ServicePort p;
  p.namespace_ = "ns-" + std::to_string(i % 50);
  p.service = "svc-" + std::to_string(i);
  p.port_name = "http";
  p.cluster_ip = "10.96." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1);
  p.port = 80;
  if (i % 10 == 0) p.node_port = 30000 + i % 2768;
  if (i % 20 == 0) p.external_local = true;
  for (int e = 0; e < kEndpointsPerService; ++e) {
    const int n = i * kEndpointsPerService + e;
    Endpoint endpoint;
    endpoint.ip = "10.244." + std::to_string(n / 250 % 256) + "." + std::to_string(n % 250 + 1);
    endpoint.port = 8080;
    endpoint.node = "node-" + std::to_string(n % kNodes);
    p.endpoints.push_back(std::move(endpoint));
  }
  return p;
}

}  // namespace

int RunProxyBench(const std::vector<std::string>& args) {
  const bool quick = std::find(args.begin(), args.end(), "--quick") != args.end();
  const int services = quick ? 500 : 5000;
  const proxy::rules::NodeSettings settings{"", "10.244.0.0/16", false};
  std::vector<ServicePort> ports;
  for (int i = 0; i < services; ++i) ports.push_back(MakeService(i));

  constexpr int kRuns = 7;
  std::vector<double> full_ms, incremental_ms, again_ms;
  size_t bytes = 0, lines = 0;
  for (int run = 0; run < kRuns; ++run) {
    // From nothing: every service port rendered, then the node's document.
    auto t = std::chrono::steady_clock::now();
    Ruleset rules(settings);
    for (const ServicePort& p : ports) rules.Set(p);
    std::string document = rules.Render("node-7");
    full_ms.push_back(MicrosSince(t) / 1000.0);
    bytes = document.size();
    lines = static_cast<size_t>(std::count(document.begin(), document.end(), '\n'));

    // One endpoint of one service changes.
    ServicePort changed = ports[static_cast<size_t>(run * 37 % services)];
    changed.endpoints[3].ip = "10.245.0." + std::to_string(run + 1);
    t = std::chrono::steady_clock::now();
    rules.Set(changed);
    document = rules.Render("node-7");
    incremental_ms.push_back(MicrosSince(t) / 1000.0);

    // The same change, everything rendered again from nothing.
    std::vector<ServicePort> after = ports;
    after[static_cast<size_t>(run * 37 % services)] = changed;
    t = std::chrono::steady_clock::now();
    Ruleset fresh(settings);
    for (const ServicePort& p : after) fresh.Set(p);
    const std::string again = fresh.Render("node-7");
    again_ms.push_back(MicrosSince(t) / 1000.0);
    if (again != document) {
      std::fprintf(stderr, "proxy bench: incremental and full renders differ\n");
      return 1;
    }
  }
  Emit("proxy_services", services);
  Emit("proxy_endpoints_per_service", kEndpointsPerService);
  Emit("proxy_document_bytes", static_cast<double>(bytes));
  Emit("proxy_document_lines", static_cast<double>(lines));
  Emit("proxy_full_render_ms", Percentile(&full_ms, 50));
  Emit("proxy_one_endpoint_incremental_ms", Percentile(&incremental_ms, 50));
  Emit("proxy_one_endpoint_full_render_ms", Percentile(&again_ms, 50));
  return 0;
}

}  // namespace podflow::bench
