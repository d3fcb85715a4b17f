#include "stages/controllers/deployment.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

namespace podflow::controllers {
namespace {

constexpr std::string_view kSafeAlphabet = "bcdfghjklmnpqrstvwxz2456789";

uint32_t Fnv1a(uint32_t hash, std::string_view bytes) {
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 16777619u;
  }
  return hash;
}

// Created earlier first; the same time by name.
bool CreatedBefore(const SetState* a, const SetState* b) {
  if (a->created != b->created) return a->created < b->created;
  return a->name < b->name;
}

int32_t Sum(const std::vector<SetState*>& sets, int32_t SetState::*field) {
  int32_t out = 0;
  for (const SetState* s : sets) out += s->*field;
  return out;
}

}  // namespace

std::string PodTemplateHash(std::string_view canonical, std::optional<int32_t> collision_count) {
  uint32_t hash = Fnv1a(2166136261u, canonical);
  if (collision_count.has_value()) {
    const uint32_t count = static_cast<uint32_t>(*collision_count);
    // Eight bytes, the count little-endian first, as Kubernetes adds it.
    const char bytes[8] = {static_cast<char>(count & 0xff), static_cast<char>((count >> 8) & 0xff),
                           static_cast<char>((count >> 16) & 0xff), static_cast<char>((count >> 24) & 0xff), 0, 0, 0, 0};
    hash = Fnv1a(hash, std::string_view(bytes, 8));
  }
  std::string out = std::to_string(hash);
  for (char& c : out) c = kSafeAlphabet[static_cast<unsigned char>(c) % kSafeAlphabet.size()];
  return out;
}

std::optional<int32_t> ScaledValue(const api::IntOrString* value, int32_t total, bool round_up) {
  if (value == nullptr) return 0;
  if (value->type() == api::IntOrStringType::Int) return value->int_val();
  if (value->str_val() == nullptr) return std::nullopt;
  const std::string_view text = value->str_val()->string_view();
  if (text.size() < 2 || text.back() != '%') return std::nullopt;
  int32_t percent = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size() - 1, percent);
  if (error != std::errc() || end != text.data() + text.size() - 1) return std::nullopt;
  const double scaled = static_cast<double>(percent) * static_cast<double>(total) / 100.0;
  return static_cast<int32_t>(round_up ? std::ceil(scaled) : std::floor(scaled));
}

Fenceposts ResolveFenceposts(const api::DeploymentSpec& spec) {
  const api::DeploymentStrategy* strategy = spec.strategy();
  const int32_t desired = spec.replicas().value_or(1);
  if (strategy == nullptr || strategy->type() != api::DeploymentStrategyType::RollingUpdate) return {};
  const api::RollingUpdateDeployment* ru = strategy->rolling_update();
  Fenceposts out;
  out.max_surge = ScaledValue(ru != nullptr ? ru->max_surge() : nullptr, desired, true).value_or(0);
  out.max_unavailable = ScaledValue(ru != nullptr ? ru->max_unavailable() : nullptr, desired, false).value_or(0);
  if (out.max_surge == 0 && out.max_unavailable == 0) out.max_unavailable = 1;  // else no progress
  out.max_unavailable = std::clamp(out.max_unavailable, 0, std::max(desired, 0));
  return out;
}

void SortOldestFirst(std::vector<SetState*>& sets) { std::ranges::sort(sets, CreatedBefore); }

int32_t RollingNewReplicas(int32_t desired, const Fenceposts& f, int32_t all_replicas, int32_t new_replicas) {
  const int32_t max_total = desired + f.max_surge;
  if (all_replicas >= max_total) return new_replicas;
  const int32_t up = std::min(max_total - all_replicas, desired - new_replicas);
  return new_replicas + std::max(up, 0);
}

int32_t ScaleDownOld(int32_t desired, const Fenceposts& f, const SetState* new_set, std::vector<SetState*> old_sets) {
  if (Sum(old_sets, &SetState::replicas) == 0) return 0;
  const int32_t new_replicas = new_set != nullptr ? new_set->replicas : 0;
  const int32_t all = Sum(old_sets, &SetState::replicas) + new_replicas;
  const int32_t min_available = desired - f.max_unavailable;
  const int32_t new_unavailable = new_set != nullptr ? new_set->replicas - new_set->available : 0;
  const int32_t max_scaled_down = all - min_available - new_unavailable;
  if (max_scaled_down <= 0) return 0;
  SortOldestFirst(old_sets);
  // The pods that are not available go first: scaling them away costs no
  // availability.
  int32_t cleaned = 0;
  for (SetState* s : old_sets) {
    if (cleaned >= max_scaled_down) break;
    if (s->replicas == 0 || s->replicas <= s->available) continue;
    const int32_t n = std::min(max_scaled_down - cleaned, s->replicas - s->available);
    s->replicas -= n;
    cleaned += n;
  }
  // Then available ones, as far as min_available allows.
  const int32_t available = Sum(old_sets, &SetState::available) + (new_set != nullptr ? new_set->available : 0);
  if (available <= min_available) return cleaned;
  const int32_t total = available - min_available;
  int32_t scaled = 0;
  for (SetState* s : old_sets) {
    if (scaled >= total) break;
    if (s->replicas == 0) continue;
    const int32_t n = std::min(s->replicas, total - scaled);
    s->replicas -= n;
    scaled += n;
  }
  return cleaned + scaled;
}

