// Filter verdicts and reasons of NodeName, NodeUnschedulable,
// TaintToleration, NodePorts, as Kubernetes' plugins return them.
#include <catch2/catch.hpp>

#include "builders.h"
#include "scheduler/plugins/node_name/node_name.h"
#include "scheduler/plugins/node_ports/node_ports.h"
#include "scheduler/plugins/node_unschedulable/node_unschedulable.h"
#include "scheduler/plugins/taint_toleration/taint_toleration.h"

namespace podflow::scheduler {
namespace {

using testing::MakeNode;
using testing::MakePod;
using testing::NoState;
using testing::WithPods;
using Effect = api::TaintEffect;
using TolOp = api::TolerationOperator;

struct Want {
  PluginCode code;
  std::vector<std::string> reasons;
};

void Check(const PluginStatus& got, const Want& want) {
  CHECK(PluginCodeName(got.code()) == PluginCodeName(want.code));
  CHECK(got.reasons() == want.reasons);
}

const Want kOk{PluginCode::kSuccess, {}};

TEST_CASE("NodeName") {
  plugins::NodeName p;
  const Want kNo{PluginCode::kUnschedulableAndUnresolvable, {"node(s) didn't match the requested node name"}};
  NodeInfo node = MakeNode().Name("n1").Info();
  Check(p.Filter(NoState(), MakePod().Info(), node), kOk);
  Check(p.Filter(NoState(), MakePod().Node("n1").Info(), node), kOk);
  Check(p.Filter(NoState(), MakePod().Node("n2").Info(), node), kNo);
}

TEST_CASE("NodeUnschedulable") {
  plugins::NodeUnschedulable p;
  const Want kNo{PluginCode::kUnschedulableAndUnresolvable, {"node(s) were unschedulable"}};
  NodeInfo cordoned = MakeNode().Unschedulable().Info();
  Check(p.Filter(NoState(), MakePod().Info(), MakeNode().Info()), kOk);
  Check(p.Filter(NoState(), MakePod().Info(), cordoned), kNo);
  Check(p.Filter(NoState(),
                 MakePod().Toleration("node.kubernetes.io/unschedulable", TolOp::Exists, "", Effect::NoSchedule).Info(),
                 cordoned),
        kOk);
  // Equal with the taint's empty value tolerates it too.
  Check(p.Filter(NoState(),
                 MakePod().Toleration("node.kubernetes.io/unschedulable", TolOp::Equal, "", Effect::NoSchedule).Info(),
                 cordoned),
        kOk);
  // Empty key + Exists tolerates everything.
  Check(p.Filter(NoState(), MakePod().Toleration("", TolOp::Exists, "", Effect::Unset).Info(), cordoned), kOk);
  // The wrong effect does not.
  Check(p.Filter(NoState(),
                 MakePod().Toleration("node.kubernetes.io/unschedulable", TolOp::Exists, "", Effect::NoExecute).Info(),
                 cordoned),
        kNo);
}

TEST_CASE("TaintToleration filter") {
  plugins::TaintToleration p;
  NodeInfo gpu = MakeNode().Taint("dedicated", "gpu", Effect::NoSchedule).Info();
  const Want kGpu{PluginCode::kUnschedulableAndUnresolvable, {"node(s) had untolerated taint {dedicated: gpu}"}};
  struct Case {
    const char* name;
    PodInfo pod;
    NodeInfo node;
    Want want;
  };
  std::vector<Case> cases;
  cases.push_back({"no taints", MakePod().Info(), MakeNode().Info(), kOk});
  cases.push_back({"untolerated NoSchedule", MakePod().Info(), gpu, kGpu});
  cases.push_back({"Equal key/value/effect",
                   MakePod().Toleration("dedicated", TolOp::Equal, "gpu", Effect::NoSchedule).Info(), gpu, kOk});
  cases.push_back({"unset operator means Equal",
                   MakePod().Toleration("dedicated", TolOp::Unset, "gpu", Effect::NoSchedule).Info(), gpu, kOk});
  cases.push_back({"Equal with another value",
                   MakePod().Toleration("dedicated", TolOp::Equal, "cpu", Effect::NoSchedule).Info(), gpu, kGpu});
  cases.push_back({"Exists on the key",
                   MakePod().Toleration("dedicated", TolOp::Exists, "", Effect::NoSchedule).Info(), gpu, kOk});
  cases.push_back({"empty effect matches every effect",
                   MakePod().Toleration("dedicated", TolOp::Exists, "", Effect::Unset).Info(), gpu, kOk});
  cases.push_back({"empty key with Exists tolerates all",
                   MakePod().Toleration("", TolOp::Exists, "", Effect::Unset).Info(), gpu, kOk});
  cases.push_back({"effect mismatch",
                   MakePod().Toleration("dedicated", TolOp::Exists, "", Effect::NoExecute).Info(), gpu, kGpu});
  cases.push_back({"PreferNoSchedule does not filter", MakePod().Info(),
                   MakeNode().Taint("soft", "x", Effect::PreferNoSchedule).Info(), kOk});
  cases.push_back({"NoExecute filters", MakePod().Info(),
                   MakeNode().Taint("node.kubernetes.io/not-ready", "", Effect::NoExecute).Info(),
                   {PluginCode::kUnschedulableAndUnresolvable,
                    {"node(s) had untolerated taint {node.kubernetes.io/not-ready: }"}}});
  cases.push_back({"first untolerated taint is named",
                   MakePod().Toleration("a", TolOp::Exists, "", Effect::Unset).Info(),
                   MakeNode()
                       .Taint("a", "1", Effect::NoSchedule)
                       .Taint("b", "2", Effect::NoSchedule)
                       .Taint("c", "3", Effect::NoExecute)
                       .Info(),
                   {PluginCode::kUnschedulableAndUnresolvable, {"node(s) had untolerated taint {b: 2}"}}});
  for (const auto& c : cases) {
    INFO(c.name);
    Check(p.Filter(NoState(), c.pod, c.node), c.want);
  }
}

TEST_CASE("NodePorts") {
  plugins::NodePorts p;
  const Want kNo{PluginCode::kUnschedulable, {"node(s) didn't have free ports for the requested pod ports"}};
  using api::Protocol;
  auto node_with = [](PodInfo existing) {
    return WithPods(MakeNode().Name("n").Info(), {std::move(existing)});
  };
  struct Case {
    const char* name;
    PodInfo existing;
    PodInfo pod;
    Want want;
  };
  std::vector<Case> cases;
  cases.push_back({"no host ports", MakePod().Name("e").HostPort(80).Info(), MakePod().Container().Info(), kOk});
  cases.push_back({"same port, both 0.0.0.0", MakePod().Name("e").HostPort(80).Info(),
                   MakePod().HostPort(80).Info(), kNo});
  cases.push_back({"other protocol", MakePod().Name("e").HostPort(53, Protocol::UDP).Info(),
                   MakePod().HostPort(53, Protocol::TCP).Info(), kOk});
  cases.push_back({"unset protocol is TCP", MakePod().Name("e").HostPort(53, Protocol::TCP).Info(),
                   MakePod().HostPort(53).Info(), kNo});
  cases.push_back({"different host IPs", MakePod().Name("e").HostPort(80, Protocol::TCP, "10.0.0.1").Info(),
                   MakePod().HostPort(80, Protocol::TCP, "10.0.0.2").Info(), kOk});
  cases.push_back({"same host IP", MakePod().Name("e").HostPort(80, Protocol::TCP, "10.0.0.1").Info(),
                   MakePod().HostPort(80, Protocol::TCP, "10.0.0.1").Info(), kNo});
  cases.push_back({"wanted 0.0.0.0 against a specific IP",
                   MakePod().Name("e").HostPort(80, Protocol::TCP, "10.0.0.1").Info(),
                   MakePod().HostPort(80).Info(), kNo});
  cases.push_back({"wanted specific IP against 0.0.0.0", MakePod().Name("e").HostPort(80).Info(),
                   MakePod().HostPort(80, Protocol::TCP, "10.0.0.2").Info(), kNo});
  cases.push_back({"other port", MakePod().Name("e").HostPort(80).Info(), MakePod().HostPort(81).Info(), kOk});
  // A sidecar runs beside the app containers: its host ports count, on the
  // pod placed and on the pods already there; a plain init container's,
  // stopped before the app containers start, do not.
  cases.push_back({"an incoming sidecar's port", MakePod().Name("e").HostPort(80).Info(),
                   MakePod().Container().Sidecar("proxy", "envoy").InitHostPort(80).Info(), kNo});
  cases.push_back({"a placed sidecar's port",
                   MakePod().Name("e").Container().Sidecar("proxy", "envoy").InitHostPort(80).Info(),
                   MakePod().HostPort(80).Info(), kNo});
  cases.push_back({"two sidecars on one port",
                   MakePod().Name("e").Container().Sidecar("proxy", "envoy").InitHostPort(80).Info(),
                   MakePod().Container().Sidecar("proxy", "envoy").InitHostPort(80).Info(), kNo});
  cases.push_back({"a plain init container's port", MakePod().Name("e").HostPort(80).Info(),
                   MakePod().Container().Init("setup", "busybox").InitHostPort(80).Info(), kOk});
  cases.push_back({"a placed plain init container's port",
                   MakePod().Name("e").Container().Init("setup", "busybox").InitHostPort(80).Info(),
                   MakePod().HostPort(80).Info(), kOk});
  for (auto& c : cases) {
    INFO(c.name);
    Check(p.Filter(NoState(), c.pod, node_with(c.existing)), c.want);
  }
}

}  // namespace
}  // namespace podflow::scheduler
