// The pod network for real, where this machine lets a test make network
// namespaces (root, iproute2): pods on two nodes reach each other, a
// ClusterIP reaches its endpoints through the node's kube-proxy rules, and
// nothing is left behind — after a clean stop or a crashed run.
#include "netns/pod_network.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <functional>

#include "netns/command.h"
#include "stages/proxy/rules/iptables.h"

namespace podflow::netns {
namespace {

// Runs `body` in a child process inside the namespace `ns`; its exit code.
pid_t ForkIn(const std::string& ns, const std::function<int()>& body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(("/run/netns/" + ns).c_str(), O_RDONLY);
    if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) ::_exit(90);
    ::_exit(body());
  }
  return pid;
}
int Wait(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 99;
}

// A server that answers one connection with `reply` (within 5 s).
int Serve(uint16_t port, const std::string& reply) {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  const int one = 1;
  ::setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  if (::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(s, 4) != 0) return 10;
  pollfd p{s, POLLIN, 0};
  if (::poll(&p, 1, 5000) != 1) return 11;
  const int c = ::accept(s, nullptr, nullptr);
  if (c < 0) return 12;
  return ::write(c, reply.data(), reply.size()) == static_cast<ssize_t>(reply.size()) ? 0 : 13;
}

// Connects to ip:port (retrying for up to 3 s while the server starts) and
// returns 0 when it read `expect`.
int Ask(const std::string& ip, uint16_t port, const std::string& expect) {
  for (int attempt = 0; attempt < 30; ++attempt) {
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval timeout{1, 0};
    ::setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    ::setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    ::inet_pton(AF_INET, ip.c_str(), &addr.sin_addr);
    if (::connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
      char buffer[64] = {};
      const ssize_t n = ::read(s, buffer, sizeof buffer);
      ::close(s);
      return n > 0 && std::string(buffer, static_cast<size_t>(n)) == expect ? 0 : 21;
    }
    ::close(s);
    ::usleep(100'000);
  }
  return 20;
}

// Whether `from` reaches a server on `server_ns`:`port` at ip:ask_port.
bool Reaches(const std::string& from, const std::string& server_ns, const std::string& ip, uint16_t port,
             uint16_t ask_port) {
  const pid_t server = ForkIn(server_ns, [&] { return Serve(port, "hello"); });
  const int asked = Wait(ForkIn(from, [&] { return Ask(ip, ask_port, "hello"); }));
  if (asked != 0) ::kill(server, SIGKILL);
  const int served = Wait(server);
  INFO("client " << asked << ", server " << served);
  return asked == 0 && served == 0;
}

std::vector<std::string> Namespaces(const std::string& prefix) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/run/netns", ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix + "-", 0) == 0) out.push_back(name);
  }
  return out;
}

TEST_CASE("the pod network: pods across nodes, a ClusterIP through the node's rules, nothing left behind",
          "[netns]") {
  if (auto why = Unavailable()) {
    WARN("skipped: the pod network needs root and iproute2: " << *why);
    return;
  }
  const std::string prefix = "pft" + std::to_string(::getpid());
  {
    auto created = PodNetwork::Create(prefix);
    REQUIRE(created.ok());
    PodNetwork& net = **created;
    REQUIRE(net.AddNode("n1", {"172.31.0.2/16", "10.250.1.0/24", "10.250.1.1/24"}).ok());
    REQUIRE(net.AddNode("n2", {"172.31.0.3/16", "10.250.2.0/24", "10.250.2.1/24"}).ok());
    REQUIRE(net.AddPod("n1", "a", "10.250.1.5/24").ok());
    REQUIRE(net.AddPod("n1", "b", "10.250.1.6/24").ok());
    REQUIRE(net.AddPod("n2", "c", "10.250.2.5/24").ok());
    CHECK(net.AddPod("n1", "a", "10.250.1.7/24").code() == Code::kAlreadyExists);
    CHECK(net.AddPod("n9", "z", "10.250.9.7/24").code() == Code::kNotFound);

    SECTION("a pod reaches a pod on its node and one on another node") {
      CHECK(Reaches(net.PodNamespace("a"), net.PodNamespace("b"), "10.250.1.6", 8080, 8080));
      CHECK(Reaches(net.PodNamespace("a"), net.PodNamespace("c"), "10.250.2.5", 8080, 8080));
      CHECK(Reaches(net.PodNamespace("c"), net.PodNamespace("a"), "10.250.1.5", 8080, 8080));
    }
    SECTION("a ClusterIP reaches its endpoint through kube-proxy's rules in the client's node") {
      if (!HasProgram("iptables-restore")) {
        WARN("skipped: no iptables-restore (Debian's iptables)");
        return;
      }
      proxy::rules::Ruleset rules({"", "10.250.0.0/16", false});
      proxy::rules::ServicePort far;
      far.namespace_ = "default";
      far.service = "far";
      far.cluster_ip = "10.96.7.7";
      far.port = 80;
      far.endpoints = {{.ip = "10.250.2.5", .port = 8080, .node = "n2"}};
      rules.Set(far);
      Status applied = net.ApplyRules("n1", rules.RenderOwned("n1"));
      if (!applied.ok()) {
        WARN("skipped: iptables-restore refused in the node's namespace: " << applied.ToString());
        return;
      }
      CHECK(Reaches(net.PodNamespace("a"), net.PodNamespace("c"), "10.96.7.7", 8080, 80));
      auto saved = RunCommand({"ip", "netns", "exec", net.NodeNamespace("n1"), "iptables-save", "-t", "nat"});
      REQUIRE(saved.ok());
      CHECK(saved->out.find("-A PREROUTING -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES") !=
            std::string::npos);
      // This machine's own tables are not touched.
      auto host = RunCommand({"iptables-save", "-t", "nat"});
      REQUIRE(host.ok());
      CHECK(host->out.find("default/far") == std::string::npos);
    }
    SECTION("a removed pod's namespace goes, the others stay") {
      REQUIRE(net.RemovePod("b").ok());
      const auto left = Namespaces(prefix);
      CHECK(std::find(left.begin(), left.end(), net.PodNamespace("b")) == left.end());
      CHECK(std::find(left.begin(), left.end(), net.PodNamespace("a")) != left.end());
      CHECK(net.RemovePod("b").code() == Code::kNotFound);
    }
  }
  CHECK(Namespaces(prefix).empty());
}

