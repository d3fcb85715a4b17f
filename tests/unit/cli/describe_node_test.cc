#include <catch2/catch.hpp>

#include "cli/cli_test_util.h"
#include "cli/describe.h"

namespace podflow::cli {
namespace {

const char* kNode = R"(apiVersion: v1
kind: Node
metadata: {name: node-1, creationTimestamp: "2025-01-14T11:00:00Z"}
spec:
  taints:
  - {key: node.kubernetes.io/unreachable, effect: NoExecute, timeAdded: "2025-01-14T11:59:00Z"}
status:
  conditions:
  - {type: Ready, status: Unknown, reason: NodeStatusUnknown, message: Kubelet stopped posting node status.,
     lastHeartbeatTime: "2025-01-14T11:58:00Z", lastTransitionTime: "2025-01-14T11:59:00Z"}
)";

TEST_CASE("describe node: the Lease section, as kubectl prints it, only when the node has a lease") {
  setenv("TZ", "UTC", 1);
  tzset();
  const std::string node = testing::One(kNode);
  const std::string lease = testing::One(R"(apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: node-1, namespace: kube-node-lease}
spec: {holderIdentity: node-1, leaseDurationSeconds: 40, renewTime: "2025-01-14T11:58:10.250000Z"}
)");
  const std::string with = DescribeNode(node, {}, {}, testing::Now(), lease);
  INFO(with);
  CHECK(with.find("Unschedulable:      false\nLease:\n  HolderIdentity:  node-1\n  AcquireTime:     <unset>\n"
                  "  RenewTime:       Tue, 14 Jan 2025 11:58:10 +0000\nConditions:") != std::string::npos);
  CHECK(with.find("Taints:             node.kubernetes.io/unreachable:NoExecute") != std::string::npos);
  const std::string without = DescribeNode(node, {}, {}, testing::Now());
  CHECK(without.find("Lease:") == std::string::npos);
  CHECK(without.find("Unschedulable:      false\nConditions:") != std::string::npos);
}

}  // namespace
}  // namespace podflow::cli
