// The Priority admission plugin, as kube-apiserver's Priority plugin behaves
// on create: pods resolve their PriorityClass, PriorityClasses are checked.
#include "stages/admission/priority.h"

#include "model/objects.h"

namespace podflow::admission {
namespace {

const model::KindInfo& PodKind() { return model::Kind("Pod"); }
const model::KindInfo& PriorityClassKind() { return model::Kind("PriorityClass"); }

std::string_view PolicyName(api::PreemptionPolicy policy) {
  return api::EnumNamePreemptionPolicy(policy);
}

}  // namespace

const std::vector<PriorityClassInfo>& SystemPriorityClasses() {
  static const std::vector<PriorityClassInfo> kClasses = {
      {"system-node-critical", kSystemCriticalPriority + 1000, false,
       api::PreemptionPolicy::PreemptLowerPriority},
      {"system-cluster-critical", kSystemCriticalPriority, false,
       api::PreemptionPolicy::PreemptLowerPriority},
  };
  return kClasses;
}

Result<PriorityClassInfo> ReadStoredPriorityClass(std::string_view bytes) {
  if (Status s = model::VerifyObject(PriorityClassKind(), bytes); !s.ok()) return s;
  const api::PriorityClass* pc = flatbuffers::GetRoot<api::PriorityClass>(bytes.data());
  PriorityClassInfo info;
  if (pc->metadata() != nullptr && pc->metadata()->name() != nullptr) {
    info.name = pc->metadata()->name()->str();
  }
  if (info.name.empty()) return Status::Corruption("stored PriorityClass has no name");
  info.value = pc->value();
  info.global_default = pc->global_default();
  if (pc->preemption_policy() != api::PreemptionPolicy::Unset) {
    info.preemption_policy = pc->preemption_policy();
  }
  return info;
}

// ---- RequestPriorityClasses ----

Status RequestPriorityClasses::Load() {
  if (loaded_) return *loaded_;
  loaded_ = Status::Ok();
  if (!lister_) return *loaded_;
  Result<std::vector<PriorityClassInfo>> stored = lister_();
  if (!stored.ok()) {
    loaded_ = stored.status();
    return *loaded_;
  }
  // Nothing was added yet: Add follows a Find, which listed first.
  for (PriorityClassInfo& pc : *stored) {
    std::string name = pc.name;
    classes_.try_emplace(std::move(name), std::move(pc));
  }
  return *loaded_;
}

Result<const PriorityClassInfo*> RequestPriorityClasses::Find(std::string_view name) {
  PODFLOW_RETURN_IF_ERROR(Load());
  if (auto it = classes_.find(name); it != classes_.end()) return &it->second;
  for (const PriorityClassInfo& pc : SystemPriorityClasses()) {
    if (pc.name == name) return &pc;
  }
  return static_cast<const PriorityClassInfo*>(nullptr);
}

Result<const PriorityClassInfo*> RequestPriorityClasses::GlobalDefault() {
  PODFLOW_RETURN_IF_ERROR(Load());
  const PriorityClassInfo* best = nullptr;
  for (const auto& [name, pc] : classes_) {
    if (pc.global_default && (best == nullptr || pc.value < best->value)) best = &pc;
  }
  return best;
}

void RequestPriorityClasses::Add(PriorityClassInfo info) {
  std::string name = info.name;
  classes_.try_emplace(std::move(name), std::move(info));
}

// ---- Pods ----

std::optional<ApiStatusInfo> AdmitPodPriority(std::string_view name, api::PodSpecT& spec,
                                              RequestPriorityClasses& classes) {
  // No class named: the globalDefault class, else priority 0.
  int32_t priority = 0;
  api::PreemptionPolicy policy = api::PreemptionPolicy::PreemptLowerPriority;
  if (spec.priority_class_name.empty()) {
    Result<const PriorityClassInfo*> pc = classes.GlobalDefault();
    if (!pc.ok()) {
      return InternalErrorStatus("failed to get default priority class: " + pc.status().message());
    }
    if (*pc != nullptr) {
      priority = (*pc)->value;
      policy = (*pc)->preemption_policy;
      spec.priority_class_name = (*pc)->name;
    }
  } else {
    Result<const PriorityClassInfo*> pc = classes.Find(spec.priority_class_name);
    if (!pc.ok()) {
      return InternalErrorStatus("failed to get PriorityClass with name " +
                                 spec.priority_class_name + ": " + pc.status().message());
    }
    if (*pc == nullptr) {
      return AdmissionForbiddenStatus(
          PodKind(), name, "no PriorityClass with name " + spec.priority_class_name + " was found");
    }
    priority = (*pc)->value;
    policy = (*pc)->preemption_policy;
  }
  // A pod may repeat what its class gives, not say something else.
  if (spec.priority.has_value() && spec.priority.value() != priority) {
    return AdmissionForbiddenStatus(
        PodKind(), name,
        "the integer value of priority (" + std::to_string(spec.priority.value()) +
            ") must not be provided in pod spec; priority admission controller computed " +
            std::to_string(priority) + " from the given PriorityClass name");
  }
  if (spec.preemption_policy != api::PreemptionPolicy::Unset && spec.preemption_policy != policy) {
    return AdmissionForbiddenStatus(
        PodKind(), name,
        "the string value of PreemptionPolicy (" + std::string(PolicyName(spec.preemption_policy)) +
            ") must not be provided in pod spec; priority admission controller computed " +
            std::string(PolicyName(policy)) + " from the given PriorityClass name");
  }
  spec.priority = priority;
  spec.preemption_policy = policy;
  return std::nullopt;
}

// ---- PriorityClasses ----

std::vector<FieldError> ValidatePriorityClass(const api::PriorityClassT& pc) {
  std::vector<FieldError> out;
  const std::string& name = pc.metadata->name;
  if (name.starts_with(kSystemPriorityClassPrefix)) {
    std::string error = name + " is not a known system priority class";
    for (const PriorityClassInfo& system : SystemPriorityClasses()) {
      if (system.name != name) continue;
      if (system.value != pc.value) {
        error = "value of " + name + " PriorityClass must be " + std::to_string(system.value);
      } else if (system.global_default != pc.global_default) {
        error = "globalDefault of " + name + " PriorityClass must be " +
                (system.global_default ? "true" : "false");
      } else {
        error.clear();
      }
    }
    if (!error.empty()) {
      out.push_back(FieldError::Forbidden(
          "metadata.name", "priority class names with '" + std::string(kSystemPriorityClassPrefix) +
                               "' prefix are reserved for system use only. error: " + error));
    }
  } else if (pc.value > kHighestUserDefinablePriority) {
    out.push_back(FieldError::Forbidden("value", "maximum allowed value of a user defined priority is " +
                                                std::to_string(kHighestUserDefinablePriority)));
  }
  return out;
}

std::optional<ApiStatusInfo> AdmitPriorityClass(const api::PriorityClassT& pc,
                                                RequestPriorityClasses& classes) {
  const std::string& name = pc.metadata->name;
  if (pc.global_default) {
    Result<const PriorityClassInfo*> current = classes.GlobalDefault();
    if (!current.ok()) {
      return InternalErrorStatus("failed to get default priority class: " +
                                 current.status().message());
    }
    if (*current != nullptr) {
      return AdmissionForbiddenStatus(PriorityClassKind(), name,
                                      "PriorityClass " + (*current)->name +
                                          " is already marked as default. Only one default can "
                                          "exist");
    }
  }
  Result<const PriorityClassInfo*> existing = classes.Find(name);
  if (!existing.ok()) {
    return InternalErrorStatus("failed to get PriorityClass with name " + name + ": " +
                               existing.status().message());
  }
  if (*existing != nullptr) {
    // A built-in class, or one stored or admitted before: the write would
    // fail its "must not exist" guard. Only the built-in ones, which have no
    // object in the log, are refused here; the others are left to the guard.
    for (const PriorityClassInfo& system : SystemPriorityClasses()) {
      if (system.name == name) return AlreadyExistsStatus(PriorityClassKind(), name);
    }
    return std::nullopt;
  }
  classes.Add({name, pc.value, pc.global_default, pc.preemption_policy});
  return std::nullopt;
}

}  // namespace podflow::admission
