#include "netns/pod_network.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "base/hex_id.h"
#include "netns/command.h"

namespace podflow::netns {
namespace {

constexpr char kNetnsDir[] = "/run/netns";

// Interface names are at most 15 characters: a short stable hash of what
// the interface belongs to.
std::string ShortHash(const std::string& text) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  char out[9];
  std::snprintf(out, sizeof out, "%08x", static_cast<unsigned>(h ^ (h >> 32)));
  return out;
}

// A file name of at most 255 bytes: long names are shortened to a hash.
std::string NamespaceName(const std::string& prefix, const char* what, const std::string& name) {
  std::string full = prefix + "-" + what + "-" + name;
  if (full.size() <= 200) return full;
  return prefix + "-" + what + "-" + ShortHash(name);
}

Status Ip(const std::string& ns, std::vector<std::string> args) {
  std::vector<std::string> argv = {"ip"};
  if (!ns.empty()) argv.insert(argv.end(), {"-n", ns});
  argv.insert(argv.end(), args.begin(), args.end());
  return RunChecked(argv);
}

// `ip` commands in order, up to the first that fails.
struct IpStep {
  std::string ns;
  std::vector<std::string> args;
};
Status IpSteps(const std::vector<IpStep>& steps) {
  for (const IpStep& step : steps) {
    if (Status s = Ip(step.ns, step.args); !s.ok()) return s;
  }
  return Status::Ok();
}

// Writes a sysctl under /proc/sys inside the namespace (/proc/sys/net is
// the opener's namespace's): in a child that joins it, so that this
// process's threads stay where they are.
Status WriteSysctl(const std::string& ns, const std::string& path, const char* value) {
  const std::string ns_path = std::string(kNetnsDir) + "/" + ns;
  const pid_t pid = ::fork();
  if (pid < 0) return Status::Internal(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    const int fd = ::open(ns_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) ::_exit(2);
    const int sysctl = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (sysctl < 0) ::_exit(3);
    const size_t n = std::strlen(value);
    ::_exit(::write(sysctl, value, n) == static_cast<ssize_t>(n) ? 0 : 4);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::Ok();
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return Status::Internal("setting " + path + " in " + ns + ": " +
                          (code == 2 ? "cannot join the namespace" : code == 3 ? "no such setting" : "write failed"));
}

std::string Address(const std::string& with_prefix) { return with_prefix.substr(0, with_prefix.find('/')); }

}  // namespace

std::optional<std::string> Unavailable() {
  if (::geteuid() != 0) return "not root";
  if (!HasProgram("ip")) return "no `ip` (Debian's iproute2)";
  if (::access("/proc/self/ns/net", R_OK) != 0) return "no network namespaces in this kernel";
  // A container may forbid what a pod network takes (a named namespace is
  // a mount under /run/netns): one made and removed tells.
  const std::string probe = "podflow-probe-" + std::to_string(::getpid());
  Result<CommandResult> made = RunCommand({"ip", "netns", "add", probe});
  if (!made.ok()) return made.status().message();
  if (made->exit_code != 0) {
    std::string why = made->err;
    while (!why.empty() && why.back() == '\n') why.pop_back();
    return "`ip netns add` is refused here: " + why;
  }
  RunCommand({"ip", "netns", "del", probe});
  return std::nullopt;
}

PodNetwork::PodNetwork(std::string prefix) : prefix_(std::move(prefix)), fabric_(prefix_ + "-fabric") {}

Status PodNetwork::RemoveAll(const std::string& prefix) {
  std::error_code ec;
  if (!std::filesystem::exists(kNetnsDir, ec)) return Status::Ok();
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(kNetnsDir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix + "-", 0) == 0) names.push_back(name);
  }
  Status first;
  for (const std::string& name : names) {
    if (Status s = Ip("", {"netns", "del", name}); !s.ok() && first.ok()) first = s;
  }
  return first;
}

Result<std::unique_ptr<PodNetwork>> PodNetwork::Create(std::string prefix) {
  if (auto why = Unavailable()) return Status::Unavailable("no pod network: " + *why);
  if (prefix.empty() || prefix.find('/') != std::string::npos) {
    return Status::Invalid("pod network prefix \"" + prefix + "\": not a file name");
  }
  if (Status s = RemoveAll(prefix); !s.ok()) return s;
  std::unique_ptr<PodNetwork> net(new PodNetwork(std::move(prefix)));
  const std::string& fabric = net->fabric_;
  Status made = IpSteps({{"", {"netns", "add", fabric}},
                         {fabric, {"link", "set", "lo", "up"}},
                         {fabric, {"link", "add", "br0", "type", "bridge"}},
                         {fabric, {"link", "set", "br0", "up"}}});
  if (!made.ok()) return made;  // the destructor removes what was made
  return net;
}

