// The Priority admission plugin: a new pod gets its priority and preemption
// policy from its PriorityClass; a new PriorityClass is checked against the
// reserved names and values and against the one default. Internal to
// admission.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api_generated.h"
#include "stages/admission/admission.h"

namespace podflow::admission {

// The largest value of a user's PriorityClass; larger ones belong to the
// built-in classes.
inline constexpr int32_t kHighestUserDefinablePriority = 1000000000;
// system-cluster-critical; system-node-critical is 1000 above it.
inline constexpr int32_t kSystemCriticalPriority = 2 * kHighestUserDefinablePriority;
// Names with this prefix are kept for the built-in classes.
inline constexpr std::string_view kSystemPriorityClassPrefix = "system-";

// The built-in classes, system-node-critical and system-cluster-critical.
// kube-apiserver creates them as objects at start-up; podflow knows them
// without objects in the log.
const std::vector<PriorityClassInfo>& SystemPriorityClasses();

// The PriorityClasses one request sees: the stored ones, listed through the
// caller's lister on first use only, those admitted earlier in the request,
// and the built-in ones. Lives for one Admit call; `lister` must outlive it.
// Not thread safe.
class RequestPriorityClasses {
 public:
  explicit RequestPriorityClasses(const PriorityClassLister& lister) : lister_(lister) {}
  RequestPriorityClasses(const RequestPriorityClasses&) = delete;
  RequestPriorityClasses& operator=(const RequestPriorityClasses&) = delete;

  // The class called `name` (stored, admitted earlier, or built in), or
  // nullptr. Fails when the stored classes could not be listed.
  Result<const PriorityClassInfo*> Find(std::string_view name);
  // The globalDefault class, or nullptr. When several are (two requests
  // raced), the one of lowest value, as Kubernetes picks it.
  Result<const PriorityClassInfo*> GlobalDefault();
  // A class admitted in this request. REQUIRES: Find(info.name) found none.
  void Add(PriorityClassInfo info);

 private:
  Status Load();

  const PriorityClassLister& lister_;
  std::optional<Status> loaded_;                                   // the outcome of the one listing
  std::map<std::string, PriorityClassInfo, std::less<>> classes_;  // by name
};

// The plugin on a new pod (mutating admission, before validation): sets
// spec.priority and spec.preemptionPolicy from the class spec.priorityClassName
// names, or from the globalDefault class (whose name it writes to
// spec.priorityClassName), or 0 and PreemptLowerPriority when there is none.
// Refuses with 403 Forbidden, in kube-apiserver's words, a class that does
// not exist and a priority or preemptionPolicy the pod sets itself that
// differs from the one computed; with 500 when listing classes failed.
// `name` is the pod's name as submitted (its generateName when it has no
// name), as kube-apiserver names it before generating the name.
std::optional<ApiStatusInfo> AdmitPodPriority(std::string_view name, api::PodSpecT& spec,
                                              RequestPriorityClasses& classes);

// Field validation of a new PriorityClass: a "system-" name must be one of
// the built-in classes exactly (value and globalDefault); any other class's
// value may not exceed kHighestUserDefinablePriority.
std::vector<FieldError> ValidatePriorityClass(const api::PriorityClassT& pc);

// The plugin on a new, valid PriorityClass (validating admission): 403 when
// it is a globalDefault and another class already is; 409 AlreadyExists for
// a built-in class's name (the object kube-apiserver would hold). An
// admitted class is added to `classes`.
std::optional<ApiStatusInfo> AdmitPriorityClass(const api::PriorityClassT& pc,
                                                RequestPriorityClasses& classes);

}  // namespace podflow::admission
