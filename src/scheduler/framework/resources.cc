#include "scheduler/framework/resources.h"

#include <algorithm>

#include "model/quantity.h"

namespace podflow::scheduler {

bool IsScalarResourceName(std::string_view name) {
  if (name.starts_with("hugepages-") || name.starts_with("attachable-volumes-")) return true;
  // Extended ("example.com/foo") and prefixed native ("kubernetes.io/foo")
  // resources carry a domain; "requests.*" names are quota names, not resources.
  return name.find('/') != std::string_view::npos && !name.starts_with("requests.");
}

namespace {

auto FindScalar(const std::vector<ScalarResource>& v, std::string_view name) {
  return std::lower_bound(v.begin(), v.end(), name,
                          [](const ScalarResource& r, std::string_view n) { return r.name < n; });
}

}  // namespace

int64_t Resources::Scalar(std::string_view name) const {
  auto it = FindScalar(scalar, name);
  return it != scalar.end() && it->name == name ? it->value : 0;
}

void Resources::AddScalar(std::string_view name, int64_t value) {
  auto it = FindScalar(scalar, name);
  if (it != scalar.end() && it->name == name) {
    scalar[it - scalar.begin()].value += value;
  } else {
    scalar.insert(scalar.begin() + (it - scalar.begin()), ScalarResource{std::string(name), value});
  }
}

void Resources::SetScalar(std::string_view name, int64_t value) {
  auto it = FindScalar(scalar, name);
  if (it != scalar.end() && it->name == name) {
    scalar[it - scalar.begin()].value = value;
  } else {
    scalar.insert(scalar.begin() + (it - scalar.begin()), ScalarResource{std::string(name), value});
  }
}

void Resources::Add(const Resources& other) {
  milli_cpu += other.milli_cpu;
  memory += other.memory;
  ephemeral_storage += other.ephemeral_storage;
  allowed_pods += other.allowed_pods;
  for (const auto& s : other.scalar) AddScalar(s.name, s.value);
}

void Resources::Subtract(const Resources& other) {
  milli_cpu -= other.milli_cpu;
  memory -= other.memory;
  ephemeral_storage -= other.ephemeral_storage;
  allowed_pods -= other.allowed_pods;
  for (const auto& s : other.scalar) AddScalar(s.name, -s.value);
}

void Resources::SetMax(const Resources& other) {
  milli_cpu = std::max(milli_cpu, other.milli_cpu);
  memory = std::max(memory, other.memory);
  ephemeral_storage = std::max(ephemeral_storage, other.ephemeral_storage);
  allowed_pods = std::max(allowed_pods, other.allowed_pods);
  for (const auto& s : other.scalar) {
    if (s.value > Scalar(s.name)) SetScalar(s.name, s.value);
  }
}

bool Resources::IsZero() const {
  if (milli_cpu != 0 || memory != 0 || ephemeral_storage != 0 || allowed_pods != 0) return false;
  return std::all_of(scalar.begin(), scalar.end(), [](const auto& s) { return s.value == 0; });
}

Result<Resources> ResourcesFromList(
    const flatbuffers::Vector<flatbuffers::Offset<api::QuantityEntry>>* list, bool* present_cpu,
    bool* present_memory) {
  Resources out;
  if (present_cpu != nullptr) *present_cpu = false;
  if (present_memory != nullptr) *present_memory = false;
  if (list == nullptr) return out;
  for (const api::QuantityEntry* entry : *list) {
    if (entry->key() == nullptr) continue;
    std::string_view name = entry->key()->string_view();
    std::string_view text = entry->value() != nullptr ? entry->value()->string_view() : "";
    auto q = model::Quantity::Parse(text);
    if (!q.ok()) {
      return Status::Invalid("resource " + std::string(name) + ": " + q.status().message());
    }
    if (name == kResourceCpu) {
      out.milli_cpu = q->MilliValue();
      if (present_cpu != nullptr) *present_cpu = true;
    } else if (name == kResourceMemory) {
      out.memory = q->Value();
      if (present_memory != nullptr) *present_memory = true;
    } else if (name == kResourceEphemeralStorage) {
      out.ephemeral_storage = q->Value();
    } else if (name == kResourcePods) {
      out.allowed_pods = q->Value();
    } else if (IsScalarResourceName(name)) {
      out.SetScalar(name, q->Value());
    }
  }
  return out;
}

}  // namespace podflow::scheduler
