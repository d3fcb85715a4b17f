// LimitRanger: the LimitRanges of a pod's namespace give its containers
// default requests and limits (mutating; recorded in the
// kubernetes.io/limit-ranger annotation) and bound what containers, pods and
// claims may ask (validating), in kube-apiserver's words: `maximum cpu usage
// per Container is 800m, but limit is 1500m`.
#include <algorithm>
#include <map>

#include "model/objects.h"
#include "model/quantity.h"
#include "stages/admission/defaults.h"
#include "stages/admission/plugins/plugin.h"
#include "stages/admission/validation.h"

namespace podflow::admission {
namespace {

using ResourceList = std::vector<std::unique_ptr<api::QuantityEntryT>>;
// A resource list read for comparison: name -> quantity as written.
using Amounts = std::map<std::string, std::string>;

Amounts Read(const ResourceList& list) {
  Amounts out;
  for (const auto& e : list) out[e->key] = e->value;
  return out;
}

// Compared in milli-units, in 128 bits: no quantity a manifest can hold
// overflows it, and sums of them neither.
__int128 Observed(const std::string& text) {
  Result<model::Quantity> q = model::Quantity::Parse(text);
  return q.ok() ? static_cast<__int128>(q->MilliValue()) : 0;
}

void MinConstraint(std::vector<std::string>& errs, std::string_view type, const std::string& name,
                   const std::string& enforced, const Amounts& requests, const Amounts& limits) {
  auto req = requests.find(name);
  auto lim = limits.find(name);
  const std::string head = "minimum " + name + " usage per " + std::string(type) + " is " + enforced;
  if (req == requests.end()) {
    errs.push_back(head + ".  No request is specified");
  } else if (Observed(req->second) < Observed(enforced)) {
    errs.push_back(head + ", but request is " + req->second);
  } else if (lim != limits.end() && Observed(lim->second) < Observed(enforced)) {
    errs.push_back(head + ", but limit is " + lim->second);
  }
}

void MaxConstraint(std::vector<std::string>& errs, std::string_view type, const std::string& name,
                   const std::string& enforced, const Amounts& requests, const Amounts& limits) {
  auto req = requests.find(name);
  auto lim = limits.find(name);
  const std::string head = "maximum " + name + " usage per " + std::string(type) + " is " + enforced;
  if (lim == limits.end()) {
    errs.push_back(head + ".  No limit is specified");
  } else if (Observed(lim->second) > Observed(enforced)) {
    errs.push_back(head + ", but limit is " + lim->second);
  } else if (req != requests.end() && Observed(req->second) > Observed(enforced)) {
    errs.push_back(head + ", but request is " + req->second);
  }
}

// A claim is bounded by its request only (it has no limit to speak of).
void MaxRequestConstraint(std::vector<std::string>& errs, std::string_view type, const std::string& name,
                          const std::string& enforced, const Amounts& requests) {
  auto req = requests.find(name);
  const std::string head = "maximum " + name + " usage per " + std::string(type) + " is " + enforced;
  if (req == requests.end()) {
    errs.push_back(head + ".  No request is specified");
  } else if (Observed(req->second) > Observed(enforced)) {
    errs.push_back(head + ", but request is " + req->second);
  }
}

void RatioConstraint(std::vector<std::string>& errs, std::string_view type, const std::string& name,
                     const std::string& enforced, const Amounts& requests, const Amounts& limits) {
  auto req = requests.find(name);
  auto lim = limits.find(name);
  const std::string head = name + " max limit to request ratio per " + std::string(type) + " is " + enforced;
  if (req == requests.end() || Observed(req->second) == 0) {
    errs.push_back(head + ", but no request is specified or request is 0");
    return;
  }
  if (lim == limits.end() || Observed(lim->second) == 0) {
    errs.push_back(head + ", but no limit is specified or limit is 0");
    return;
  }
  const double ratio = static_cast<double>(Observed(lim->second)) / static_cast<double>(Observed(req->second));
  if (ratio * 1000 > static_cast<double>(Observed(enforced))) {
    char shown[64];
    std::snprintf(shown, sizeof shown, "%f", ratio);
    errs.push_back(head + ", but provided ratio is " + shown);
  }
}

// The pod's totals (PodResources) as written.
Amounts PodTotal(const api::PodSpecT& spec, bool limits) {
  Amounts out;
  for (const auto& [name, q] : PodResources(spec, limits)) out[name] = q.ToString();
  return out;
}

// The LimitRanges of `ns`: the stored ones and those admitted earlier in
// the request.
Result<std::vector<api::LimitRangeT>> RangesIn(const std::string& ns, const RequestState& state) {
  std::vector<api::LimitRangeT> out;
  if (state.limit_ranges) {
    Result<std::vector<api::LimitRangeT>> stored = state.limit_ranges(ns);
    if (!stored.ok()) return stored.status();
    out = std::move(*stored);
  }
  for (const std::string& bytes : state.request_limit_ranges) {
    auto range = model::Unpack<api::LimitRange>(bytes);
    if (range->metadata && range->metadata->namespace_ == ns) out.push_back(std::move(*range));
  }
  return out;
}

class LimitRanger : public Plugin {
 public:
  std::optional<ApiStatusInfo> Admit(Attributes& a, RequestState& state) const override {
    api::PodT* pod = a.As<api::PodT>();
    if (pod == nullptr || !pod->spec) return std::nullopt;
    Result<std::vector<api::LimitRangeT>> ranges = RangesIn(a.namespace_(), state);
    if (!ranges.ok()) return InternalErrorStatus(ranges.status().ToString());
    std::vector<std::string> annotations;
    auto apply = [&](api::ContainerT& c, const api::LimitRangeItemT& item) {
      auto& resources = c.resources ? *c.resources : *(c.resources = std::make_unique<api::ResourceRequirementsT>());
      std::vector<std::string> requests = AddMissing(resources.requests, item.default_request);
      std::vector<std::string> limits = AddMissing(resources.limits, item.default_);
      std::vector<std::string> said;
      if (!requests.empty()) said.push_back(Join(requests, ", ") + " request");
      if (!limits.empty()) said.push_back(Join(limits, ", ") + " limit");
      for (const std::string& s : said) annotations.push_back(s + " for container " + c.name);
    };
    for (const api::LimitRangeT& range : *ranges) {
      if (!range.spec) continue;
      for (const auto& item : range.spec->limits) {
        if (item->type != "Container") continue;
        for (auto& c : pod->spec->init_containers) apply(*c, *item);
        for (auto& c : pod->spec->containers) apply(*c, *item);
      }
    }
    if (!annotations.empty()) {
      if (!pod->metadata) pod->metadata = std::make_unique<api::ObjectMetaT>();
      SetEntry(pod->metadata->annotations, "kubernetes.io/limit-ranger",
               "LimitRanger plugin set: " + Join(annotations, "; "));
    }
    return std::nullopt;
  }

