// Helpers shared by the table printers and describe (internal to src/cli).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api_generated.h"
#include "model/codec.h"
#include "model/value.h"

namespace podflow::cli {

using Entries = std::vector<std::unique_ptr<api::StringEntryT>>;

// labels.FormatLabels: "k=v,k2=v2" sorted by key, "<none>" when empty.
std::string FormatLabels(const Entries& labels);
// metav1.FormatLabelSelector: "app=web,tier in (a,b)", "<none>" when empty.
std::string FormatLabelSelector(const api::LabelSelectorT* selector);
// A protocol as the API defaults it: Unset reads as TCP.
std::string ProtocolName(api::Protocol protocol);
// "True", "False", "Unknown" (Unset reads as Unknown... as the API never stores it).
std::string ConditionStatusName(api::ConditionStatus status);
std::string Lower(std::string_view s);
// "pod/web", "deployment.apps/web": how kubectl names an object it acted on.
std::string ObjectName(const model::KindInfo& kind, std::string_view name);
std::string Join(const std::vector<std::string>& parts, std::string_view sep);
// `v` with its keys sorted at every depth, as Go's encoding/json writes a
// map (the last applied configuration, JSONPath's JSON).
model::Value KeysSorted(const model::Value& v);
// A JSON number's value (int or not), nullopt for anything else.
std::optional<double> NumberOf(const model::Value& v);
// net.JoinHostPort: brackets around IPv6 hosts.
std::string JoinHostPort(std::string_view host, std::string_view port);
// IntOrString as Go prints it.
std::string IntOrStringText(const api::IntOrStringT* v);

// kubectl's formatEndpoints (see printers.h).
std::string FormatEndpoints(const api::EndpointsT& endpoints, const std::string* port_name);
// Sorted roles from node-role.kubernetes.io/<role> and kubernetes.io/role.
std::vector<std::string> NodeRoles(const api::NodeT& node);
// Where an event was last seen: series.lastObservedTime, lastTimestamp or eventTime.
std::string EventLastTime(const api::EventT& event);

}  // namespace podflow::cli
