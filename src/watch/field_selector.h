// Field selectors over pods, as Kubernetes' watch takes them:
// "spec.nodeName=node-1", "status.phase!=Running,metadata.namespace=default".
// The node agents watch their pods with "spec.nodeName=<node>".
#pragma once

#include <string_view>

#include "base/result.h"
#include "watch/watch.h"

namespace podflow {

// A WatchFilter that holds when every requirement of `selector` holds for
// the pod stored in the value (a FlatBuffer Pod). A value that is not a
// well-formed Pod never matches.
// Supported fields: metadata.name, metadata.namespace, spec.nodeName,
// spec.schedulerName, spec.restartPolicy, status.phase, status.podIP.
// Operators: =, ==, !=. Invalid: an unsupported field ("field label not
// supported: spec.foo") or a malformed requirement.
Result<WatchFilter> PodFieldSelector(std::string_view selector);

// The node agent's filter: spec.nodeName == node_name.
WatchFilter PodNodeNameFilter(std::string node_name);

}  // namespace podflow
