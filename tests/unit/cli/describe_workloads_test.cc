#include <catch2/catch.hpp>

#include "cli/cli_test_util.h"
#include "cli/describe.h"

namespace podflow::cli {
namespace {

const char* kDeployment = R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx-deployment
  namespace: default
  uid: d-1
  creationTimestamp: "2025-01-14T11:48:00Z"
  labels: {app: nginx}
  annotations: {deployment.kubernetes.io/revision: "1"}
spec:
  replicas: 3
  selector: {matchLabels: {app: nginx}}
  strategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 25%, maxSurge: 25%}}
  template:
    metadata: {labels: {app: nginx}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.14.2
        ports: [{containerPort: 80}]
status:
  replicas: 3
  updatedReplicas: 3
  readyReplicas: 3
  availableReplicas: 3
  conditions:
  - {type: Available, status: "True", reason: MinimumReplicasAvailable}
  - {type: Progressing, status: "True", reason: NewReplicaSetAvailable}
)";

const char* kReplicaSets = R"(apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: nginx-deployment-5d59d67564
  namespace: default
  uid: rs-1
  creationTimestamp: "2025-01-14T11:48:00Z"
  labels: {app: nginx, pod-template-hash: 5d59d67564}
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: nginx-deployment, uid: d-1, controller: true}]
spec:
  replicas: 3
  selector: {matchLabels: {app: nginx, pod-template-hash: 5d59d67564}}
  template:
    metadata: {labels: {app: nginx, pod-template-hash: 5d59d67564}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.14.2
        ports: [{containerPort: 80}]
status: {replicas: 3}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: nginx-deployment-66b6c48dd5
  namespace: default
  uid: rs-0
  creationTimestamp: "2025-01-14T11:40:00Z"
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: nginx-deployment, uid: d-1, controller: true}]
spec:
  replicas: 0
  selector: {matchLabels: {app: nginx, pod-template-hash: 66b6c48dd5}}
  template:
    metadata: {labels: {app: nginx, pod-template-hash: 66b6c48dd5}}
    spec:
      containers: [{name: nginx, image: "nginx:1.13"}]
status: {replicas: 0}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: someone-else
  namespace: default
  uid: rs-9
spec:
  replicas: 1
  selector: {matchLabels: {app: other}}
  template:
    metadata: {labels: {app: other}}
    spec:
      containers: [{name: c, image: "nginx:1.14.2"}]
)";

TEST_CASE("describe deployment: kubectl's layout, its old and new ReplicaSets and its events") {
  setenv("TZ", "UTC", 1);
  tzset();
  const std::vector<std::string> sets = testing::Objects(kReplicaSets);
  const std::vector<std::string> events = testing::Objects(R"(apiVersion: v1
kind: Event
metadata: {name: nginx-deployment.1, namespace: default}
involvedObject: {kind: Deployment, name: nginx-deployment, namespace: default, uid: d-1}
reason: ScalingReplicaSet
message: Scaled up replica set nginx-deployment-5d59d67564 from 0 to 3
source: {component: deployment-controller}
type: Normal
firstTimestamp: "2025-01-14T11:48:00Z"
lastTimestamp: "2025-01-14T11:48:00Z"
count: 1
)");
  const std::string text = DescribeDeployment(testing::One(kDeployment), sets, events, testing::Now());
  CHECK(text ==
        "Name:                   nginx-deployment\n"
        "Namespace:              default\n"
        "CreationTimestamp:      Tue, 14 Jan 2025 11:48:00 +0000\n"
        "Labels:                 app=nginx\n"
        "Annotations:            deployment.kubernetes.io/revision: 1\n"
        "Selector:               app=nginx\n"
        "Replicas:               3 desired | 3 updated | 3 total | 3 available | 0 unavailable\n"
        "StrategyType:           RollingUpdate\n"
        "MinReadySeconds:        0\n"
        "RollingUpdateStrategy:  25% max unavailable, 25% max surge\n"
        "Pod Template:\n"
        "  Labels:  app=nginx\n"
        "  Containers:\n"
        "   nginx:\n"
        "    Image:         nginx:1.14.2\n"
        "    Port:          80/TCP\n"
        "    Host Port:     0/TCP\n"
        "    Environment:   <none>\n"
        "    Mounts:        <none>\n"
        "  Volumes:         <none>\n"
        "  Node-Selectors:  <none>\n"
        "  Tolerations:     <none>\n"
        "Conditions:\n"
        "  Type           Status  Reason\n"
        "  ----           ------  ------\n"
        "  Available      True    MinimumReplicasAvailable\n"
        "  Progressing    True    NewReplicaSetAvailable\n"
        "OldReplicaSets:  nginx-deployment-66b6c48dd5 (0/0 replicas created)\n"
        "NewReplicaSet:   nginx-deployment-5d59d67564 (3/3 replicas created)\n"
        "Events:\n"
        "  Type    Reason             Age   From                   Message\n"
        "  ----    ------             ----  ----                   -------\n"
        "  Normal  ScalingReplicaSet  12m   deployment-controller  Scaled up replica set nginx-deployment-5d59d67564 "
        "from 0 to 3\n");
}

