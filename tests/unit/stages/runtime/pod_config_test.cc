// What a container's configuration reads: env from ConfigMaps, Secrets and
// the downward API, and the volumes kubelet must set up, with the
// documentation's manifests and kubelet's words for what is missing.
#include <catch2/catch.hpp>
#include <cstdio>

#include "model/objects.h"
#include "stages/runtime/runtime.h"
#include "test_pods.h"

namespace podflow::runtime {
namespace {

using testing::PodFromYaml;

std::string Key(SourceKind kind, const std::string& name, const std::string& ns = "default") {
  return model::ObjectKey(model::Kind(kind == SourceKind::kSecret ? "Secret" : "ConfigMap"), ns, name);
}

void Put(ConfigSources& sources, SourceKind kind, const std::string& name,
         std::map<std::string, std::string> data, const std::string& ns = "default") {
  sources.Put(Key(kind, name, ns), ConfigData{std::move(data), {}});
}

std::string Value(const EnvList& env, const std::string& name) {
  for (const auto& [k, v] : env) {
    if (k == name) return v;
  }
  return "<unset>";
}

const std::map<std::string, std::string> kAllocatable = {{"cpu", "4"}, {"memory", "8Gi"}};
const PodFacts kFacts{"10.244.1.5", "192.168.0.2", &kAllocatable};

Result<EnvList> EnvOf(const api::PodT& pod, const ConfigSources& sources) {
  return KubeletEnv(pod, *pod.spec->containers.at(0), kFacts, sources);
}

constexpr char kSpecialConfigPod[] = R"yaml(
apiVersion: v1
kind: Pod
metadata:
  name: dapi-test-pod
spec:
  containers:
    - name: test-container
      image: registry.k8s.io/busybox
      command: [ "/bin/sh", "-c", "env" ]
      envFrom:
      - configMapRef:
          name: env-config
        prefix: CFG_
      env:
        - name: SPECIAL_LEVEL_KEY
          valueFrom:
            configMapKeyRef:
              name: special-config
              key: special.how
        - name: LOG_LEVEL
          valueFrom:
            configMapKeyRef:
              name: env-config
              key: log_level
        - name: CFG_log_level
          value: "$(CFG_log_level)-override"
  restartPolicy: Never
)yaml";

TEST_CASE("env from ConfigMaps: keys, envFrom with a prefix, env replacing envFrom") {
  auto pod = PodFromYaml(kSpecialConfigPod);
  ConfigSources sources;
  SECTION("everything there") {
    Put(sources, SourceKind::kConfigMap, "special-config", {{"special.how", "very"}, {"special.type", "charm"}});
    Put(sources, SourceKind::kConfigMap, "env-config", {{"log_level", "INFO"}});
    Result<EnvList> env = EnvOf(*pod, sources);
    REQUIRE(env.ok());
    CHECK(Value(*env, "SPECIAL_LEVEL_KEY") == "very");
    CHECK(Value(*env, "LOG_LEVEL") == "INFO");
    // Set by envFrom, then again by env, expanded against the first value;
    // it keeps its place (first).
    CHECK(Value(*env, "CFG_log_level") == "INFO-override");
    CHECK(env->front().first == "CFG_log_level");
    CHECK(env->size() == 3);
    // The documentation's one-liner prints them.
    const EnvList process = ContainerEnv(*pod, *env);
    CHECK(Value(process, "PATH") != "<unset>");
  }
  SECTION("a missing ConfigMap, then a missing key, in kubelet's words") {
    Put(sources, SourceKind::kConfigMap, "env-config", {{"log_level", "INFO"}});
    Result<EnvList> env = EnvOf(*pod, sources);
    REQUIRE_FALSE(env.ok());
    CHECK(env.status().message() == "configmap \"special-config\" not found");
    Put(sources, SourceKind::kConfigMap, "special-config", {{"special.type", "charm"}});
    env = EnvOf(*pod, sources);
    REQUIRE_FALSE(env.ok());
    CHECK(env.status().message() == "couldn't find key special.how in ConfigMap default/special-config");
  }
  SECTION("another namespace's ConfigMap is not the pod's") {
    Put(sources, SourceKind::kConfigMap, "special-config", {{"special.how", "very"}}, "other");
    Put(sources, SourceKind::kConfigMap, "env-config", {{"log_level", "INFO"}});
    CHECK(EnvOf(*pod, sources).status().message() == "configmap \"special-config\" not found");
  }
}

TEST_CASE("env from Secrets; optional sources and keys are left out when missing") {
  auto pod = PodFromYaml(R"yaml(
apiVersion: v1
kind: Pod
metadata: {name: secret-env-pod, namespace: team-a}
spec:
  containers:
  - name: mycontainer
    image: redis
    envFrom:
    - secretRef: {name: maybe, optional: true}
    env:
    - name: SECRET_USERNAME
      valueFrom:
        secretKeyRef: {name: mysecret, key: username}
    - name: OPTIONAL_KEY
      valueFrom:
        secretKeyRef: {name: mysecret, key: nothere, optional: true}
    - name: OPTIONAL_MAP
      valueFrom:
        configMapKeyRef: {name: absent, key: k, optional: true}
)yaml");
  ConfigSources sources;
  CHECK(EnvOf(*pod, sources).status().message() == "secret \"mysecret\" not found");
  Put(sources, SourceKind::kSecret, "mysecret", {{"password", "s3cr3t"}}, "team-a");
  CHECK(EnvOf(*pod, sources).status().message() == "couldn't find key username in Secret team-a/mysecret");
  Put(sources, SourceKind::kSecret, "mysecret", {{"username", "my-app"}}, "team-a");
  Result<EnvList> env = EnvOf(*pod, sources);
  REQUIRE(env.ok());
  CHECK(*env == EnvList{{"SECRET_USERNAME", "my-app"}});
  // envFrom's optional Secret, once it exists.
  Put(sources, SourceKind::kSecret, "maybe", {{"TOKEN", "t"}}, "team-a");
  env = EnvOf(*pod, sources);
  REQUIRE(env.ok());
  CHECK(*env == EnvList{{"TOKEN", "t"}, {"SECRET_USERNAME", "my-app"}});
}

TEST_CASE("Secret data is decoded; ConfigMap binaryData is kept for volumes") {
  auto secret = model::DecodeManifests(R"yaml(
apiVersion: v1
kind: Secret
metadata: {name: mysecret}
type: Opaque
data:
  USER_NAME: YWRtaW4=
  PASSWORD: MWYyZDFlMmU2N2Rm
)yaml");
  REQUIRE(secret.ok());
  REQUIRE(secret->at(0).status.ok());
  const ConfigData data = SecretData(*flatbuffers::GetRoot<api::Secret>(secret->at(0).object.bytes.data()));
  CHECK(data.data == std::map<std::string, std::string>{{"PASSWORD", "1f2d1e2e67df"}, {"USER_NAME", "admin"}});
  auto map = model::DecodeManifests(R"yaml(
apiVersion: v1
kind: ConfigMap
metadata: {name: game}
data: {lives: "3"}
binaryData: {blob: AAEC}
)yaml");
  REQUIRE(map.ok());
  REQUIRE(map->at(0).status.ok());
  const ConfigData cm = ConfigMapData(*flatbuffers::GetRoot<api::ConfigMap>(map->at(0).object.bytes.data()));
  CHECK(cm.data == std::map<std::string, std::string>{{"lives", "3"}});
  CHECK(cm.binary.at("blob") == std::string("\0\1\2", 3));
}

TEST_CASE("the downward API: the documentation's fieldRef and resourceFieldRef pods") {
  SECTION("dapi-envars-fieldref") {
    auto pod = PodFromYaml(R"yaml(
apiVersion: v1
kind: Pod
metadata:
  name: dapi-envars-fieldref
  labels: {app: web, tier: "front end"}
  annotations: {note: "say \"hi\""}
spec:
  serviceAccountName: builder
  containers:
    - name: test-container
      image: registry.k8s.io/busybox:1.27.2
      command: [ "sh", "-c"]
      args:
      - while true; do
          printenv MY_NODE_NAME MY_POD_NAME MY_POD_NAMESPACE;
          sleep 10;
        done;
      env:
        - name: MY_NODE_NAME
          valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
        - name: MY_POD_NAME
          valueFrom: {fieldRef: {fieldPath: metadata.name}}
        - name: MY_POD_NAMESPACE
          valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
        - name: MY_POD_IP
          valueFrom: {fieldRef: {fieldPath: status.podIP}}
        - name: MY_HOST_IP
          valueFrom: {fieldRef: {fieldPath: status.hostIP}}
        - name: MY_POD_SERVICE_ACCOUNT
          valueFrom: {fieldRef: {fieldPath: spec.serviceAccountName}}
        - name: APP
          valueFrom: {fieldRef: {fieldPath: "metadata.labels['app']"}}
        - name: NONE
          valueFrom: {fieldRef: {fieldPath: "metadata.annotations['absent']"}}
        - name: LABELS
          valueFrom: {fieldRef: {fieldPath: metadata.labels}}
        - name: ANNOTATIONS
          valueFrom: {fieldRef: {fieldPath: metadata.annotations}}
  restartPolicy: Never
)yaml");
    Result<EnvList> env = EnvOf(*pod, ConfigSources{});
    REQUIRE(env.ok());
    CHECK(Value(*env, "MY_NODE_NAME") == "node-1");
    CHECK(Value(*env, "MY_POD_NAME") == "dapi-envars-fieldref");
    CHECK(Value(*env, "MY_POD_NAMESPACE") == "default");
    CHECK(Value(*env, "MY_POD_IP") == "10.244.1.5");
    CHECK(Value(*env, "MY_HOST_IP") == "192.168.0.2");
    CHECK(Value(*env, "MY_POD_SERVICE_ACCOUNT") == "builder");
    CHECK(Value(*env, "APP") == "web");
    CHECK(Value(*env, "NONE").empty());
    CHECK(Value(*env, "LABELS") == "app=\"web\"\ntier=\"front end\"");
    CHECK(Value(*env, "ANNOTATIONS") == "note=\"say \\\"hi\\\"\"");
    CHECK_FALSE(PodFieldValue(*pod, "status.phase", kFacts).ok());
    CHECK(PodFieldValue(*pod, "status.phase", kFacts).status().message() == "unsupported fieldPath: status.phase");
  }
  SECTION("dapi-envars-resourcefieldref prints 1, 1, 33554432, 67108864") {
    auto pod = PodFromYaml(R"yaml(
apiVersion: v1
kind: Pod
metadata:
  name: dapi-envars-resourcefieldref
spec:
  containers:
    - name: test-container
      image: registry.k8s.io/busybox:1.24
      command: [ "sh", "-c"]
      args:
      - while true; do
          printenv MY_CPU_REQUEST MY_CPU_LIMIT;
          printenv MY_MEM_REQUEST MY_MEM_LIMIT;
          sleep 10;
        done;
      resources:
        requests:
          memory: "32Mi"
          cpu: "125m"
        limits:
          memory: "64Mi"
          cpu: "250m"
      env:
        - name: MY_CPU_REQUEST
          valueFrom:
            resourceFieldRef:
              containerName: test-container
              resource: requests.cpu
        - name: MY_CPU_LIMIT
          valueFrom:
            resourceFieldRef:
              containerName: test-container
              resource: limits.cpu
        - name: MY_MEM_REQUEST
          valueFrom:
            resourceFieldRef:
              containerName: test-container
              resource: requests.memory
        - name: MY_MEM_LIMIT
          valueFrom:
            resourceFieldRef:
              containerName: test-container
              resource: limits.memory
        - name: CPU_MILLIS
          valueFrom:
            resourceFieldRef: {resource: limits.cpu, divisor: 1m}
        - name: MEM_MI
          valueFrom:
            resourceFieldRef: {resource: limits.memory, divisor: 1Mi}
    - name: unlimited
      image: registry.k8s.io/busybox:1.24
  restartPolicy: Never
)yaml");
    Result<EnvList> env = EnvOf(*pod, ConfigSources{});
    REQUIRE(env.ok());
    CHECK(Value(*env, "MY_CPU_REQUEST") == "1");
    CHECK(Value(*env, "MY_CPU_LIMIT") == "1");
    CHECK(Value(*env, "MY_MEM_REQUEST") == "33554432");
    CHECK(Value(*env, "MY_MEM_LIMIT") == "67108864");
    CHECK(Value(*env, "CPU_MILLIS") == "250");
    CHECK(Value(*env, "MEM_MI") == "64");
    // A container without limits reads the node's allocatable; its
    // requests read 0.
    api::ResourceFieldSelectorT selector;
    selector.resource = "limits.memory";
    selector.divisor = "1Gi";
    const api::ContainerT& unlimited = *pod->spec->containers.at(1);
    CHECK(*ResourceFieldValue(*pod, unlimited, selector, kFacts) == "8");
    selector.resource = "requests.cpu";
    selector.divisor = "";
    CHECK(*ResourceFieldValue(*pod, unlimited, selector, kFacts) == "0");
    selector.container_name = "gone";
    CHECK(ResourceFieldValue(*pod, unlimited, selector, kFacts).status().message() == "container gone not found");
  }
}

TEST_CASE("volumes kubelet cannot set up: missing ConfigMaps, Secrets and keys") {
  auto pod = PodFromYaml(R"yaml(
apiVersion: v1
kind: Pod
metadata: {name: vols}
spec:
  containers:
  - name: test-container
    image: registry.k8s.io/busybox
    command: ["/bin/sh", "-c", "ls /etc/config/"]
    volumeMounts:
    - {name: config-volume, mountPath: /etc/config}
    - {name: secret-volume, mountPath: /etc/secret}
    - {name: all-in-one, mountPath: /projected}
    - {name: maybe, mountPath: /maybe}
    - {name: scratch, mountPath: /scratch}
  volumes:
  - name: config-volume
    configMap:
      name: special-config
      items: [{key: SPECIAL_LEVEL, path: keys}]
  - name: secret-volume
    secret: {secretName: mysecret}
  - name: all-in-one
    projected:
      sources:
      - secret: {name: mysecret}
      - configMap: {name: myconfigmap, items: [{key: config, path: my-group/my-config}]}
  - name: maybe
    configMap: {name: absent, optional: true}
  - name: scratch
    emptyDir: {}
  - name: unused
    configMap: {name: not-mounted}
)yaml");
  ConfigSources sources;
  auto failures = [&] {
    std::vector<std::string> out;
    for (const VolumeFailure& f : ResolveVolumes(*pod, PodFacts{}, sources).failed) out.push_back(f.volume + ": " + f.message);
    return out;
  };
  CHECK(failures() == std::vector<std::string>{
                          "config-volume: configmap \"special-config\" not found",
                          "secret-volume: secret \"mysecret\" not found",
                          "all-in-one: [secret \"mysecret\" not found, configmap \"myconfigmap\" not found]",
                      });
  Put(sources, SourceKind::kConfigMap, "special-config", {{"SPECIAL_TYPE", "charm"}});
  Put(sources, SourceKind::kSecret, "mysecret", {{"username", "admin"}});
  sources.Put(Key(SourceKind::kConfigMap, "myconfigmap"), ConfigData{{}, {{"config", "\x01"}}});
  CHECK(failures() == std::vector<std::string>{
                          "config-volume: configmap references non-existent config key: SPECIAL_LEVEL"});
  Put(sources, SourceKind::kConfigMap, "special-config", {{"SPECIAL_LEVEL", "very"}});
  CHECK(failures().empty());
  sources.Erase(Key(SourceKind::kSecret, "mysecret"));
  CHECK(failures().size() == 2);
}

}  // namespace
}  // namespace podflow::runtime