TEST_CASE("the pod network removes what a crashed run left", "[netns]") {
  if (auto why = Unavailable()) {
    WARN("skipped: the pod network needs root and iproute2: " << *why);
    return;
  }
  const std::string prefix = "pfl" + std::to_string(::getpid());
  auto crashed = PodNetwork::Create(prefix);
  REQUIRE(crashed.ok());
  REQUIRE((*crashed)->AddNode("n1", {"172.31.0.2/16", "10.250.1.0/24", "10.250.1.1/24"}).ok());
  REQUIRE((*crashed)->AddPod("n1", "a", "10.250.1.5/24").ok());
  crashed->release();  // as after kill -9: nothing removed
  CHECK(Namespaces(prefix).size() == 3);
  {
    auto next = PodNetwork::Create(prefix);
    REQUIRE(next.ok());
    CHECK(Namespaces(prefix) == std::vector<std::string>{prefix + "-fabric"});
  }
  CHECK(Namespaces(prefix).empty());
}

TEST_CASE("a pipeline's pod network is named by its data dir", "[netns]") {
  const std::string a = PrefixFor("/var/lib/podflow-a"), b = PrefixFor("/var/lib/podflow-b");
  CHECK(a.starts_with("podflow-"));
  CHECK(a != b);
  CHECK(PrefixFor("/var/lib/podflow-a/") == a);
  CHECK(PrefixFor("/var/lib/x/../podflow-a") == a);
  CHECK(NodeNamespaceName(a, "node-1") == a + "-node-node-1");
  CHECK(PodNamespaceName(a, "uid-1") == a + "-pod-uid-1");
  // Long names stay file names.
  CHECK(NodeNamespaceName(a, std::string(250, 'n')).size() <= 255);
}

TEST_CASE("a thread in a namespace makes its sockets there, and comes back", "[netns]") {
  if (auto why = Unavailable()) {
    WARN("skipped: the pod network needs root and iproute2: " << *why);
    return;
  }
  const std::string prefix = "pfs" + std::to_string(::getpid());
  auto created = PodNetwork::Create(prefix);
  REQUIRE(created.ok());
  PodNetwork& net = **created;
  REQUIRE(net.AddNode("n1", {"172.31.0.2/16", "10.250.1.0/24", "10.250.1.1/24"}).ok());
  REQUIRE(net.AddPod("n1", "a", "10.250.1.5/24").ok());
  CHECK(NamespaceExists(net.NodeNamespace("n1")));
  CHECK_FALSE(NamespaceExists(prefix + "-node-none"));
  const auto own_net = [] { return std::filesystem::read_symlink("/proc/thread-self/ns/net"); };
  const auto before = own_net();
  int listener = -1;
  {
    ThreadInNamespace in(net.NodeNamespace("n1"));
    REQUIRE(in.status().ok());
    CHECK(own_net() != before);
    // The node's gateway address is there, not in this machine's namespace.
    listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(9099);
    ::inet_pton(AF_INET, "10.250.1.1", &addr.sin_addr);
    REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(listener, 4) == 0);
  }
  CHECK(own_net() == before);
  // A pod reaches the socket, served from this thread outside the namespace.
  const pid_t asker = ForkIn(net.PodNamespace("a"), [&] { return Ask("10.250.1.1", 9099, "hi"); });
  pollfd p{listener, POLLIN, 0};
  REQUIRE(::poll(&p, 1, 5000) == 1);
  const int c = ::accept(listener, nullptr, nullptr);
  REQUIRE(c >= 0);
  CHECK(::write(c, "hi", 2) == 2);
  ::close(c);
  ::close(listener);
  CHECK(Wait(asker) == 0);
  ThreadInNamespace nowhere(prefix + "-node-none");
  CHECK(nowhere.status().code() == Code::kNotFound);
  CHECK(own_net() == before);
}

}  // namespace
}  // namespace podflow::netns