TEST_CASE("describe replicaset, daemonset and job: kubectl's lines, pods counted by phase") {
  setenv("TZ", "UTC", 1);
  tzset();
  const std::vector<std::string> pods = testing::Objects(R"(apiVersion: v1
kind: Pod
metadata:
  name: a
  namespace: default
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: nginx-deployment-5d59d67564, uid: rs-1, controller: true}]
spec: {containers: [{name: c, image: nginx}]}
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata:
  name: b
  namespace: default
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: nginx-deployment-5d59d67564, uid: rs-1, controller: true}]
spec: {containers: [{name: c, image: nginx}]}
status: {phase: Pending}
---
apiVersion: v1
kind: Pod
metadata: {name: stray, namespace: default}
spec: {containers: [{name: c, image: nginx}]}
status: {phase: Running}
)");
  const std::string rs = DescribeReplicaSet(testing::Objects(kReplicaSets)[0], pods, {}, testing::Now());
  INFO(rs);
  CHECK(rs.starts_with("Name:           nginx-deployment-5d59d67564\n"
                       "Namespace:      default\n"
                       "Selector:       app=nginx,pod-template-hash=5d59d67564\n"
                       "Labels:         app=nginx\n"
                       "                pod-template-hash=5d59d67564\n"
                       "Annotations:    <none>\n"
                       "Controlled By:  Deployment/nginx-deployment\n"
                       "Replicas:       3 current / 3 desired\n"
                       "Pods Status:    1 Running / 1 Waiting / 0 Succeeded / 0 Failed\n"
                       "Pod Template:\n"
                       "  Labels:  app=nginx\n"
                       "           pod-template-hash=5d59d67564\n"
                       "  Containers:\n"
                       "   nginx:\n"));

  const std::string ds = DescribeDaemonSet(testing::One(R"(apiVersion: apps/v1
kind: DaemonSet
metadata: {name: fluentd-elasticsearch, namespace: kube-system, uid: ds-1, labels: {k8s-app: fluentd-logging}}
spec:
  selector: {matchLabels: {name: fluentd-elasticsearch}}
  template:
    metadata: {labels: {name: fluentd-elasticsearch}}
    spec:
      tolerations: [{key: node-role.kubernetes.io/control-plane, operator: Exists, effect: NoSchedule}]
      containers: [{name: fluentd-elasticsearch, image: "quay.io/fluentd_elasticsearch/fluentd:v2.5.2"}]
      volumes: [{name: varlog, hostPath: {path: /var/log}}]
status: {desiredNumberScheduled: 3, currentNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 2,
         numberMisscheduled: 0, numberReady: 2}
)"),
                                            {}, {}, testing::Now());
  INFO(ds);
  CHECK(ds.starts_with("Name:           fluentd-elasticsearch\n"
                       "Selector:       name=fluentd-elasticsearch\n"
                       "Node-Selector:  <none>\n"
                       "Labels:         k8s-app=fluentd-logging\n"
                       "Annotations:    <none>\n"
                       "Desired Number of Nodes Scheduled: 3\n"
                       "Current Number of Nodes Scheduled: 3\n"
                       "Number of Nodes Scheduled with Up-to-date Pods: 3\n"
                       "Number of Nodes Scheduled with Available Pods: 2\n"
                       "Number of Nodes Misscheduled: 0\n"
                       "Pods Status:  0 Running / 0 Waiting / 0 Succeeded / 0 Failed\n"
                       "Pod Template:\n"));
  CHECK(ds.find("  Volumes:\n   varlog:\n    Type:          HostPath (bare host directory volume)\n"
                "    Path:          /var/log\n") != std::string::npos);
  CHECK(ds.find("  Tolerations:     node-role.kubernetes.io/control-plane:NoSchedule op=Exists\n") !=
        std::string::npos);

  const std::string job = DescribeJob(testing::One(R"yaml(apiVersion: batch/v1
kind: Job
metadata: {name: pi, namespace: default, uid: j-1}
spec:
  parallelism: 1
  completions: 1
  completionMode: NonIndexed
  suspend: false
  backoffLimit: 4
  selector: {matchLabels: {batch.kubernetes.io/controller-uid: j-1}}
  template:
    metadata: {labels: {batch.kubernetes.io/controller-uid: j-1, job-name: pi}}
    spec:
      restartPolicy: Never
      containers: [{name: pi, image: "perl:5.34.0", command: [perl, "-Mbignum=bpi", "-wle", "print bpi(2000)"]}]
status:
  startTime: "2025-01-14T11:50:00Z"
  completionTime: "2025-01-14T11:50:42Z"
  succeeded: 1
  ready: 0
)yaml"),
                                      {}, testing::Now());
  INFO(job);
  CHECK(job.starts_with("Name:             pi\n"
                        "Namespace:        default\n"
                        "Selector:         batch.kubernetes.io/controller-uid=j-1\n"
                        "Labels:           <none>\n"
                        "Annotations:      <none>\n"
                        "Parallelism:      1\n"
                        "Completions:      1\n"
                        "Completion Mode:  NonIndexed\n"
                        "Suspend:          false\n"
                        "Backoff Limit:    4\n"
                        "Start Time:       Tue, 14 Jan 2025 11:50:00 +0000\n"
                        "Completed At:     Tue, 14 Jan 2025 11:50:42 +0000\n"
                        "Duration:         42s\n"
                        "Pods Statuses:    0 Active (0 Ready) / 1 Succeeded / 0 Failed\n"
                        "Pod Template:\n"));
  CHECK(job.find("    Command:\n      perl\n      -Mbignum=bpi\n      -wle\n      print bpi(2000)\n") !=
        std::string::npos);
}

}  // namespace
}  // namespace podflow::cli
