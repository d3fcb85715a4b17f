#include "cli/print_util.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "cli/human_time.h"

namespace podflow::cli {

std::string FormatLabels(const Entries& labels) {
  std::vector<std::string> parts;
  for (const auto& e : labels) parts.push_back(e->key + "=" + e->value);
  std::sort(parts.begin(), parts.end());
  if (parts.empty()) return "<none>";
  return Join(parts, ",");
}

std::string FormatLabelSelector(const api::LabelSelectorT* selector) {
  if (selector == nullptr) return "<none>";
  std::vector<std::string> parts;
  for (const auto& e : selector->match_labels) parts.push_back(e->key + "=" + e->value);
  for (const auto& r : selector->match_expressions) {
    std::vector<std::string> values = r->values;
    std::sort(values.begin(), values.end());
    switch (r->operator_) {
      case api::LabelSelectorOperator::In:
        parts.push_back(r->key + " in (" + Join(values, ",") + ")");
        break;
      case api::LabelSelectorOperator::NotIn:
        parts.push_back(r->key + " notin (" + Join(values, ",") + ")");
        break;
      case api::LabelSelectorOperator::Exists:
        parts.push_back(r->key);
        break;
      case api::LabelSelectorOperator::DoesNotExist:
        parts.push_back("!" + r->key);
        break;
      default:
        break;
    }
  }
  if (parts.empty()) return "<none>";
  return Join(parts, ",");
}

std::string ProtocolName(api::Protocol protocol) {
  if (protocol == api::Protocol::Unset) return "TCP";
  return api::EnumNameProtocol(protocol);
}

std::string ConditionStatusName(api::ConditionStatus status) {
  if (status == api::ConditionStatus::Unset) return "";
  return api::EnumNameConditionStatus(status);
}

std::string ObjectName(const model::KindInfo& kind, std::string_view name) {
  const std::string group(model::ApiGroup(kind));
  return Lower(kind.kind) + (group.empty() ? "" : "." + group) + "/" + std::string(name);
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

std::string JoinHostPort(std::string_view host, std::string_view port) {
  if (host.find(':') != std::string_view::npos) {
    return "[" + std::string(host) + "]:" + std::string(port);
  }
  return std::string(host) + ":" + std::string(port);
}

std::string IntOrStringText(const api::IntOrStringT* v) {
  if (v == nullptr) return "";
  if (v->type == api::IntOrStringType::String) return v->str_val;
  return std::to_string(v->int_val);
}

std::string FormatEndpoints(const api::EndpointsT& endpoints, const std::string* port_name) {
  if (endpoints.subsets.empty()) return "<none>";
  constexpr size_t kMax = 3;
  std::vector<std::string> list;
  bool more = false;
  size_t count = 0;
  for (const auto& ss : endpoints.subsets) {
    if (ss->ports.empty()) {
      // Headless services may have no ports.
      count += ss->addresses.size();
      for (const auto& addr : ss->addresses) {
        if (list.size() == kMax) {
          more = true;
          break;
        }
        list.push_back(addr->ip);
      }
      continue;
    }
    for (const auto& port : ss->ports) {
      if (port_name != nullptr && port->name != *port_name) continue;
      count += ss->addresses.size();
      for (const auto& addr : ss->addresses) {
        if (list.size() == kMax) {
          more = true;
          break;
        }
        list.push_back(JoinHostPort(addr->ip, std::to_string(port->port)));
      }
    }
  }
  std::string out = Join(list, ",");
  if (more) out += " + " + std::to_string(count - kMax) + " more...";
  return out;
}

std::vector<std::string> NodeRoles(const api::NodeT& node) {
  constexpr std::string_view kRolePrefix = "node-role.kubernetes.io/";
  std::set<std::string> roles;
  if (node.metadata) {
    for (const auto& e : node.metadata->labels) {
      if (e->key.starts_with(kRolePrefix)) {
        std::string role = e->key.substr(kRolePrefix.size());
        if (!role.empty()) roles.insert(role);
      } else if (e->key == "kubernetes.io/role" && !e->value.empty()) {
        roles.insert(e->value);
      }
    }
  }
  return {roles.begin(), roles.end()};
}

std::string EventLastTime(const api::EventT& event) {
  if (event.series && !event.series->last_observed_time.empty()) {
    return event.series->last_observed_time;
  }
  if (!event.last_timestamp.empty()) return event.last_timestamp;
  if (!event.event_time.empty()) return event.event_time;
  return event.first_timestamp;
}

std::optional<double> NumberOf(const model::Value& v) {
  if (v.kind() == model::Value::Kind::kInt) return static_cast<double>(v.int_value());
  if (v.kind() == model::Value::Kind::kNumber) return v.number_value();
  return std::nullopt;
}

model::Value KeysSorted(const model::Value& v) {
  if (v.kind() == model::Value::Kind::kArray) {
    model::Value out = model::Value::Array();
    for (const model::Value& item : v.items()) out.Append(KeysSorted(item));
    return out;
  }
  if (v.kind() != model::Value::Kind::kObject) return v;
  std::vector<std::pair<std::string, model::Value>> members = v.members();
  std::sort(members.begin(), members.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  model::Value out = model::Value::Object();
  for (auto& [k, member] : members) out.Set(k, KeysSorted(member));
  return out;
}

}  // namespace podflow::cli
