// kubelet's /etc/hosts and /etc/resolv.conf for a pod, against the files
// the Kubernetes documentation shows.
#include "stages/runtime/pod_dns.h"

#include <catch2/catch.hpp>

#include "test_pods.h"

namespace podflow::runtime {
namespace {

using testing::PodFromYaml;

constexpr char kNodeResolv[] =
    "# from the node\n"
    "nameserver 192.168.1.1\n"
    "nameserver 192.168.1.2\n"
    "search corp.example.com.  lab.example.com\n"
    "options timeout:2 ndots:1\n";

TEST_CASE("the hosts file: kubelet's boilerplate, the pod's line and its hostAliases, as the docs show it") {
  auto pod = PodFromYaml(R"(apiVersion: v1
kind: Pod
metadata: {name: hostaliases-pod}
spec:
  restartPolicy: Never
  hostAliases:
  - ip: "127.0.0.1"
    hostnames: ["foo.local", "bar.local"]
  - ip: "10.1.2.3"
    hostnames: ["foo.remote", "bar.remote"]
  containers: [{name: cat-hosts, image: busybox:1.28, command: [cat], args: [/etc/hosts]}]
)");
  CHECK(HostsFile(*pod, false, {"10.200.0.5"}, "", "cluster.local") ==
        "# Kubernetes-managed hosts file.\n"
        "127.0.0.1\tlocalhost\n"
        "::1\tlocalhost ip6-localhost ip6-loopback\n"
        "fe00::0\tip6-localnet\n"
        "fe00::0\tip6-mcastprefix\n"
        "fe00::1\tip6-allnodes\n"
        "fe00::2\tip6-allrouters\n"
        "10.200.0.5\thostaliases-pod\n"
        "\n"
        "# Entries added by HostAliases.\n"
        "127.0.0.1\tfoo.local\tbar.local\n"
        "10.1.2.3\tfoo.remote\tbar.remote\n");
  // On the node's network: the node's own file, then the aliases.
  CHECK(HostsFile(*pod, true, {"192.168.0.2"}, "127.0.0.1 localhost\n", "cluster.local") ==
        "# Kubernetes-managed hosts file (host network).\n"
        "127.0.0.1 localhost\n"
        "\n"
        "# Entries added by HostAliases.\n"
        "127.0.0.1\tfoo.local\tbar.local\n"
        "10.1.2.3\tfoo.remote\tbar.remote\n");
}

TEST_CASE("the hosts file names a pod under a subdomain by its full name") {
  auto pod = PodFromYaml(R"(apiVersion: v1
kind: Pod
metadata: {name: busybox1, namespace: shop}
spec:
  hostname: busybox-1
  subdomain: busybox-subdomain
  containers: [{name: busybox, image: busybox:1.28}]
)");
  const std::string hosts = HostsFile(*pod, false, {"10.244.1.7"}, "", "cluster.local");
  CHECK(hosts.ends_with("fe00::2\tip6-allrouters\n"
                        "10.244.1.7\tbusybox-1.busybox-subdomain.shop.svc.cluster.local\tbusybox-1\n"));
}

TEST_CASE("resolv.conf by dnsPolicy, as kubelet forms it") {
  DnsSettings dns;
  dns.node_resolv_conf = kNodeResolv;
  SECTION("ClusterFirst: the cluster DNS, the namespace's search domains before the node's, ndots:5") {
    auto pod = PodFromYaml("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: shop}\n"
                           "spec: {containers: [{name: c, image: busybox}]}\n");
    const ResolvConf conf = PodResolvConf(*pod, false, dns);
    CHECK(conf.text ==
          "search shop.svc.cluster.local svc.cluster.local cluster.local corp.example.com lab.example.com\n"
          "nameserver 10.96.0.10\n"
          "options ndots:5\n");
    CHECK(conf.warnings.empty());
    // On the node's network ClusterFirst is Default: the node's own.
    CHECK(PodResolvConf(*pod, true, dns).text ==
          "search corp.example.com lab.example.com\n"
          "nameserver 192.168.1.1\n"
          "nameserver 192.168.1.2\n"
          "options timeout:2 ndots:1\n");
  }
  SECTION("ClusterFirstWithHostNet keeps the cluster DNS on the node's network") {
    auto pod = PodFromYaml("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
                           "spec: {hostNetwork: true, dnsPolicy: ClusterFirstWithHostNet, containers: [{name: c, "
                           "image: busybox}]}\n");
    CHECK(PodResolvConf(*pod, true, dns).text.starts_with("search default.svc.cluster.local svc.cluster.local "
                                                          "cluster.local corp.example.com lab.example.com\n"
                                                          "nameserver 10.96.0.10\n"));
  }
  SECTION("None: only the dnsConfig, as the docs' example shows it") {
    auto pod = PodFromYaml(R"(apiVersion: v1
kind: Pod
metadata: {namespace: default, name: dns-example}
spec:
  containers: [{name: test, image: nginx}]
  dnsPolicy: "None"
  dnsConfig:
    nameservers: ["192.0.2.1"]
    searches: [ns1.svc.cluster-domain.example, my.dns.search.suffix]
    options:
    - {name: ndots, value: "2"}
    - {name: edns0}
)");
    CHECK(PodResolvConf(*pod, false, dns).text ==
          "search ns1.svc.cluster-domain.example my.dns.search.suffix\n"
          "nameserver 192.0.2.1\n"
          "options ndots:2 edns0\n");
  }
  SECTION("dnsConfig appended: duplicates dropped, an option replaced; more than 3 nameservers cut with a warning") {
    auto pod = PodFromYaml(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, image: busybox}]
  dnsConfig:
    nameservers: [10.96.0.10, 1.1.1.1, 8.8.8.8, 9.9.9.9]
    searches: [cluster.local, extra.example]
    options: [{name: ndots, value: "3"}]
)");
    const ResolvConf conf = PodResolvConf(*pod, false, dns);
    CHECK(conf.text ==
          "search default.svc.cluster.local svc.cluster.local cluster.local corp.example.com lab.example.com "
          "extra.example\n"
          "nameserver 10.96.0.10\n"
          "nameserver 1.1.1.1\n"
          "nameserver 8.8.8.8\n"
          "options ndots:3\n");
    REQUIRE(conf.warnings.size() == 1);
    CHECK(conf.warnings[0].first == "DNSConfigForming");
    CHECK(conf.warnings[0].second ==
          "Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: "
          "10.96.0.10 1.1.1.1 8.8.8.8");
  }
  SECTION("no cluster DNS configured: ClusterFirst falls back to Default, with kubelet's warning") {
    DnsSettings none = dns;
    none.cluster_dns.clear();
    auto pod = PodFromYaml("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
                           "spec: {containers: [{name: c, image: busybox}]}\n");
    const ResolvConf conf = PodResolvConf(*pod, false, none);
    CHECK(conf.text.find("nameserver 192.168.1.1\n") != std::string::npos);
    REQUIRE(conf.warnings.size() == 1);
    CHECK(conf.warnings[0].first == "MissingClusterDNS");
  }
}

}  // namespace
}  // namespace podflow::runtime
