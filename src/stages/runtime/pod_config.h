// What kubelet reads, besides the pod, to configure its containers: the
// ConfigMaps and Secrets of the pod's namespace (kept current by the stage,
// as kubelet's watch-based managers keep them) and the downward API's facts
// (the pod's and the node's addresses, the node's allocatable resources).
//
// KubeletEnv resolves a container's environment as kubelet does before it
// creates the container; ResolveVolumes sets out the volumes, or why kubelet could
// not set up. Their errors are kubelet's words, which the runner shows as
// CreateContainerConfigError and FailedMount until the source appears.
//
// Thread safety: ConfigSources is not synchronized (one thread owns it);
// the functions are pure.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "configuration_generated.h"
#include "pod_generated.h"
#include "stages/runtime/container_host.h"
#include "stages/runtime/shell_script.h"

namespace podflow::runtime {

enum class SourceKind { kConfigMap, kSecret };

// One ConfigMap's or Secret's keys, their values as bytes.
struct ConfigData {
  std::map<std::string, std::string> data;    // ConfigMap data; Secret data, decoded
  std::map<std::string, std::string> binary;  // ConfigMap binaryData, decoded
  bool operator==(const ConfigData&) const = default;
};

// ConfigMap `data` and `binaryData` (a value that is not base64 is left out:
// admission refuses those).
ConfigData ConfigMapData(const api::ConfigMap& map);
// Secret `data`, decoded (likewise).
ConfigData SecretData(const api::Secret& secret);

class ConfigSources {
 public:
  // `key` is the object's key in the log ("/registry/configmaps/ns/name").
  // Whether it changed what the key held.
  bool Put(const std::string& key, ConfigData data) {
    auto [it, added] = objects_.try_emplace(key, std::move(data));
    if (added) return true;
    if (it->second == data) return false;
    it->second = std::move(data);
    return true;
  }
  void Erase(const std::string& key) { objects_.erase(key); }
  // nullptr when the namespace has no such object.
  const ConfigData* Find(SourceKind kind, std::string_view namespace_, std::string_view name) const;
  size_t size() const { return objects_.size(); }

 private:
  std::unordered_map<std::string, ConfigData> objects_;
};

// What the downward API reads beyond the pod's own object.
struct PodFacts {
  std::string pod_ip;     // the sandbox's (the node's for hostNetwork)
  std::string host_ip;    // the node's InternalIP
  // The node's allocatable resources (canonical quantities): a limit the
  // container does not set reads as these, as kubelet defaults it.
  const std::map<std::string, std::string>* allocatable = nullptr;
};

// The container's `envFrom` then `env`, as kubelet makes them: each
// envFrom source's keys (with its prefix), then each env entry (a later
// name replaces an earlier one in place): a literal value with its $(VAR)
// references expanded against the variables before it, or the value of
// its source — a ConfigMap or Secret key, a field of the pod (fieldRef) or
// a resource of a container (resourceFieldRef). A missing ConfigMap,
// Secret or key is an error in kubelet's words (`configmap "x" not found`,
// `couldn't find key k in Secret ns/x`) unless marked optional, when the
// entry is left out. The values together stay within 1 MiB: a literal
// value whose expansion would pass it is kept as written, and a value that
// does not fit even so is left out.
Result<EnvList> KubeletEnv(const api::PodT& pod, const api::ContainerT& c, const PodFacts& facts,
                           const ConfigSources& sources);

// A volume kubelet could not set up, and why in its words (what follows
// `MountVolume.SetUp failed for volume "NAME" : `).
struct VolumeFailure {
  std::string volume;
  std::string message;
};

// The pod's volumes that some container mounts, as kubelet's volume plugins
// set them up: configMap, secret, downwardAPI and projected ones resolved to
// their files (a configMap's or secret's source must exist, unless optional,
// with every key its items name; a downward API item must have a value);
// emptyDir, hostPath and persistentVolumeClaim ones as what they name. A
// serviceAccountToken source writes no file (podflow's API issues no tokens).
struct PodVolumes {
  std::vector<VolumeSource> ready;
  std::vector<VolumeFailure> failed;
};
PodVolumes ResolveVolumes(const api::PodT& pod, const PodFacts& facts, const ConfigSources& sources);

// A volumeMount's subPath: as written, or its subPathExpr with the
// container's $(VAR)s expanded.
std::string MountSubPath(const api::VolumeMountT& mount, const EnvList& env);

// kubelet's refusal of a container's subPaths (an absolute one, one with
// ".."), or "" when they are fine: the container is not created
// (CreateContainerConfigError).
std::string SubPathError(const api::ContainerT& c, const EnvList& env);

// kubelet's fieldpath: the value of `field_path` for the pod, or an error
// ("unsupported fieldPath: x").
Result<std::string> PodFieldValue(const api::PodT& pod, std::string_view field_path,
                                  const PodFacts& facts);

// kubelet's value of a resourceFieldRef for container `c`
// ("limits.memory" with divisor "1Mi" -> "128"): rounded up to whole
// divisors; a limit the container does not set is the node's allocatable.
Result<std::string> ResourceFieldValue(const api::PodT& pod, const api::ContainerT& c,
                                       const api::ResourceFieldSelectorT& selector,
                                       const PodFacts& facts);

}  // namespace podflow::runtime