PodNetwork::~PodNetwork() { RemoveAll(prefix_); }

std::string PrefixFor(const std::string& data_dir) {
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(data_dir, ec);
  std::string path = ec ? data_dir : absolute.lexically_normal().string();
  while (path.size() > 1 && path.back() == '/') path.pop_back();  // "/x/" is "/x"
  return "podflow-" + DeterministicHex(path, 12);
}

std::string NodeNamespaceName(const std::string& prefix, const std::string& node) {
  return NamespaceName(prefix, "node", node);
}
std::string PodNamespaceName(const std::string& prefix, const std::string& pod) {
  return NamespaceName(prefix, "pod", pod);
}

bool NamespaceExists(const std::string& name) {
  std::error_code ec;
  return std::filesystem::exists(std::string(kNetnsDir) + "/" + name, ec);
}

bool NamedNamespaceIs(const std::string& name, int fd) {
  struct stat named {}, held {};
  if (::stat((std::string(kNetnsDir) + "/" + name).c_str(), &named) != 0 || ::fstat(fd, &held) != 0) return false;
  return named.st_dev == held.st_dev && named.st_ino == held.st_ino;
}

Result<int> OpenNamespace(const std::string& name) {
  const std::string path = std::string(kNetnsDir) + "/" + name;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::NotFound("network namespace " + name + ": " + std::strerror(errno));
  return fd;
}

ThreadInNamespace::ThreadInNamespace(const std::string& name) {
  Result<int> target = OpenNamespace(name);
  if (!target.ok()) {
    status_ = target.status();
    return;
  }
  own_ = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (own_ < 0 || ::setns(*target, CLONE_NEWNET) != 0) {
    status_ = Status::Unavailable("entering network namespace " + name + ": " + std::strerror(errno));
    if (own_ >= 0) ::close(own_);
    own_ = -1;
  }
  ::close(*target);
}

ThreadInNamespace::~ThreadInNamespace() {
  if (own_ < 0) return;
  // Its own namespace is always one it may go back to; a thread left in
  // another would be a bug to stop at.
  if (::setns(own_, CLONE_NEWNET) != 0) {
    std::fprintf(stderr, "podflow: cannot return to this thread's network namespace: %s\n", std::strerror(errno));
    std::abort();
  }
  ::close(own_);
}

std::string PodNetwork::NodeNamespace(const std::string& node) const { return NodeNamespaceName(prefix_, node); }
std::string PodNetwork::PodNamespace(const std::string& pod) const { return PodNamespaceName(prefix_, pod); }

Status PodNetwork::AddNode(const std::string& node, const NodeAddresses& addresses) {
  if (nodes_.contains(node)) return Status::AlreadyExists("node " + node + " is on the pod network already");
  const std::string ns = NodeNamespace(node);
  const std::string uplink = "vn" + ShortHash(node);
  std::vector<IpStep> steps = {{"", {"netns", "add", ns}},
                                {ns, {"link", "set", "lo", "up"}},
                                {fabric_, {"link", "add", uplink, "type", "veth", "peer", "name", "eth0", "netns", ns}},
                                {fabric_, {"link", "set", uplink, "master", "br0", "up"}},
                                {ns, {"addr", "add", addresses.address, "dev", "eth0"}},
                                {ns, {"link", "set", "eth0", "up"}},
                                {ns, {"link", "add", "cbr0", "type", "bridge"}},
                                {ns, {"addr", "add", addresses.gateway, "dev", "cbr0"}},
                                {ns, {"link", "set", "cbr0", "up"}}};
  // Host-gateway routes both ways with every other node.
  for (const auto& [other, known] : nodes_) {
    steps.push_back({ns, {"route", "add", known.addresses.pod_cidr, "via", Address(known.addresses.address)}});
  }
  Status made = IpSteps(steps);
  if (made.ok()) made = WriteSysctl(ns, "/proc/sys/net/ipv4/ip_forward", "1");
  // Localhost may be DNATed to a pod (a hostPort, a NodePort on
  // 127.0.0.1), as the portmap plugin and kube-proxy let it.
  if (made.ok()) made = WriteSysctl(ns, "/proc/sys/net/ipv4/conf/all/route_localnet", "1");
  if (!made.ok()) {
    Ip(fabric_, {"link", "del", uplink});
    Ip("", {"netns", "del", ns});
    return made;
  }
  std::vector<std::string> routed;  // the nodes given a route to it so far
  for (const auto& [other, known] : nodes_) {
    if (Status s = Ip(NodeNamespace(other), {"route", "add", addresses.pod_cidr, "via", Address(addresses.address)});
        !s.ok()) {
      for (const std::string& back : routed) Ip(NodeNamespace(back), {"route", "del", addresses.pod_cidr});
      Ip(fabric_, {"link", "del", uplink});
      Ip("", {"netns", "del", ns});
      return s;
    }
    routed.push_back(other);
  }
  // Bridged pod-to-pod traffic through the node's iptables, so that a
  // service's DNAT and its reply meet in conntrack (br_netfilter; a
  // kernel without it still routes, without hairpin through a service).
  if (std::filesystem::exists("/proc/sys/net/bridge/bridge-nf-call-iptables")) {
    WriteSysctl(ns, "/proc/sys/net/bridge/bridge-nf-call-iptables", "1");
  }
  nodes_[node].addresses = addresses;
  return Status::Ok();
}

