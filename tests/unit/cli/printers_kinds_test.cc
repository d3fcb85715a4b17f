// kubectl's columns for workloads, configuration, RBAC and the cluster kinds.
#include <catch2/catch.hpp>

#include "cli/cli_test_util.h"
#include "cli/printers.h"
#include "model/objects.h"

namespace podflow::cli {
namespace {

using testing::Now;
using testing::Objects;

std::string Render(std::string_view kind, const std::string& yaml, bool wide = false) {
  PrintOptions options;
  options.wide = wide;
  return RenderTable(BuildTable(model::Kind(kind), Objects(yaml), options, Now()));
}

TEST_CASE("workloads print kubectl's columns", "[cli][printers]") {
  CHECK(Render("Deployment", R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: nginx-deployment, creationTimestamp: "2025-01-14T11:59:42Z"}
spec:
  replicas: 3
  selector: {matchLabels: {app: nginx}}
  template:
    metadata: {labels: {app: nginx}}
    spec: {containers: [{name: nginx, image: "nginx:1.14.2"}]}
status: {replicas: 3, updatedReplicas: 3, readyReplicas: 2, availableReplicas: 2}
)",
               true) ==
        "NAME               READY   UP-TO-DATE   AVAILABLE   AGE   CONTAINERS   IMAGES         SELECTOR\n"
        "nginx-deployment   2/3     3            2           18s   nginx        nginx:1.14.2   app=nginx\n");

  CHECK(Render("Job", R"(apiVersion: batch/v1
kind: Job
metadata: {name: pi, creationTimestamp: "2025-01-14T11:58:00Z"}
spec: {completions: 1, parallelism: 1, template: {spec: {containers: [{name: pi, image: "perl:5.34.0"}]}}}
status:
  startTime: "2025-01-14T11:58:00Z"
  completionTime: "2025-01-14T11:58:41Z"
  succeeded: 1
  conditions: [{type: Complete, status: "True"}]
)") == "NAME   STATUS     COMPLETIONS   DURATION   AGE\n"
       "pi     Complete   1/1           41s        2m\n");

  CHECK(Render("CronJob", R"(apiVersion: batch/v1
kind: CronJob
metadata: {name: hello, creationTimestamp: "2025-01-14T11:00:00Z"}
spec: {schedule: "* * * * *", suspend: false, jobTemplate: {spec: {template: {spec: {containers: [{name: h, image: busybox}]}}}}}
)") == "NAME    SCHEDULE    TIMEZONE   SUSPEND   ACTIVE   LAST SCHEDULE   AGE\n"
       "hello   * * * * *   <none>     False     0        <none>          60m\n");

  CHECK(Render("DaemonSet", R"(apiVersion: apps/v1
kind: DaemonSet
metadata: {name: fluentd, creationTimestamp: "2025-01-14T11:59:00Z"}
spec:
  selector: {matchLabels: {name: fluentd}}
  template:
    metadata: {labels: {name: fluentd}}
    spec: {nodeSelector: {disktype: ssd}, containers: [{name: f, image: fluentd}]}
status: {desiredNumberScheduled: 3, currentNumberScheduled: 3, numberReady: 1, updatedNumberScheduled: 3, numberAvailable: 1}
)") == "NAME      DESIRED   CURRENT   READY   UP-TO-DATE   AVAILABLE   NODE SELECTOR   AGE\n"
       "fluentd   3         3         1       3            1           disktype=ssd    60s\n");
}

TEST_CASE("configuration, RBAC and cluster kinds print kubectl's columns", "[cli][printers]") {
  CHECK(Render("Secret", R"(apiVersion: v1
kind: Secret
metadata: {name: basic, creationTimestamp: "2025-01-14T11:59:00Z"}
data: {password: YQ==, username: Yg==}
type: kubernetes.io/basic-auth
)") == "NAME    TYPE                       DATA   AGE\n"
       "basic   kubernetes.io/basic-auth   2      60s\n");

  CHECK(Render("ConfigMap", R"(apiVersion: v1
kind: ConfigMap
metadata: {name: game-demo, creationTimestamp: "2025-01-14T11:59:00Z"}
data: {a: "1", b: "2", c: "3"}
)") == "NAME        DATA   AGE\ngame-demo   3      60s\n");

  CHECK(Render("RoleBinding", R"(apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: read-pods, creationTimestamp: "2025-01-14T11:59:00Z"}
subjects: [{kind: User, name: jane}, {kind: ServiceAccount, name: robot, namespace: default}]
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}
)",
               true) == "NAME        ROLE              AGE   USERS   GROUPS   SERVICEACCOUNTS\n"
                        "read-pods   Role/pod-reader   60s   jane             default/robot\n");

  CHECK(Render("StorageClass", R"(apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  creationTimestamp: "2025-01-14T11:59:00Z"
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: kubernetes.io/aws-ebs
reclaimPolicy: Delete
volumeBindingMode: Immediate
)") == "NAME                 PROVISIONER             RECLAIMPOLICY   VOLUMEBINDINGMODE   ALLOWVOLUMEEXPANSION   AGE\n"
       "standard (default)   kubernetes.io/aws-ebs   Delete          Immediate           false                  60s\n");

  CHECK(Render("EndpointSlice", R"(apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: example-abc, creationTimestamp: "2025-01-14T11:59:00Z"}
addressType: IPv4
endpoints:
- addresses: [10.1.2.3]
- addresses: [10.1.2.4]
- addresses: [10.1.2.5]
- addresses: [10.1.2.6]
ports: [{name: http, port: 80}]
)") == "NAME          ADDRESSTYPE   PORTS   ENDPOINTS                                AGE\n"
       "example-abc   IPv4          80      10.1.2.3,10.1.2.4,10.1.2.5 + 1 more...   60s\n");

  CHECK(Render("PodDisruptionBudget", R"(apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: zk-pdb, creationTimestamp: "2025-01-14T11:59:00Z"}
spec: {minAvailable: 2}
)") == "NAME     MIN AVAILABLE   MAX UNAVAILABLE   ALLOWED DISRUPTIONS   AGE\n"
       "zk-pdb   2               N/A               0                     60s\n");

  CHECK(Render("Namespace", R"(apiVersion: v1
kind: Namespace
metadata: {name: team-a, creationTimestamp: "2025-01-14T11:59:00Z"}
status: {phase: Active}
)") == "NAME     STATUS   AGE\nteam-a   Active   60s\n");
}

}  // namespace
}  // namespace podflow::cli
