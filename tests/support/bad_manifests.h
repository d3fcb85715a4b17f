// Manifests kube-apiserver refuses, each with the Status it answers: the
// table the admission unit tests check message by message, and the e2e test
// submits to a running pipeline to prove that nothing of them is written.
// Every message is kube-apiserver's own wording.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace podflow::admission::testing {

constexpr std::string_view kSubdomainMsg =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
constexpr std::string_view kLabelMsg =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
constexpr std::string_view kDns1035Msg =
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
    "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

// A pod named `name` with `spec` (YAML flow style).
inline std::string Pod(std::string_view name, std::string_view spec) {
  return "{apiVersion: v1, kind: Pod, metadata: {name: " + std::string(name) +
         "}, spec: " + std::string(spec) + "}";
}
inline std::string Service(std::string_view name, std::string_view spec) {
  return "{apiVersion: v1, kind: Service, metadata: {name: " + std::string(name) +
         "}, spec: " + std::string(spec) + "}";
}

struct BadManifest {
  std::string name;
  std::string manifest;
  std::string message;  // the Status message
  int code = 422;
  std::string reason = "Invalid";
};

// Field validation of core/v1 (422 Invalid).
inline std::vector<BadManifest> CoreBadManifests() {
  return {
      {"name required",
       "{apiVersion: v1, kind: Pod, metadata: {labels: {a: b}}, spec: {containers: [{name: a, "
       "image: "
       "nginx}]}}",
       "Pod \"\" is invalid: metadata.name: Required value: name or generateName is required"},
      {"pod name is a DNS-1123 subdomain",
       Pod("Nginx_Pod", "{containers: [{name: a, image: nginx}]}"),
       "Pod \"Nginx_Pod\" is invalid: metadata.name: Invalid value: \"Nginx_Pod\": " +
           std::string(kSubdomainMsg)},
      {"at least one container", Pod("p", "{restartPolicy: Always}"),
       "Pod \"p\" is invalid: spec.containers: Required value"},
      {"image required", Pod("x", "{containers: [{name: a}]}"),
       "Pod \"x\" is invalid: spec.containers[0].image: Required value"},
      {"container name required", Pod("x", "{containers: [{image: nginx}]}"),
       "Pod \"x\" is invalid: spec.containers[0].name: Required value"},
      {"container name is a DNS-1123 label",
       Pod("x", "{containers: [{name: App_1, image: nginx}]}"),
       "Pod \"x\" is invalid: spec.containers[0].name: Invalid value: \"App_1\": " +
           std::string(kLabelMsg)},
      {"container name with dots", Pod("x", "{containers: [{name: a.b, image: nginx}]}"),
       "Pod \"x\" is invalid: spec.containers[0].name: Invalid value: \"a.b\": must not contain "
       "dots"},
      {"duplicate container names",
       Pod("x", "{containers: [{name: app, image: nginx}, {name: app, image: redis}]}"),
       "Pod \"x\" is invalid: spec.containers[1].name: Duplicate value: \"app\""},
      {"duplicate across init containers",
       Pod("x",
           "{initContainers: [{name: app, image: busybox}], containers: [{name: app, image: "
           "nginx}]}"),
       "Pod \"x\" is invalid: spec.initContainers[0].name: Duplicate value: \"app\""},
      {"containerPort 0",
       Pod("x", "{containers: [{name: a, image: nginx, ports: [{hostPort: 80}]}]}"),
       "Pod \"x\" is invalid: spec.containers[0].ports[0].containerPort: Invalid value: 0: must be "
       "between 1 and 65535, inclusive"},
      {"containerPort too big",
       Pod("x", "{containers: [{name: a, image: nginx, ports: [{containerPort: 70000}]}]}"),
       "Pod \"x\" is invalid: spec.containers[0].ports[0].containerPort: Invalid value: 70000: "
       "must "
       "be between 1 and 65535, inclusive"},
      {"hostPort out of range",
       Pod("x",
           "{containers: [{name: a, image: nginx, ports: [{containerPort: 80, hostPort: "
           "-1}]}]}"),
       "Pod \"x\" is invalid: spec.containers[0].ports[0].hostPort: Invalid value: -1: must be "
       "between 1 and 65535, inclusive"},
      {"port name syntax",
       Pod("x",
           "{containers: [{name: a, image: nginx, ports: [{name: HTTP, containerPort: 80}]}]}"),
       "Pod \"x\" is invalid: [spec.containers[0].ports[0].name: Invalid value: \"HTTP\": must "
       "contain only alpha-numeric characters (a-z, 0-9), and hyphens (-), "
       "spec.containers[0].ports[0].name: Invalid value: \"HTTP\": must contain at least one "
       "letter "
       "(a-z)]"},
      {"port name too long",
       Pod("x",
           "{containers: [{name: a, image: nginx, ports: [{name: a-very-long-port-name, "
           "containerPort: 80}]}]}"),
       "Pod \"x\" is invalid: spec.containers[0].ports[0].name: Invalid value: "
       "\"a-very-long-port-name\": must be no more than 15 characters"},
      {"duplicate port names",
       Pod("x",
           "{containers: [{name: a, image: nginx, ports: [{name: web, containerPort: 80}, "
           "{name: web, containerPort: 81}]}]}"),
       "Pod \"x\" is invalid: spec.containers[0].ports[1].name: Duplicate value: \"web\""},
      {"requests above limits",
       Pod("x",
           "{containers: [{name: a, image: nginx, resources: {requests: {cpu: '2'}, limits: "
           "{cpu: '1'}}}]}"),
       "Pod \"x\" is invalid: spec.containers[0].resources.requests: Invalid value: \"2\": must be "
       "less than or equal to cpu limit of 1"},
      {"memory requests above limits, canonical quantities",
       Pod("x",
           "{containers: [{name: a, image: nginx, resources: {requests: {memory: 2Gi}, "
           "limits: {memory: 1024Mi}}}]}"),
       "Pod \"x\" is invalid: spec.containers[0].resources.requests: Invalid value: \"2Gi\": must "
       "be "
       "less than or equal to memory limit of 1Gi"},
      {"negative request",
       Pod("x", "{containers: [{name: a, image: nginx, resources: {requests: {cpu: -1}}}]}"),
       "Pod \"x\" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: \"-1\": "
       "must be greater than or equal to 0"},
      {"label key",
       "{apiVersion: v1, kind: Pod, metadata: {name: p, labels: {'bad key': v}}, spec: "
       "{containers: "
       "[{name: a, image: nginx}]}}",
       "Pod \"p\" is invalid: metadata.labels: Invalid value: \"bad key\": name part must consist "
       "of "
       "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
       "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
       "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"},
      {"label key prefix",
       "{apiVersion: v1, kind: Pod, metadata: {name: p, labels: {'Example.com/app': v}}, spec: "
       "{containers: [{name: a, image: nginx}]}}",
       "Pod \"p\" is invalid: metadata.labels: Invalid value: \"Example.com/app\": prefix part " +
           std::string(kSubdomainMsg)},
      {"owner reference without uid",
       "{apiVersion: v1, kind: Pod, metadata: {name: p, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, "
       "name: web}]}, spec: {containers: [{name: a, image: nginx}]}}",
       "Pod \"p\" is invalid: metadata.ownerReferences.uid: Invalid value: \"\": uid must not be empty"},
      {"two controller references",
       "{apiVersion: v1, kind: Pod, metadata: {name: p, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, "
       "name: a, uid: '1', controller: true}, {apiVersion: apps/v1, kind: ReplicaSet, name: b, uid: '2', "
       "controller: true}]}, spec: {containers: [{name: a, image: nginx}]}}",
       "Pod \"p\" is invalid: metadata.ownerReferences: Invalid value: []v1.OwnerReference{...}: Only one reference "
       "can have Controller set to true. Found \"true\" in references for ReplicaSet/a and ReplicaSet/b"},
      {"both garbage collector finalizers",
       "{apiVersion: v1, kind: Pod, metadata: {name: p, finalizers: [orphan, foregroundDeletion]}, spec: "
       "{containers: [{name: a, image: nginx}]}}",
       "Pod \"p\" is invalid: metadata.finalizers: Invalid value: []string{\"orphan\", \"foregroundDeletion\"}: "
       "finalizer orphan and foregroundDeletion cannot be both set"},
      {"label value",
       "{apiVersion: v1, kind: Pod, metadata: {name: p, labels: {app: -web}}, spec: {containers: "
       "[{name: a, image: nginx}]}}",
       "Pod \"p\" is invalid: metadata.labels: Invalid value: \"-web\": a valid label must be an "
       "empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and "
       "end "
       "with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
       "for "
       "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
      {"service name is a DNS-1035 label", Service("1web", "{ports: [{port: 80}]}"),
       "Service \"1web\" is invalid: metadata.name: Invalid value: \"1web\": " +
           std::string(kDns1035Msg)},
      {"service ports required", Service("web", "{selector: {app: web}}"),
       "Service \"web\" is invalid: spec.ports: Required value"},
      {"service port range", Service("web", "{ports: [{port: 0, targetPort: 8080}]}"),
       "Service \"web\" is invalid: spec.ports[0].port: Invalid value: 0: must be between 1 and "
       "65535, inclusive"},
      {"service port names required when several",
       Service("web", "{ports: [{name: a, port: 80}, {port: 81}]}"),
       "Service \"web\" is invalid: spec.ports[1].name: Required value"},
      {"service port names unique",
       Service("web", "{ports: [{name: a, port: 80}, {name: a, port: 81}]}"),
       "Service \"web\" is invalid: spec.ports[1].name: Duplicate value: \"a\""},
      {"service port name syntax", Service("web", "{ports: [{name: Web, port: 80}]}"),
       "Service \"web\" is invalid: spec.ports[0].name: Invalid value: \"Web\": " +
           std::string(kLabelMsg)},
      {"service targetPort", Service("web", "{ports: [{port: 80, targetPort: 65536}]}"),
       "Service \"web\" is invalid: spec.ports[0].targetPort: Invalid value: 65536: must be "
       "between "
       "1 and 65535, inclusive"},
      {"nodePort on a ClusterIP service", Service("web", "{ports: [{port: 80, nodePort: 30080}]}"),
       "Service \"web\" is invalid: spec.ports[0].nodePort: Forbidden: may not be used when `type` "
       "is 'ClusterIP'"},
      {"clusterIP syntax", Service("web", "{clusterIP: 10.96.0.300, ports: [{port: 80}]}"),
       "Service \"web\" is invalid: spec.clusterIPs[0]: Invalid value: \"10.96.0.300\": must be a "
       "valid IP address, (e.g. 10.9.8.7)"},
      {"a volume mount naming no volume",
       Pod("x", "{containers: [{name: a, image: nginx, volumeMounts: [{name: data, mountPath: /data}]}]}"),
       "Pod \"x\" is invalid: spec.containers[0].volumeMounts[0].name: Not found: \"data\""},
      {"a probe with two handlers",
       Pod("x", "{containers: [{name: a, image: nginx, livenessProbe: {exec: {command: [cat, /ok]}, tcpSocket: "
                "{port: 80}}}]}"),
       "Pod \"x\" is invalid: spec.containers[0].livenessProbe.tcpSocket: Forbidden: may not specify more than 1 "
       "handler type"},
      {"an Exists toleration with a value",
       Pod("x", "{tolerations: [{key: k, operator: Exists, value: v}], containers: [{name: a, image: nginx}]}"),
       "Pod \"x\" is invalid: spec.tolerations[0].operator: Invalid value: core.Toleration{Key:\"k\", "
       "Operator:\"Exists\", Value:\"v\", Effect:\"\", TolerationSeconds:(*int64)(nil)}: value must be empty when "
       "`operator` is 'Exists'"},
      {"tolerationSeconds without NoExecute",
       Pod("x", "{tolerations: [{key: k, operator: Equal, value: v, effect: NoSchedule, tolerationSeconds: 60}], "
                "containers: [{name: a, image: nginx}]}"),
       "Pod \"x\" is invalid: spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' "
       "when `tolerationSeconds` is set"},
      {"a toleration without a key must be Exists",
       Pod("x", "{tolerations: [{operator: Equal, value: v}], containers: [{name: a, image: nginx}]}"),
       "Pod \"x\" is invalid: spec.tolerations[0].operator: Invalid value: \"Equal\": operator must be Exists when "
       "`key` is empty, which means \"match all values and all keys\""},
      {"node affinity In without values",
       Pod("x", "{affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
                "[{matchExpressions: [{key: zone, operator: In}]}]}}}, containers: [{name: a, image: nginx}]}"),
       "Pod \"x\" is invalid: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
       "nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be specified when `operator` is 'In' "
       "or 'NotIn'"},
      {"node affinity Exists with values",
       Pod("x", "{affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, "
                "preference: {matchExpressions: [{key: zone, operator: Exists, values: [a]}]}}]}}, containers: "
                "[{name: a, image: nginx}]}"),
       "Pod \"x\" is invalid: spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."
       "preference.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or "
       "'DoesNotExist'"},
      {"node name", "{apiVersion: v1, kind: Node, metadata: {name: Node_1}}",
       "Node \"Node_1\" is invalid: metadata.name: Invalid value: \"Node_1\": " +
           std::string(kSubdomainMsg)},
      {"an env var name with '='",
       Pod("x", "{containers: [{name: a, image: nginx, env: [{name: 'A=B', value: x}]}]}"),
       "Pod \"x\" is invalid: spec.containers[0].env[0].name: Invalid value: \"A=B\": a valid environment variable "
       "name must consist only of printable ASCII characters other than '='"},
      {"an env var without a name", Pod("x", "{containers: [{name: a, image: nginx, env: [{value: x}]}]}"),
       "Pod \"x\" is invalid: spec.containers[0].env[0].name: Required value"},
      {"an env var with a value and a valueFrom",
       Pod("x", "{containers: [{name: a, image: nginx, env: [{name: A, value: x, valueFrom: {configMapKeyRef: "
                "{name: cfg, key: k}}}]}]}"),
       "Pod \"x\" is invalid: spec.containers[0].env[0].valueFrom: Invalid value: \"\": may not be specified when "
       "`value` is not empty"},
      {"an env var from a config key that cannot be one",
       Pod("x", "{containers: [{name: a, image: nginx, env: [{name: A, valueFrom: {configMapKeyRef: {name: cfg, "
                "key: 'a b'}}}]}]}"),
       "Pod \"x\" is invalid: spec.containers[0].env[0].valueFrom.configMapKeyRef.key: Invalid value: \"a b\": a "
       "valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or "
       "'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"},
      {"an env var from a pod field env vars cannot read",
       Pod("x", "{containers: [{name: a, image: nginx, env: [{name: A, valueFrom: {fieldRef: {fieldPath: "
                "status.phase}}}]}]}"),
       "Pod \"x\" is invalid: spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: Unsupported value: "
       "\"status.phase\": supported values: \"metadata.name\", \"metadata.namespace\", \"metadata.uid\", "
       "\"spec.nodeName\", \"spec.serviceAccountName\", \"status.hostIP\", \"status.hostIPs\", \"status.podIP\", "
       "\"status.podIPs\""},
      {"a cpu divisor kube-apiserver does not take",
       Pod("x", "{containers: [{name: a, image: nginx, env: [{name: A, valueFrom: {resourceFieldRef: {resource: "
                "limits.cpu, divisor: '2'}}}]}]}"),
       "Pod \"x\" is invalid: spec.containers[0].env[0].valueFrom.resourceFieldRef.divisor: Invalid value: "
       "\"limits.cpu\": only divisor's values 1m and 1 are supported with the cpu resource"},
      {"a memory divisor kube-apiserver does not take",
       Pod("x", "{containers: [{name: a, image: nginx, env: [{name: A, valueFrom: {resourceFieldRef: {resource: "
                "requests.memory, divisor: 1m}}}]}]}"),
       "Pod \"x\" is invalid: spec.containers[0].env[0].valueFrom.resourceFieldRef.divisor: Invalid value: "
       "\"requests.memory\": only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are "
       "supported with the memory resource"},
      {"envFrom with two sources",
       Pod("x", "{containers: [{name: a, image: nginx, envFrom: [{configMapRef: {name: c}, secretRef: {name: s}}]}]}"),
       "Pod \"x\" is invalid: spec.containers[0].envFrom: Invalid value: \"\": may not have more than one field "
       "specified at a time"},
      {"a resource a container cannot ask for",
       Pod("x", "{containers: [{name: a, image: nginx, resources: {requests: {foo: '1'}}}]}"),
       "Pod \"x\" is invalid: [spec.containers[0].resources.requests[foo]: Invalid value: \"foo\": must be a "
       "standard resource type or fully qualified, spec.containers[0].resources.requests[foo]: Invalid value: "
       "\"foo\": must be a standard resource for containers]"},
      {"a fraction of an extended resource",
       Pod("x", "{containers: [{name: a, image: nginx, resources: {limits: {example.com/dongle: 500m}, requests: "
                "{example.com/dongle: 500m}}}]}"),
       "Pod \"x\" is invalid: [spec.containers[0].resources.limits[example.com/dongle]: Invalid value: \"500m\": "
       "must be an integer, spec.containers[0].resources.requests[example.com/dongle]: Invalid value: \"500m\": "
       "must be an integer]"},
      {"an extended resource requested without a limit",
       Pod("x", "{containers: [{name: a, image: nginx, resources: {requests: {example.com/dongle: '1'}}}]}"),
       "Pod \"x\" is invalid: spec.containers[0].resources.limits: Required value: Limit must be set for non "
       "overcommitable resources"},
      {"an extended resource requested below its limit",
       Pod("x", "{containers: [{name: a, image: nginx, resources: {requests: {example.com/dongle: '1'}, limits: "
                "{example.com/dongle: '2'}}}]}"),
       "Pod \"x\" is invalid: spec.containers[0].resources.requests: Invalid value: \"1\": must be equal to "
       "example.com/dongle limit of 2"},
      {"a probe period below zero",
       Pod("x", "{containers: [{name: a, image: nginx, readinessProbe: {tcpSocket: {port: 80}, periodSeconds: "
                "-1}}]}"),
       "Pod \"x\" is invalid: spec.containers[0].readinessProbe.periodSeconds: Invalid value: -1: must be greater "
       "than or equal to 0"},
      {"a liveness probe that needs two successes",
       Pod("x", "{containers: [{name: a, image: nginx, livenessProbe: {httpGet: {path: /, port: 80}, "
                "successThreshold: 2}}]}"),
       "Pod \"x\" is invalid: spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1"},
      {"a probe on port 0",
       Pod("x", "{containers: [{name: a, image: nginx, startupProbe: {tcpSocket: {port: 0}}}]}"),
       "Pod \"x\" is invalid: spec.containers[0].startupProbe.tcpSocket.port: Invalid value: 0: must be between 1 "
       "and 65535, inclusive"},
  };
}

// Field validation of the other API groups (422 Invalid).
inline std::vector<BadManifest> GroupBadManifests() {
  return {
      {"deployment selector does not match its template",
       "{apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {selector: {matchLabels: {app: a}}, "
       "template: {metadata: {labels: {app: b}}, spec: {containers: [{name: c, image: nginx}]}}}}",
       "Deployment.apps \"d\" is invalid: spec.template.metadata.labels: Invalid value: "
       "map[string]string{\"app\":\"b\"}: `selector` does not match template `labels`"},
      {"deployment without a selector",
       "{apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {template: {metadata: {labels: {app: "
       "b}}, spec: {containers: [{name: c, image: nginx}]}}}}",
       "Deployment.apps \"d\" is invalid: [spec.selector: Required value, spec.template.metadata.labels: Invalid "
       "value: map[string]string{\"app\":\"b\"}: `selector` does not match template `labels`]"},
      {"daemonset with both rolling-update bounds set",
       "{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: ds}, spec: {selector: {matchLabels: {app: a}}, "
       "updateStrategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 1}}, template: {metadata: {labels: {app: "
       "a}}, spec: {containers: [{name: c, image: nginx}]}}}}",
       "DaemonSet.apps \"ds\" is invalid: spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: "
       "intstr.IntOrString{Type:0, IntVal:1, StrVal:\"\"}: may not be set when maxUnavailable is non-zero"},
      {"role names may hold colons but not slashes",
       "{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, metadata: {name: 'a/b'}, rules: []}",
       "ClusterRole.rbac.authorization.k8s.io \"a/b\" is invalid: metadata.name: Invalid value: \"a/b\": may not "
       "contain '/'"},
      {"replicaset template restarts never",
       "{apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: r}, spec: {selector: {matchLabels: {app: a}}, "
       "template: {metadata: {labels: {app: a}}, spec: {restartPolicy: Never, containers: [{name: c, image: "
       "nginx}]}}}}",
       "ReplicaSet.apps \"r\" is invalid: spec.template.spec.restartPolicy: Unsupported value: \"Never\": "
       "supported values: \"Always\""},
      {"deployment with both rolling-update bounds zero and a bad container",
       "{apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {replicas: -1, selector: {matchLabels: "
       "{app: a}}, strategy: {rollingUpdate: {maxSurge: 0, maxUnavailable: 0}}, template: {metadata: {labels: "
       "{app: a}}, spec: {containers: [{name: c}]}}}}",
       "Deployment.apps \"d\" is invalid: [spec.replicas: Invalid value: -1: must be greater than or equal to 0, "
       "spec.template.spec.containers[0].image: Required value, spec.strategy.rollingUpdate.maxUnavailable: "
       "Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}: may not be 0 when `maxSurge` is 0]"},
      {"job that restarts always",
       "{apiVersion: batch/v1, kind: Job, metadata: {name: j}, spec: {template: {spec: {containers: [{name: c, "
       "image: busybox}]}}}}",
       "Job.batch \"j\" is invalid: spec.template.spec.restartPolicy: Required value: valid values: "
       "\"OnFailure\", \"Never\""},
      {"cronjob with a bad schedule",
       "{apiVersion: batch/v1, kind: CronJob, metadata: {name: c}, spec: {schedule: '* * *', jobTemplate: {spec: "
       "{template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}}}",
       "CronJob.batch \"c\" is invalid: spec.schedule: Invalid value: \"* * *\": expected exactly 5 fields, found "
       "3: [* * *]"},
      {"cronjob minute out of range",
       "{apiVersion: batch/v1, kind: CronJob, metadata: {name: c}, spec: {schedule: '61 * * * *', jobTemplate: "
       "{spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}}}",
       "CronJob.batch \"c\" is invalid: spec.schedule: Invalid value: \"61 * * * *\": end of range (61) above "
       "maximum (59): 61"},
      {"configmap key",
       "{apiVersion: v1, kind: ConfigMap, metadata: {name: m}, data: {'a b': x}}",
       "ConfigMap \"m\" is invalid: data[a b]: Invalid value: \"a b\": a valid config key must consist of "
       "alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used "
       "for validation is '[-._a-zA-Z0-9]+')"},
      {"tls secret without its keys",
       "{apiVersion: v1, kind: Secret, metadata: {name: t}, type: kubernetes.io/tls, data: {tls.crt: YQ==}}",
       "Secret \"t\" is invalid: data[tls.key]: Required value"},
      {"role rule without verbs",
       "{apiVersion: rbac.authorization.k8s.io/v1, kind: Role, metadata: {name: r}, rules: [{apiGroups: [''], "
       "resources: [pods]}]}",
       "Role.rbac.authorization.k8s.io \"r\" is invalid: rules[0].verbs: Required value: verbs must contain at "
       "least one value"},
      {"cluster role binding to a Role",
       "{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRoleBinding, metadata: {name: b}, subjects: "
       "[{kind: ServiceAccount, name: sa}], roleRef: {kind: Role, name: r}}",
       "ClusterRoleBinding.rbac.authorization.k8s.io \"b\" is invalid: [roleRef.kind: Unsupported value: "
       "\"Role\": supported values: \"ClusterRole\", subjects[0].namespace: Required value]"},
      {"pdb with a bad percentage",
       "{apiVersion: policy/v1, kind: PodDisruptionBudget, metadata: {name: p}, spec: {maxUnavailable: 150%}}",
       "PodDisruptionBudget.policy \"p\" is invalid: spec.maxUnavailable: Invalid value: "
       "intstr.IntOrString{Type:1, IntVal:0, StrVal:\"150%\"}: must not be greater than 100%"},
      {"namespace name is a DNS-1123 label", "{apiVersion: v1, kind: Namespace, metadata: {name: Team_A}}",
       "Namespace \"Team_A\" is invalid: metadata.name: Invalid value: \"Team_A\": " + std::string(kLabelMsg)},
      {"configmap name is a DNS-1123 subdomain",
       "{apiVersion: v1, kind: ConfigMap, metadata: {name: Bad_Name}, data: {a: b}}",
       "ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": " + std::string(kSubdomainMsg)},
      {"statefulset name is a DNS-1123 label",
       "{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: a.b}, spec: {serviceName: s, selector: "
       "{matchLabels: {app: a}}, template: {metadata: {labels: {app: a}}, spec: {containers: [{name: c, image: "
       "nginx}]}}}}",
       "StatefulSet.apps \"a.b\" is invalid: metadata.name: Invalid value: \"a.b\": must not contain dots"},
      {"job completions below zero",
       "{apiVersion: batch/v1, kind: Job, metadata: {name: j}, spec: {completions: -1, template: {spec: "
       "{restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}",
       "Job.batch \"j\" is invalid: spec.completions: Invalid value: -1: must be greater than or equal to 0"},
      {"role binding without a role name",
       "{apiVersion: rbac.authorization.k8s.io/v1, kind: RoleBinding, metadata: {name: b}, subjects: [{kind: "
       "User, name: alice}], roleRef: {kind: Role, apiGroup: rbac.authorization.k8s.io}}",
       "RoleBinding.rbac.authorization.k8s.io \"b\" is invalid: roleRef.name: Required value"},
  };
}

// What is refused before validation: decoding (400), a missing namespace
// (404), the plugins (403).
inline std::vector<BadManifest> RequestBadManifests() {
  return {
      {"unknown kind", "{apiVersion: v1, kind: Pdo, metadata: {name: x}}", "no matches for kind \"Pdo\" in version \"v1\"",
       400, "BadRequest"},
      {"unknown field",
       "{apiVersion: v1, kind: Pod, metadata: {name: x}, spec: {containers: [{name: a, image: nginx, "
       "imagePullPolcy: Always}]}}",
       "Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: unknown field "
       "\"spec.containers[0].imagePullPolcy\"",
       400, "BadRequest"},
      {"secret data that is not base64", "{apiVersion: v1, kind: Secret, metadata: {name: s}, data: {k: 'abc$'}}",
       "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input byte 3", 400,
       "BadRequest"},
      {"a namespace that does not exist",
       "{apiVersion: v1, kind: Pod, metadata: {name: p, namespace: nope}, spec: {containers: [{name: a, image: "
       "nginx}]}}",
       "namespaces \"nope\" not found", 404, "NotFound"},
      {"a ConfigMap in a namespace that does not exist",
       "{apiVersion: v1, kind: ConfigMap, metadata: {name: m, namespace: nope}, data: {a: b}}",
       "namespaces \"nope\" not found", 404, "NotFound"},
      {"a priority class that does not exist",
       "{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {priorityClassName: gold, containers: [{name: a, "
       "image: nginx}]}}",
       "pods \"p\" is forbidden: no PriorityClass with name gold was found", 403, "Forbidden"},
      {"a service account that does not exist",
       "{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {serviceAccountName: deployer, containers: [{name: a, "
       "image: nginx}]}}",
       "pods \"p\" is forbidden: error looking up service account default/deployer: serviceaccount \"deployer\" not "
       "found",
       403, "Forbidden"},
  };
}

// Every one of them.
inline std::vector<BadManifest> BadManifests() {
  std::vector<BadManifest> all = CoreBadManifests();
  for (auto* part : {&GroupBadManifests, &RequestBadManifests}) {
    for (BadManifest& m : (*part)()) all.push_back(std::move(m));
  }
  return all;
}

}  // namespace podflow::admission::testing