Status PodNetwork::RemoveNode(const std::string& node) {
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return Status::NotFound("node " + node + " is not on the pod network");
  for (const std::string& pod : std::set<std::string>(it->second.pods)) RemovePod(pod);
  const NodeAddresses gone = it->second.addresses;
  nodes_.erase(it);
  for (const auto& [other, known] : nodes_) Ip(NodeNamespace(other), {"route", "del", gone.pod_cidr});
  // Its uplink now (with its peer, the node's eth0 and address): the
  // namespace itself lives on while anything holds it (a socket of the
  // cluster DNS), and the name is free for the node to come back at once.
  Status first = Ip(fabric_, {"link", "del", "vn" + ShortHash(node)});
  Status removed = Ip("", {"netns", "del", NodeNamespace(node)});
  return first.ok() ? removed : first;
}

Status PodNetwork::AddPod(const std::string& node, const std::string& pod, const std::string& address) {
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return Status::NotFound("node " + node + " is not on the pod network");
  if (pod_nodes_.contains(pod)) return Status::AlreadyExists("pod " + pod + " is on the pod network already");
  const std::string node_ns = NodeNamespace(node), ns = PodNamespace(pod);
  const std::string port = "vp" + ShortHash(pod);
  Status made = IpSteps({{"", {"netns", "add", ns}},
                         {ns, {"link", "set", "lo", "up"}},
                         {node_ns, {"link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns}},
                         {node_ns, {"link", "set", port, "master", "cbr0", "up"}},
                         {node_ns, {"link", "set", port, "type", "bridge_slave", "hairpin", "on"}},
                         {ns, {"addr", "add", address, "dev", "eth0"}},
                         {ns, {"link", "set", "eth0", "up"}},
                         {ns, {"route", "add", "default", "via", Address(it->second.addresses.gateway)}}});
  if (!made.ok()) {
    Ip(node_ns, {"link", "del", port});
    Ip("", {"netns", "del", ns});
    return made;
  }
  // The address may have been an earlier pod's: the node forgets that
  // pod's link-layer address now rather than after its cache times out.
  Ip(node_ns, {"neigh", "flush", "to", Address(address)});
  it->second.pods.insert(pod);
  pod_nodes_[pod] = node;
  return Status::Ok();
}

Status PodNetwork::RemovePod(const std::string& pod) {
  auto it = pod_nodes_.find(pod);
  if (it == pod_nodes_.end()) return Status::NotFound("pod " + pod + " is not on the pod network");
  const std::string node = it->second;
  nodes_[node].pods.erase(pod);
  pod_nodes_.erase(it);
  // Its veth now, off the node's bridge (the namespace itself may outlive
  // this while its processes are reaped): its address is free at once.
  Status first = Ip(NodeNamespace(node), {"link", "del", "vp" + ShortHash(pod)});
  Status removed = Ip("", {"netns", "del", PodNamespace(pod)});
  return first.ok() ? removed : first;
}

Status PodNetwork::ApplyRules(const std::string& node, const std::string& document) {
  if (!nodes_.contains(node)) return Status::NotFound("node " + node + " is not on the pod network");
  return RunChecked({"ip", "netns", "exec", NodeNamespace(node), "iptables-restore"}, document);
}

}  // namespace podflow::netns