void ScaleProportionally(int32_t desired, const Fenceposts& f, int32_t status_replicas, std::vector<SetState*> active) {
  if (active.empty()) return;
  const int32_t allowed = desired > 0 ? desired + f.max_surge : 0;
  const int32_t to_add = allowed - Sum(active, &SetState::replicas);
  // The largest first; among equals the newer when adding, the older when
  // taking away.
  std::ranges::sort(active, [&](const SetState* a, const SetState* b) {
    if (a->replicas != b->replicas) return a->replicas > b->replicas;
    return to_add > 0 ? CreatedBefore(b, a) : CreatedBefore(a, b);
  });
  // Each one's share: its size scaled from what it was sized for to what
  // the Deployment is now (rounded), within what is left to add.
  const auto fraction = [&](const SetState* s) -> int32_t {
    if (desired == 0) return -s->replicas;
    // What it was sized for; without it (or 0), what the Deployment has.
    const int32_t sized_for = s->max_replicas.value_or(0) > 0 ? *s->max_replicas : status_replicas;
    if (sized_for <= 0) return 0;
    const double scaled = static_cast<double>(s->replicas) * static_cast<double>(desired + f.max_surge) /
                          static_cast<double>(sized_for);
    return static_cast<int32_t>(std::round(scaled)) - s->replicas;
  };
  std::map<const SetState*, int32_t> size;
  int32_t added = 0;
  for (SetState* s : active) {
    int32_t share = 0;
    if (to_add != 0 && s->replicas != 0 && to_add != added) {
      const int32_t left = to_add - added;
      share = to_add > 0 ? std::min(fraction(s), left) : std::max(fraction(s), left);
    }
    size[s] = s->replicas + share;
    added += share;
  }
  // What rounding left over goes to the largest.
  if (added != to_add) size[active.front()] = std::max(0, size[active.front()] + to_add - added);
  for (SetState* s : active) s->replicas = size[s];
}

DeploymentCounts CountDeployment(const std::vector<const SetState*>& all, const SetState* new_set) {
  DeploymentCounts out;
  int32_t asked = 0;
  for (const SetState* s : all) {
    out.replicas += s->current;
    out.ready += s->ready;
    out.available += s->available;
    asked += s->replicas;
  }
  out.updated = new_set != nullptr ? new_set->current : 0;
  out.unavailable = std::max(0, asked - out.available);
  return out;
}

bool DeploymentComplete(int32_t desired, const DeploymentCounts& c) {
  return c.updated == desired && c.replicas == desired && c.available == desired;
}

bool DeploymentProgressed(const DeploymentCounts& before, const DeploymentCounts& now) {
  return now.updated > before.updated || now.replicas - now.updated < before.replicas - before.updated ||
         now.ready > before.ready || now.available > before.available;
}

api::DeploymentConditionT DeploymentCondition(std::string type, api::ConditionStatus status, std::string reason,
                                              std::string message, SimTime now) {
  api::DeploymentConditionT out;
  out.type = std::move(type);
  out.status = status;
  out.reason = std::move(reason);
  out.message = std::move(message);
  out.last_update_time = FormatRfc3339(now);
  out.last_transition_time = out.last_update_time;
  return out;
}

bool SetDeploymentCondition(api::DeploymentStatusT& status, const api::DeploymentConditionT& condition) {
  auto& conditions = status.conditions;
  auto it = std::ranges::find_if(conditions, [&](const auto& c) { return c->type == condition.type; });
  auto next = std::make_unique<api::DeploymentConditionT>(condition);
  if (it != conditions.end()) {
    if ((*it)->status == condition.status && (*it)->reason == condition.reason) return false;
    if ((*it)->status == condition.status) next->last_transition_time = (*it)->last_transition_time;
    conditions.erase(it);
  }
  conditions.push_back(std::move(next));
  return true;
}

}  // namespace podflow::controllers
