// kube-proxy's iptables ruleset: chain names against kube-proxy's own, one
// case per Service shape against its documented layout, and every
// rendered document through `iptables-restore --test` where a namespace
// can be made.
#include "stages/proxy/rules/iptables.h"

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>

#include "model/codec.h"
#include "stages/proxy/rules/chain_names.h"
#include "stages/proxy/rules/from_objects.h"
#include "stages/proxy/rules/host_ports.h"
#include "temp_dir.h"

namespace podflow::proxy::rules {
namespace {

// The lines of `text` that start with `prefix`.
std::vector<std::string> Lines(const std::string& text, const std::string& prefix = "") {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (line.rfind(prefix, 0) == 0) out.push_back(line);
    start = end + 1;
  }
  return out;
}

ServicePort Svc1(std::vector<Endpoint> endpoints) {
  ServicePort p;
  p.namespace_ = "ns1";
  p.service = "svc1";
  p.cluster_ip = "172.30.1.1";
  p.port = 80;
  p.endpoints = std::move(endpoints);
  return p;
}

Endpoint Ep(std::string ip, std::string node = "node-1", bool ready = true) {
  Endpoint e;
  e.ip = std::move(ip);
  e.port = 80;
  e.node = std::move(node);
  e.ready = ready;
  e.serving = ready;
  return e;
}

const NodeSettings kNode{"node-1", "10.0.0.0/8", false};

TEST_CASE("chain names are kube-proxy's: base32 of the SHA-256 of the port's name, protocol and endpoint",
          "[proxy][iptables]") {
  CHECK(ServicePortName("ns1", "svc1", "p80") == "ns1/svc1:p80");
  CHECK(ServicePortName("default", "nginx", "") == "default/nginx");
  // Names kube-proxy's own tests and real iptables-save dumps show.
  CHECK(PortProtoHash("ns1/svc1:p80", "tcp") == "XPGD46QRK7WJZT7O");
  CHECK(PortProtoHash("ns1/svc1", "tcp") == "AQI2S6QIMU7PVVRP");
  CHECK(PortProtoHash("default/kubernetes:https", "tcp") == "NPX46M4PTMTKRN6Y");
  CHECK(PortProtoHash("kube-system/kube-dns:dns", "udp") == "TCOU7JCQXEZGVUNU");
  CHECK(PortProtoHash("kube-system/kube-dns:dns-tcp", "tcp") == "ERIFXISQEP7F7OF4");
  CHECK(EndpointChain("ns1/svc1:p80", "tcp", "10.180.0.1:80") == "KUBE-SEP-SXIVWICOYRO3J4NJ");
  CHECK(EndpointChain("default/nginx", "tcp", "10.244.0.20:80") == "KUBE-SEP-BRZDTZFF2SFWJV4H");
}

TEST_CASE("ClusterIP with 3 endpoints: an even random spread, hairpin masquerade, DNAT", "[proxy][iptables]") {
  const Fragment f = RenderServicePort(Svc1({Ep("10.0.1.5"), Ep("10.0.1.1"), Ep("10.0.1.2")}), kNode);
  CHECK(Lines(f.nat_chains) == std::vector<std::string>{
                                   ":KUBE-SVC-AQI2S6QIMU7PVVRP - [0:0]",
                                   ":KUBE-SEP-3JOIVZTXZZRGORX4 - [0:0]",
                                   ":KUBE-SEP-IO5XOSKPAXIFQXAJ - [0:0]",
                                   ":KUBE-SEP-EQCHZ7S2PJ72OHAY - [0:0]",
                               });
  CHECK(Lines(f.nat_rules) ==
        std::vector<std::string>{
            "-A KUBE-SERVICES -m comment --comment \"ns1/svc1 cluster IP\" -m tcp -p tcp -d 172.30.1.1 --dport 80 -j "
            "KUBE-SVC-AQI2S6QIMU7PVVRP",
            "-A KUBE-SVC-AQI2S6QIMU7PVVRP -m comment --comment \"ns1/svc1 cluster IP\" -m tcp -p tcp -d 172.30.1.1 "
            "--dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ",
            "-A KUBE-SVC-AQI2S6QIMU7PVVRP -m comment --comment \"ns1/svc1 -> 10.0.1.1:80\" -m statistic --mode random "
            "--probability 0.3333333333 -j KUBE-SEP-3JOIVZTXZZRGORX4",
            "-A KUBE-SVC-AQI2S6QIMU7PVVRP -m comment --comment \"ns1/svc1 -> 10.0.1.2:80\" -m statistic --mode random "
            "--probability 0.5000000000 -j KUBE-SEP-IO5XOSKPAXIFQXAJ",
            "-A KUBE-SVC-AQI2S6QIMU7PVVRP -m comment --comment \"ns1/svc1 -> 10.0.1.5:80\" -j KUBE-SEP-EQCHZ7S2PJ72OHAY",
            "-A KUBE-SEP-3JOIVZTXZZRGORX4 -m comment --comment ns1/svc1 -s 10.0.1.1 -j KUBE-MARK-MASQ",
            "-A KUBE-SEP-3JOIVZTXZZRGORX4 -m comment --comment ns1/svc1 -m tcp -p tcp -j DNAT --to-destination "
            "10.0.1.1:80",
            "-A KUBE-SEP-IO5XOSKPAXIFQXAJ -m comment --comment ns1/svc1 -s 10.0.1.2 -j KUBE-MARK-MASQ",
            "-A KUBE-SEP-IO5XOSKPAXIFQXAJ -m comment --comment ns1/svc1 -m tcp -p tcp -j DNAT --to-destination "
            "10.0.1.2:80",
            "-A KUBE-SEP-EQCHZ7S2PJ72OHAY -m comment --comment ns1/svc1 -s 10.0.1.5 -j KUBE-MARK-MASQ",
            "-A KUBE-SEP-EQCHZ7S2PJ72OHAY -m comment --comment ns1/svc1 -m tcp -p tcp -j DNAT --to-destination "
            "10.0.1.5:80",
        });
  CHECK(f.filter_rules.empty());
  SECTION("endpoints in the order of their ip:port text, as kube-proxy sorts them") {
    const Fragment g = RenderServicePort(Svc1({Ep("10.0.1.2"), Ep("10.0.1.10")}), kNode);
    const auto rules = Lines(g.nat_rules, "-A KUBE-SVC-AQI2S6QIMU7PVVRP -m comment --comment \"ns1/svc1 ->");
    REQUIRE(rules.size() == 2);
    CHECK(rules[0].find("10.0.1.10:80") != std::string::npos);
  }
  SECTION("no cluster CIDR: no masquerade by source; masquerade-all: all of it") {
    const ServicePort one = Svc1({Ep("10.0.1.1")});
    CHECK(Lines(RenderServicePort(one, {"node-1", "", false}).nat_rules, "-A KUBE-SVC").size() == 1);
    const auto all = Lines(RenderServicePort(one, {"node-1", "", true}).nat_rules, "-A KUBE-SVC");
    REQUIRE(all.size() == 2);
    CHECK(all[0] ==
          "-A KUBE-SVC-AQI2S6QIMU7PVVRP -m comment --comment \"ns1/svc1 cluster IP\" -m tcp -p tcp -d 172.30.1.1 "
          "--dport 80 -j KUBE-MARK-MASQ");
  }
}

TEST_CASE("a service without usable endpoints is REJECTed in the filter table; terminating ones stand in",
          "[proxy][iptables]") {
  ServicePort p = Svc1({Ep("10.0.1.1", "node-1", false)});
  p.port_name = "p80";
  p.node_port = 30080;
  Fragment f = RenderServicePort(p, kNode);
  CHECK(f.nat_chains.empty());
  CHECK(f.nat_rules.empty());
  CHECK(Lines(f.filter_rules) ==
        std::vector<std::string>{
            "-A KUBE-SERVICES -m comment --comment \"ns1/svc1:p80 has no endpoints\" -m tcp -p tcp -d 172.30.1.1 "
            "--dport 80 -j REJECT",
            "-A KUBE-EXTERNAL-SERVICES -m comment --comment \"ns1/svc1:p80 has no endpoints\" -m addrtype "
            "--dst-type LOCAL -m tcp -p tcp --dport 30080 -j REJECT",
        });
  // Not ready but serving while it terminates: used when nothing is ready.
  p.endpoints[0].serving = true;
  p.endpoints[0].terminating = true;
  f = RenderServicePort(p, kNode);
  CHECK(f.filter_rules.empty());
  CHECK(Lines(f.nat_chains, ":KUBE-SEP-").size() == 1);
  // A ready endpoint beside it: only the ready one.
  p.endpoints.push_back(Ep("10.0.1.2"));
  f = RenderServicePort(p, kNode);
  CHECK(Lines(f.nat_chains, ":KUBE-SEP-") ==
        std::vector<std::string>{":" + EndpointChain("ns1/svc1:p80", "tcp", "10.0.1.2:80") + " - [0:0]"});
}

TEST_CASE("NodePort: KUBE-NODEPORTS into KUBE-EXT, which masquerades and goes on to KUBE-SVC", "[proxy][iptables]") {
  ServicePort p = Svc1({Ep("10.0.1.1")});
  p.port_name = "p80";
  p.node_port = 30080;
  const std::string hash = PortProtoHash("ns1/svc1:p80", "tcp");
  const Fragment f = RenderServicePort(p, kNode);
  CHECK(Lines(f.nat_chains)[0] == ":KUBE-EXT-" + hash + " - [0:0]");
  CHECK(Lines(f.nat_chains)[1] == ":KUBE-SVC-" + hash + " - [0:0]");
  const auto rules = Lines(f.nat_rules);
  REQUIRE(rules.size() >= 5);
  CHECK(rules[1] == "-A KUBE-NODEPORTS -m comment --comment ns1/svc1:p80 -m tcp -p tcp --dport 30080 -j KUBE-EXT-" + hash);
  CHECK(rules[3] == "-A KUBE-EXT-" + hash +
                        " -m comment --comment \"masquerade traffic for ns1/svc1:p80 external destinations\" -j "
                        "KUBE-MARK-MASQ");
  CHECK(rules[4] == "-A KUBE-EXT-" + hash + " -j KUBE-SVC-" + hash);
}

TEST_CASE("session affinity ClientIP: recent --rcheck before the spread, recent --set before the DNAT",
          "[proxy][iptables]") {
  ServicePort p = Svc1({Ep("10.0.1.1"), Ep("10.0.1.2")});
  p.affinity_seconds = 10800;
  const Fragment f = RenderServicePort(p, kNode);
  const auto svc = Lines(f.nat_rules, "-A KUBE-SVC-AQI2S6QIMU7PVVRP -m comment --comment \"ns1/svc1 ->");
  REQUIRE(svc.size() == 4);
  CHECK(svc[0] ==
        "-A KUBE-SVC-AQI2S6QIMU7PVVRP -m comment --comment \"ns1/svc1 -> 10.0.1.1:80\" -m recent --name "
        "KUBE-SEP-3JOIVZTXZZRGORX4 --rcheck --seconds 10800 --reap -j KUBE-SEP-3JOIVZTXZZRGORX4");
  CHECK(svc[2].find("--probability 0.5000000000") != std::string::npos);
  CHECK(Lines(f.nat_rules, "-A KUBE-SEP-3JOIVZTXZZRGORX4")[1] ==
        "-A KUBE-SEP-3JOIVZTXZZRGORX4 -m comment --comment ns1/svc1 -m recent --name KUBE-SEP-3JOIVZTXZZRGORX4 --set "
        "-m tcp -p tcp -j DNAT --to-destination 10.0.1.1:80");
}

TEST_CASE("Local traffic policies: each node reaches its own endpoints; a node without one drops",
          "[proxy][iptables]") {
  SECTION("internalTrafficPolicy Local: KUBE-SERVICES into KUBE-SVL over this node's endpoints") {
    ServicePort p = Svc1({Ep("10.0.1.1", "node-1"), Ep("10.0.2.1", "node-2")});
    p.internal_local = true;
    const Fragment f = RenderServicePort(p, kNode);
    CHECK(Lines(f.nat_chains) == std::vector<std::string>{":KUBE-SVL-AQI2S6QIMU7PVVRP - [0:0]",
                                                          ":KUBE-SEP-3JOIVZTXZZRGORX4 - [0:0]"});
    CHECK(Lines(f.nat_rules) ==
          std::vector<std::string>{
              "-A KUBE-SERVICES -m comment --comment \"ns1/svc1 cluster IP\" -m tcp -p tcp -d 172.30.1.1 --dport 80 "
              "-j KUBE-SVL-AQI2S6QIMU7PVVRP",
              "-A KUBE-SVL-AQI2S6QIMU7PVVRP -m comment --comment \"ns1/svc1 cluster IP\" -m tcp -p tcp -d 172.30.1.1 "
              "--dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ",
              "-A KUBE-SVL-AQI2S6QIMU7PVVRP -m comment --comment \"ns1/svc1 -> 10.0.1.1:80\" -j "
              "KUBE-SEP-3JOIVZTXZZRGORX4",
              "-A KUBE-SEP-3JOIVZTXZZRGORX4 -m comment --comment ns1/svc1 -s 10.0.1.1 -j KUBE-MARK-MASQ",
              "-A KUBE-SEP-3JOIVZTXZZRGORX4 -m comment --comment ns1/svc1 -m tcp -p tcp -j DNAT --to-destination "
              "10.0.1.1:80",
          });
    const Fragment elsewhere = RenderServicePort(p, {"node-3", "10.0.0.0/8", false});
    CHECK(elsewhere.nat_rules.empty());
    CHECK(Lines(elsewhere.filter_rules) ==
          std::vector<std::string>{"-A KUBE-SERVICES -m comment --comment \"ns1/svc1 has no local endpoints\" -m tcp "
                                   "-p tcp -d 172.30.1.1 --dport 80 -j DROP"});
  }
  SECTION("externalTrafficPolicy Local: the node port short-circuits pod and local traffic, else KUBE-SVL") {
    ServicePort p = Svc1({Ep("10.0.1.1", "node-1"), Ep("10.0.2.1", "node-2")});
    p.port_name = "p80";
    p.node_port = 30080;
    p.external_local = true;
    const std::string h = PortProtoHash("ns1/svc1:p80", "tcp");
    const Fragment f = RenderServicePort(p, kNode);
    CHECK(Lines(f.nat_rules, "-A KUBE-EXT-") ==
          std::vector<std::string>{
              "-A KUBE-EXT-" + h + " -m comment --comment \"pod traffic for ns1/svc1:p80 external destinations\" -s "
                                   "10.0.0.0/8 -j KUBE-SVC-" + h,
              "-A KUBE-EXT-" + h + " -m comment --comment \"masquerade LOCAL traffic for ns1/svc1:p80 external "
                                   "destinations\" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ",
              "-A KUBE-EXT-" + h + " -m comment --comment \"route LOCAL traffic for ns1/svc1:p80 external "
                                   "destinations\" -m addrtype --src-type LOCAL -j KUBE-SVC-" + h,
              "-A KUBE-EXT-" + h + " -j KUBE-SVL-" + h,
          });
    CHECK(Lines(f.nat_rules, "-A KUBE-SVL-").size() == 1);  // this node's one endpoint
    CHECK(Lines(f.nat_rules, "-A KUBE-SVC-" + h + " -m comment --comment \"ns1/svc1:p80 ->").size() == 2);
    const Fragment elsewhere = RenderServicePort(p, {"node-3", "10.0.0.0/8", false});
    CHECK(Lines(elsewhere.nat_rules, "-A KUBE-EXT-").size() == 3);  // no KUBE-SVL to go to
    CHECK(Lines(elsewhere.filter_rules) ==
          std::vector<std::string>{"-A KUBE-EXTERNAL-SERVICES -m comment --comment \"ns1/svc1:p80 has no local "
                                   "endpoints\" -m addrtype --dst-type LOCAL -m tcp -p tcp --dport 30080 -j DROP"});
  }
}

TEST_CASE("a LoadBalancer's health check node port is accepted over TCP, whatever the port's protocol",
          "[proxy][iptables]") {
  ServicePort p = Svc1({Ep("10.0.1.1", "node-1")});
  p.port_name = "dns";
  p.protocol = "udp";
  p.node_port = 30053;
  p.health_check_node_port = 32000;
  p.external_local = true;
  CHECK(Lines(RenderServicePort(p, kNode).filter_rules, "-A KUBE-NODEPORTS") ==
        std::vector<std::string>{"-A KUBE-NODEPORTS -m comment --comment \"ns1/svc1:dns health check node port\" -m "
                                 "tcp -p tcp --dport 32000 -j ACCEPT"});
}

TEST_CASE("headless and ExternalName services have no rules", "[proxy][iptables]") {
  ServicePort p = Svc1({Ep("10.0.1.1")});
  p.cluster_ip = "None";
  const Fragment f = RenderServicePort(p, kNode);
  CHECK(f.nat_chains.empty());
  CHECK(f.nat_rules.empty());
  CHECK(f.filter_rules.empty());
}

std::string Decode(const std::string& yaml) {
  auto docs = model::DecodeManifests(yaml);
  REQUIRE(docs.ok());
  REQUIRE((*docs)[0].status.ok());
  return (*docs)[0].object.bytes;
}

TEST_CASE("a Service and its EndpointSlices become service ports as kube-proxy reads them", "[proxy][iptables]") {
  const std::string service = Decode(R"(apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  type: NodePort
  clusterIP: 10.96.0.20
  sessionAffinity: ClientIP
  externalTrafficPolicy: Local
  ports:
  - {name: http, port: 80, targetPort: 8080, nodePort: 30080}
  - {name: dns, port: 53, protocol: UDP, nodePort: 30053}
)");
  const std::string slice_a = Decode(R"(apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-abcde, namespace: shop, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: http, protocol: TCP, port: 8080}, {name: dns, protocol: UDP, port: 5353}]
endpoints:
- {addresses: [10.244.1.2], nodeName: node-1, conditions: {ready: true, serving: true, terminating: false}}
- {addresses: [10.244.2.2], nodeName: node-2, conditions: {ready: false, serving: true, terminating: true}}
)");
  const std::string slice_b = Decode(R"(apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-fghij, namespace: shop, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: http, protocol: TCP, port: 8080}]
endpoints:
- {addresses: [10.244.1.2], nodeName: node-1}
- {addresses: [10.244.3.2], nodeName: node-3}
)");
  std::vector<const api::EndpointSlice*> slices = {flatbuffers::GetRoot<api::EndpointSlice>(slice_a.data()),
                                                   flatbuffers::GetRoot<api::EndpointSlice>(slice_b.data())};
  const auto ports = ServicePortsOf(*flatbuffers::GetRoot<api::Service>(service.data()), slices);
  REQUIRE(ports.size() == 2);
  CHECK(ports[0].Name() == "shop/web:http");
  CHECK(ports[0].protocol == "tcp");
  CHECK(ports[0].node_port == 30080);
  CHECK(ports[0].affinity_seconds == 10800);
  CHECK(ports[0].external_local);
  REQUIRE(ports[0].endpoints.size() == 3);  // 10.244.1.2 once
  CHECK(ports[0].endpoints[0].port == 8080);
  CHECK(ports[0].endpoints[1].terminating);
  CHECK_FALSE(ports[0].endpoints[1].ready);
  CHECK(ports[0].endpoints[2].ready);  // unset conditions count as ready
  CHECK(ports[1].protocol == "udp");
  REQUIRE(ports[1].endpoints.size() == 2);
  CHECK(ports[1].endpoints[0].port == 5353);
}

TEST_CASE("a Ruleset re-renders only what changed and renders the whole document", "[proxy][iptables]") {
  Ruleset rules({"", "10.244.0.0/16", false});
  ServicePort a = Svc1({Ep("10.0.1.1")});
  ServicePort b = Svc1({Ep("10.0.2.1", "node-2")});
  b.service = "svc2";
  b.internal_local = true;
  rules.Set(a);
  rules.Set(b);
  CHECK(rules.size() == 2);
  const std::string on1 = rules.Render("node-1"), on2 = rules.Render("node-2");
  CHECK(on1.rfind("*filter\n", 0) == 0);
  CHECK(on1.find("COMMIT\n*nat\n") != std::string::npos);
  CHECK(on1.substr(on1.size() - 7) == "COMMIT\n");
  // The node ports jump is the last rule of KUBE-SERVICES.
  const auto services = Lines(on1, "-A KUBE-SERVICES");
  CHECK(services.back().find("KUBE-NODEPORTS") != std::string::npos);
  CHECK(on1.find("has no local endpoints") != std::string::npos);  // svc2's endpoint is on node-2
  CHECK(on2.find("has no local endpoints") == std::string::npos);
  a.endpoints.push_back(Ep("10.0.1.2"));
  rules.Set(a);
  CHECK(Lines(rules.Render("node-1"), ":KUBE-SEP-").size() == 2);
  rules.RemoveService("ns1", "svc1");
  CHECK(rules.size() == 1);
  CHECK(rules.Render("node-2").find("ns1/svc1 ") == std::string::npos);
}

// Runs `iptables-restore --test` on `document` inside a network namespace
// of its own (unshare), or says why it cannot.
std::optional<std::string> RestoreTestUnavailable() {
  if (::geteuid() != 0) return "not root";
  if (::access("/usr/sbin/iptables-restore", X_OK) != 0 && ::access("/sbin/iptables-restore", X_OK) != 0) {
    return "no iptables-restore (Debian's iptables package)";
  }
  if (std::system("unshare --net true >/dev/null 2>&1") != 0) return "cannot make a network namespace";
  // The kernel must take rules at all (nf_tables or the legacy tables): an
  // empty nat table tells.
  if (std::system("printf '*nat\\nCOMMIT\\n' | unshare --net iptables-restore --test >/dev/null 2>&1") != 0) {
    return "iptables-restore --test refuses even an empty nat table here (no netfilter in this kernel?)";
  }
  return std::nullopt;
}

TEST_CASE("every rendered ruleset passes iptables-restore --test in a namespace of its own", "[proxy][iptables]") {
  if (auto why = RestoreTestUnavailable()) {
    WARN("skipped: iptables-restore --test needs root, iptables and network namespaces: " << *why);
    return;
  }
  Ruleset rules({"", "10.244.0.0/16", false});
  ServicePort cluster = Svc1({Ep("10.244.1.5"), Ep("10.244.1.1"), Ep("10.244.2.2", "node-2")});
  rules.Set(cluster);
  ServicePort node_port = Svc1({Ep("10.244.1.7")});
  node_port.service = "np";
  node_port.port_name = "http";
  node_port.node_port = 30080;
  node_port.cluster_ip = "10.96.0.21";
  node_port.external_ips = {"192.0.2.10"};
  rules.Set(node_port);
  ServicePort sticky = Svc1({Ep("10.244.1.8"), Ep("10.244.2.8", "node-2")});
  sticky.service = "sticky";
  sticky.cluster_ip = "10.96.0.22";
  sticky.affinity_seconds = 600;
  rules.Set(sticky);
  ServicePort local = Svc1({Ep("10.244.2.9", "node-2")});
  local.service = "local";
  local.cluster_ip = "10.96.0.23";
  local.node_port = 30090;
  local.external_local = true;
  local.internal_local = true;
  rules.Set(local);
  ServicePort empty = Svc1({});
  empty.service = "empty";
  empty.cluster_ip = "10.96.0.24";
  empty.node_port = 30100;
  empty.protocol = "udp";
  rules.Set(empty);
  PodHostPorts many{"uid-2", "10.244.1.10", {}};
  for (int32_t port = 9000; port < 9020; ++port) many.ports.push_back({"tcp", port, port, ""});
  const Fragment host_ports = RenderHostPorts(
      {{"uid-1", "10.244.1.9", {{"tcp", 8080, 80, ""}, {"udp", 5353, 53, "192.168.0.2"}}}, many}, "10.244.1.0/24");
  testing::TempDir dir("podflow-rules");
  for (const std::string name : {"node-1", "node-2", "node-1 owned", "node-2 owned"}) {
    INFO(name);
    const std::string node = name.substr(0, name.find(' '));
    const std::string path = dir.path() + "/" + node + (node == name ? "" : "-owned") + ".rules";
    const std::string document =
        node == name ? rules.Render(node) : rules.RenderOwned(node, node == "node-2" ? &host_ports : nullptr);
    std::ofstream(path) << document;
    const std::string command = "unshare --net iptables-restore --test < " + path + " 2>" + path + ".err";
    const int rc = std::system(command.c_str());
    std::ifstream err(path + ".err");
    const std::string why((std::istreambuf_iterator<char>(err)), std::istreambuf_iterator<char>());
    INFO(document);
    INFO(why);
    CHECK(rc == 0);
  }
}


TEST_CASE("hostPorts: the CNI portmap plugin's chains — DNAT to the pod, hairpin and localhost masqueraded",
          "[proxy][iptables]") {
  const Fragment none = RenderHostPorts({{"uid-0", "10.244.1.4", {}}}, "10.244.1.0/24");
  CHECK(none.nat_chains.empty());
  CHECK(none.nat_rules.empty());
  const Fragment f = RenderHostPorts(
      {{"uid-1", "10.244.1.9", {{"tcp", 8080, 80, ""}, {"tcp", 8443, 443, "0.0.0.0"}, {"udp", 5353, 53, "192.168.0.2"}}}},
      "10.244.1.0/24");
  const std::string chain = HostPortChain("uid-1");
  CHECK(chain.size() == 28);
  CHECK(chain.rfind("CNI-DN-", 0) == 0);
  CHECK(chain != HostPortChain("uid-2"));
  CHECK(Lines(f.nat_chains) == std::vector<std::string>{":CNI-HOSTPORT-DNAT - [0:0]", ":CNI-HOSTPORT-SETMARK - [0:0]",
                                                        ":CNI-HOSTPORT-MASQ - [0:0]", ":" + chain + " - [0:0]"});
  CHECK(Lines(f.nat_rules, "-A PREROUTING") ==
        std::vector<std::string>{"-A PREROUTING -m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT"});
  CHECK(Lines(f.nat_rules, "-A OUTPUT") ==
        std::vector<std::string>{"-A OUTPUT -m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT"});
  CHECK(Lines(f.nat_rules, "-A CNI-HOSTPORT-MASQ") ==
        std::vector<std::string>{"-A CNI-HOSTPORT-MASQ -m mark --mark 0x2000/0x2000 -j MASQUERADE"});
  // One jump per protocol, its ports together.
  CHECK(Lines(f.nat_rules, "-A CNI-HOSTPORT-DNAT") ==
        std::vector<std::string>{
            "-A CNI-HOSTPORT-DNAT -p tcp -m comment --comment \"dnat name: \\\"podflow\\\" id: \\\"uid-1\\\"\" -m "
            "multiport --dports 8080,8443 -j " + chain,
            "-A CNI-HOSTPORT-DNAT -p udp -m comment --comment \"dnat name: \\\"podflow\\\" id: \\\"uid-1\\\"\" -m "
            "multiport --dports 5353 -j " + chain});
  CHECK(Lines(f.nat_rules, "-A " + chain) ==
        std::vector<std::string>{
            "-A " + chain + " -s 10.244.1.0/24 -p tcp -m tcp --dport 8080 -j CNI-HOSTPORT-SETMARK",
            "-A " + chain + " -s 127.0.0.1/32 -p tcp -m tcp --dport 8080 -j CNI-HOSTPORT-SETMARK",
            "-A " + chain + " -p tcp -m tcp --dport 8080 -j DNAT --to-destination 10.244.1.9:80",
            "-A " + chain + " -s 10.244.1.0/24 -p tcp -m tcp --dport 8443 -j CNI-HOSTPORT-SETMARK",
            "-A " + chain + " -s 127.0.0.1/32 -p tcp -m tcp --dport 8443 -j CNI-HOSTPORT-SETMARK",
            "-A " + chain + " -p tcp -m tcp --dport 8443 -j DNAT --to-destination 10.244.1.9:443",
            "-A " + chain + " -s 10.244.1.0/24 -d 192.168.0.2/32 -p udp -m udp --dport 5353 -j CNI-HOSTPORT-SETMARK",
            "-A " + chain + " -s 127.0.0.1/32 -d 192.168.0.2/32 -p udp -m udp --dport 5353 -j CNI-HOSTPORT-SETMARK",
            "-A " + chain + " -d 192.168.0.2/32 -p udp -m udp --dport 5353 -j DNAT --to-destination 10.244.1.9:53"});
  // Up to 15 ports to a multiport match, as iptables takes them.
  PodHostPorts many{"uid-9", "10.244.1.10", {}};
  for (int32_t port = 9000; port < 9016; ++port) many.ports.push_back({"tcp", port, port, ""});
  const std::vector<std::string> jumps = Lines(RenderHostPorts({many}, "").nat_rules, "-A CNI-HOSTPORT-DNAT");
  REQUIRE(jumps.size() == 2);
  CHECK(jumps[0].find("--dports 9000,9001,9002,9003,9004,9005,9006,9007,9008,9009,9010,9011,9012,9013,9014 -j") !=
        std::string::npos);
  CHECK(jumps[1].find("--dports 9015 -j") != std::string::npos);
  // Beside kube-proxy's in a node's own document: after its jumps.
  Ruleset rules({"", "10.244.0.0/16", false});
  const std::string document = rules.RenderOwned("node-1", &f);
  const std::vector<std::string> prerouting = Lines(document, "-A PREROUTING");
  REQUIRE(prerouting.size() == 2);
  CHECK(prerouting[0].find("KUBE-SERVICES") != std::string::npos);
  CHECK(prerouting[1].find("CNI-HOSTPORT-DNAT") != std::string::npos);
  CHECK(document.find(":" + chain + " - [0:0]") < document.find("-A " + chain));
}

TEST_CASE("hostPorts: a pod's, as the plugin is handed them — its containers' and sidecars' ports with a hostPort, "
          "once it has its own IP",
          "[proxy][iptables]") {
  const std::string running = Decode(R"(apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default, uid: 0b6e3c52-0000-4000-8000-000000000001}
spec:
  nodeName: node-1
  initContainers:
  - {name: setup, image: busybox, ports: [{containerPort: 7000, hostPort: 7000}]}
  - {name: proxy, image: envoy, restartPolicy: Always, ports: [{containerPort: 9901, hostPort: 19901}]}
  containers:
  - name: web
    image: nginx
    ports: [{containerPort: 80, hostPort: 8080}, {containerPort: 443}, {containerPort: 53, hostPort: 5353, protocol: UDP, hostIP: 192.168.0.2}]
status: {phase: Running, podIP: 10.244.1.9}
)");
  const PodHostPorts ports = HostPortsOf(*flatbuffers::GetRoot<api::Pod>(running.data()));
  CHECK(ports.id == "0b6e3c52-0000-4000-8000-000000000001");
  CHECK(ports.pod_ip == "10.244.1.9");
  CHECK(ports.ports == std::vector<HostPortMapping>{{"tcp", 19901, 9901, ""}, {"tcp", 8080, 80, ""},
                                                    {"udp", 5353, 53, "192.168.0.2"}});
  for (const char* status : {"{phase: Pending}", "{phase: Succeeded, podIP: 10.244.1.9}"}) {
    INFO(status);
    std::string yaml = R"(apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default, uid: u}
spec:
  containers: [{name: web, image: nginx, ports: [{containerPort: 80, hostPort: 8080}]}]
status: )";
    const std::string pod = Decode(yaml + status + "\n");
    CHECK(HostPortsOf(*flatbuffers::GetRoot<api::Pod>(pod.data())).ports.empty());
  }
  const std::string host_network = Decode(R"(apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default, uid: u}
spec:
  hostNetwork: true
  containers: [{name: web, image: nginx, ports: [{containerPort: 8080, hostPort: 8080}]}]
status: {phase: Running, podIP: 192.168.0.2}
)");
  CHECK(HostPortsOf(*flatbuffers::GetRoot<api::Pod>(host_network.data())).ports.empty());
}

}  // namespace
}  // namespace podflow::proxy::rules