namespace podflow::runtime {
namespace {

// "path=bytes (mode)" for each file of a volume.
std::vector<std::string> Files(const VolumeSource& v) {
  std::vector<std::string> out;
  for (const VolumeFile& f : v.files) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(f.mode));
    out.push_back(f.path + "=" + f.data + " (" + mode + ")");
  }
  return out;
}

}  // namespace

TEST_CASE("volumes set out as kubelet's plugins make them: the files of configMap, secret, downwardAPI and projected "
          "volumes, emptyDir, hostPath and claims as what they name") {
  auto pod = PodFromYaml(R"yaml(
apiVersion: v1
kind: Pod
metadata: {name: kubernetes-downwardapi-volume-example, namespace: team-a, labels: {zone: us-est-coast, cluster: test-cluster1}, annotations: {build: two}}
spec:
  containers:
  - name: client-container
    image: registry.k8s.io/busybox
    resources: {limits: {memory: 64Mi}}
    volumeMounts:
    - {name: config, mountPath: /etc/config}
    - {name: secret, mountPath: /etc/secret}
    - {name: podinfo, mountPath: /etc/podinfo}
    - {name: all-in-one, mountPath: /projected}
    - {name: cache, mountPath: /cache}
    - {name: shm, mountPath: /dev/shm}
    - {name: logs, mountPath: /var/log/host}
    - {name: data, mountPath: /data}
  volumes:
  - name: config
    configMap: {name: special-config, items: [{key: SPECIAL_LEVEL, path: keys}, {key: script, path: bin/run.sh, mode: 0755}]}
  - name: secret
    secret: {secretName: mysecret, defaultMode: 0400}
  - name: podinfo
    downwardAPI:
      items:
      - {path: labels, fieldRef: {fieldPath: metadata.labels}}
      - {path: annotations, fieldRef: {fieldPath: metadata.annotations}}
      - {path: mem_limit, resourceFieldRef: {containerName: client-container, resource: limits.memory, divisor: 1Mi}}
  - name: all-in-one
    projected:
      defaultMode: 0440
      sources:
      - secret: {name: mysecret, items: [{key: username, path: my-group/my-username}]}
      - downwardAPI: {items: [{path: namespace, fieldRef: {fieldPath: metadata.namespace}}]}
      - serviceAccountToken: {path: token, expirationSeconds: 3600}
  - name: cache
    emptyDir: {sizeLimit: 500Mi}
  - name: shm
    emptyDir: {medium: Memory, sizeLimit: 1Gi}
  - name: logs
    hostPath: {path: /var/log, type: Directory}
  - name: data
    persistentVolumeClaim: {claimName: task-pv-claim, readOnly: true}
)yaml");
  ConfigSources sources;
  sources.Put(Key(SourceKind::kConfigMap, "special-config", "team-a"),
              ConfigData{{{"SPECIAL_LEVEL", "very"}, {"unlisted", "x"}}, {{"script", "#!/bin/sh"}}});
  Put(sources, SourceKind::kSecret, "mysecret", {{"username", "admin"}, {"password", "1f2d1e2e67df"}}, "team-a");
  const PodVolumes volumes = ResolveVolumes(*pod, PodFacts{}, sources);
  CHECK(volumes.failed.empty());
  REQUIRE(volumes.ready.size() == 8);
  const auto& v = volumes.ready;
  CHECK(v[0].type == VolumeSource::Type::kFiles);
  CHECK(v[0].read_only);  // kubelet mounts the API's data read-only
  CHECK(Files(v[0]) == std::vector<std::string>{"keys=very (0644)", "bin/run.sh=#!/bin/sh (0755)"});
  CHECK(Files(v[1]) == std::vector<std::string>{"password=1f2d1e2e67df (0400)", "username=admin (0400)"});
  CHECK(v[1].memory);  // a secret's files stay off the disk, as a projected volume's
  CHECK(v[3].memory);
  CHECK_FALSE(v[0].memory);
  CHECK_FALSE(v[2].memory);
  CHECK(Files(v[2]) == std::vector<std::string>{"labels=cluster=\"test-cluster1\"\nzone=\"us-est-coast\" (0644)",
                                                "annotations=build=\"two\" (0644)", "mem_limit=64 (0644)"});
  CHECK(Files(v[3]) == std::vector<std::string>{"my-group/my-username=admin (0440)", "namespace=team-a (0440)"});
  CHECK(v[4].type == VolumeSource::Type::kEmptyDir);
  CHECK_FALSE(v[4].memory);
  CHECK(v[4].size_limit == 500 * 1024 * 1024);
  CHECK_FALSE(v[4].read_only);
  CHECK(v[5].memory);
  CHECK(v[5].size_limit == int64_t{1} << 30);
  CHECK(v[6].type == VolumeSource::Type::kHostPath);
  CHECK(v[6].path == "/var/log");
  CHECK(v[6].host_path_type == "Directory");
  CHECK(v[7].type == VolumeSource::Type::kClaim);
  CHECK(v[7].claim == "team-a/task-pv-claim");
  CHECK(v[7].read_only);

  // A missing key of a listed item fails the volume; the others stand.
  sources.Put(Key(SourceKind::kConfigMap, "special-config", "team-a"), ConfigData{{{"SPECIAL_LEVEL", "very"}}, {}});
  const PodVolumes partly = ResolveVolumes(*pod, PodFacts{}, sources);
  REQUIRE(partly.failed.size() == 1);
  CHECK(partly.failed[0].volume == "config");
  CHECK(partly.failed[0].message == "configmap references non-existent config key: script");
  CHECK(partly.ready.size() == 7);
}

}  // namespace podflow::runtime
