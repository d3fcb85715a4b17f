// Resource amounts as kube-scheduler's framework.Resource holds them: cpu in
// milli-cores, memory and ephemeral-storage in bytes, the allowed pod count,
// and scalar resources (extended resources such as nvidia.com/gpu,
// hugepages-*, attachable-volumes-*) in whole units.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "meta_generated.h"

namespace podflow::scheduler {

inline constexpr std::string_view kResourceCpu = "cpu";
inline constexpr std::string_view kResourceMemory = "memory";
inline constexpr std::string_view kResourceEphemeralStorage = "ephemeral-storage";
inline constexpr std::string_view kResourcePods = "pods";

// Requests kube-scheduler assumes for a container that names no cpu / memory
// request, when scoring (schedutil.DefaultMilliCPURequest / DefaultMemoryRequest).
inline constexpr int64_t kDefaultMilliCpuRequest = 100;
inline constexpr int64_t kDefaultMemoryRequest = 200 * 1024 * 1024;

// Kubernetes' IsScalarResourceName: extended resources (a domain-qualified
// name outside kubernetes.io/), prefixed native resources, hugepages-* and
// attachable-volumes-*. cpu, memory, ephemeral-storage, pods are not scalar.
bool IsScalarResourceName(std::string_view name);

// A scalar resource amount. Names are kept sorted, so lookups are a binary
// search over a handful of entries.
struct ScalarResource {
  std::string name;
  int64_t value = 0;
  friend bool operator==(const ScalarResource&, const ScalarResource&) = default;
};

struct Resources {
  int64_t milli_cpu = 0;
  int64_t memory = 0;
  int64_t ephemeral_storage = 0;
  int64_t allowed_pods = 0;  // only meaningful for a node's allocatable
  std::vector<ScalarResource> scalar;  // sorted by name, no duplicates

  // 0 when absent.
  int64_t Scalar(std::string_view name) const;
  void AddScalar(std::string_view name, int64_t value);
  void SetScalar(std::string_view name, int64_t value);

  // Component-wise sum / difference (allowed_pods included).
  void Add(const Resources& other);
  void Subtract(const Resources& other);
  // Component-wise max (Kubernetes' SetMaxResource over init containers).
  void SetMax(const Resources& other);

  bool IsZero() const;
  friend bool operator==(const Resources&, const Resources&) = default;
};

// A ResourceList (Kubernetes map[ResourceName]Quantity) into Resources:
// cpu as MilliValue, everything else as Value (rounded up); "pods" into
// allowed_pods; unknown non-scalar names are ignored, as Kubernetes does.
// Returns Invalid naming the entry when a quantity does not parse.
// `present_cpu` / `present_memory`, when given, say whether the list named
// cpu / memory at all (a request set to 0 is not a missing request).
Result<Resources> ResourcesFromList(
    const flatbuffers::Vector<flatbuffers::Offset<api::QuantityEntry>>* list,
    bool* present_cpu = nullptr, bool* present_memory = nullptr);

}  // namespace podflow::scheduler