  std::optional<ApiStatusInfo> Validate(const Attributes& a, RequestState& state) const override {
    const api::PodT* pod = a.As<api::PodT>();
    const api::PersistentVolumeClaimT* claim = a.As<api::PersistentVolumeClaimT>();
    if ((pod == nullptr || !pod->spec) && (claim == nullptr || !claim->spec)) return std::nullopt;
    Result<std::vector<api::LimitRangeT>> ranges = RangesIn(a.namespace_(), state);
    if (!ranges.ok()) return InternalErrorStatus(ranges.status().ToString());
    std::vector<std::string> errs;
    for (const api::LimitRangeT& range : *ranges) {
      if (!range.spec) continue;
      for (const auto& item : range.spec->limits) {
        if (pod != nullptr) CheckPod(errs, *item, *pod->spec);
        if (claim != nullptr && item->type == "PersistentVolumeClaim") {
          static const ResourceList kNone;
          const Amounts requests =
              Read(claim->spec->resources ? claim->spec->resources->requests : kNone);
          for (const auto& e : item->min) MinConstraint(errs, item->type, e->key, e->value, requests, {});
          for (const auto& e : item->max) MaxRequestConstraint(errs, item->type, e->key, e->value, requests);
        }
      }
    }
    // An aggregate error says each message once.
    std::vector<std::string> unique;
    for (std::string& e : errs) {
      if (std::find(unique.begin(), unique.end(), e) == unique.end()) unique.push_back(std::move(e));
    }
    errs = std::move(unique);
    if (errs.empty()) return std::nullopt;
    return AdmissionForbiddenStatus(a.kind(), a.name(), errs.size() == 1 ? errs[0] : "[" + Join(errs, ", ") + "]");
  }

 private:
  static void CheckPod(std::vector<std::string>& errs, const api::LimitRangeItemT& item, const api::PodSpecT& spec) {
    auto check = [&](const Amounts& requests, const Amounts& limits) {
      for (const auto& e : item.min) MinConstraint(errs, item.type, e->key, e->value, requests, limits);
      for (const auto& e : item.max) MaxConstraint(errs, item.type, e->key, e->value, requests, limits);
      for (const auto& e : item.max_limit_request_ratio) {
        RatioConstraint(errs, item.type, e->key, e->value, requests, limits);
      }
    };
    if (item.type == "Container") {
      static const ResourceList kNone;
      auto each = [&](const auto& containers) {
        for (const auto& c : containers) {
          check(Read(c->resources ? c->resources->requests : kNone), Read(c->resources ? c->resources->limits : kNone));
        }
      };
      each(spec.containers);
      each(spec.init_containers);
    } else if (item.type == "Pod") {
      check(PodTotal(spec, false), PodTotal(spec, true));
    }
  }
};

}  // namespace

std::unique_ptr<Plugin> NewLimitRanger() { return std::make_unique<LimitRanger>(); }

}  // namespace podflow::admission
