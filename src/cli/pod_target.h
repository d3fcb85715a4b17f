// What `podflow logs` and `podflow exec` share, as kubectl does: the pod
// named on the command line (POD or pod/POD), read through the API, and
// the container chosen when no -c is given.
#pragma once

#include <optional>
#include <string>

#include "base/result.h"
#include "cli/api_session.h"
#include "pod_generated.h"

namespace podflow::cli {

// POD, pod/POD, pods/POD or po/POD as POD; "" for anything else.
std::string PodName(const std::string& target);

// The pod `name` in `ns`; nullopt with the API's refusal in `refused`
// (NotFound, Forbidden) or when the answer is no valid Pod.
Result<std::optional<KeyValue>> GetPod(ApiSession& api, const std::string& ns, const std::string& name,
                                       model::ApiStatusInfo* refused);

// The pod `name` in `ns`; nullopt once why not is printed as kubectl prints
// it (the API's refusal, or what kept it from being asked).
std::optional<KeyValue> ReadPod(ApiSession& api, const std::string& ns, const std::string& name);

// kubectl's choice when no -c is given: the default-container annotation,
// else the first container, said on stderr when there were others.
std::string DefaultContainer(const api::Pod& pod);

}  // namespace podflow::cli
