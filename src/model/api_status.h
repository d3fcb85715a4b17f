// Kubernetes-style API statuses (metav1.Status): what admission answers a
// submit or an API request with, its msg::ApiStatus wire form, and the line kubectl prints
// for it. The reason / HTTP code pairs are fixed here: 201 Success, 400
// BadRequest, 401 Unauthorized, 403 Forbidden, 404 NotFound, 409 AlreadyExists
// and Conflict, 413
// RequestEntityTooLarge, 422 Invalid, 500 InternalError.
//
// Thread safety: value types and pure functions.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/codec.h"
#include "model/field_error.h"

namespace podflow::msg {
struct ApiStatus;
}

namespace podflow::model {

// The content of a metav1.Status (and of msg::ApiStatus).
struct ApiStatusInfo {
  std::string status;  // "Success" or "Failure"
  int32_t code = 0;    // HTTP-like: 201, 400, 401, 403, 409, 413, 422, 500
  std::string reason;  // "", "Invalid", "AlreadyExists", "Forbidden", ...
  std::string message;
  struct Details {
    std::string name;
    std::string group;
    std::string kind;  // "Pod" for Invalid, the resource ("pods") otherwise
    std::vector<FieldError> causes;
  } details;

  bool success() const { return status == "Success"; }
};

// 201 Success, message `pod/nginx-pod created`.
ApiStatusInfo CreatedStatus(const KindInfo& kind, std::string_view name);
// 422 Invalid, message `Pod "x" is invalid: ...`, details with every cause.
ApiStatusInfo InvalidStatus(const KindInfo& kind, std::string_view name,
                            std::vector<FieldError> causes);
// 409 AlreadyExists, message `pods "x" already exists`. The caller turns a
// failed "must not exist" guard into this.
ApiStatusInfo AlreadyExistsStatus(const KindInfo& kind, std::string_view name);
// 404 NotFound, message `pods "x" not found` (`namespaces "x" not found`).
ApiStatusInfo NotFoundStatus(const KindInfo& kind, std::string_view name);
// 409 Conflict for a stale resourceVersion: `Operation cannot be fulfilled
// on pods "x": the object has been modified; please apply your changes to
// the latest version and try again`; `detail` replaces the part after the
// colon (a UID precondition).
ApiStatusInfo ConflictStatus(const KindInfo& kind, std::string_view name, std::string_view detail = {});
// 200 Success for a request that changed, removed or read an object; the
// message is what kubectl prints for it (`pod/x configured`, `pod "x"
// deleted`), which the client words.
ApiStatusInfo OkStatus(const KindInfo& kind, std::string_view name, std::string message = {});
// 404 NotFound for a subresource the kind does not have: `the server could
// not find the requested resource`.
ApiStatusInfo NoSuchResourceStatus();
// 401 Unauthorized, message "Unauthorized".
ApiStatusInfo UnauthorizedStatus();
// 403 Forbidden: `pods is forbidden: User "alice" cannot create resource
// "pods" in API group "" in the namespace "default"` (`at the cluster scope`
// for cluster-scoped kinds and lists of every namespace; `pods "x" is
// forbidden` when a name is given; `resource "pods/status"` for a
// subresource).
ApiStatusInfo ForbiddenStatus(std::string_view user, std::string_view verb,
                              const KindInfo& kind, std::string_view namespace_,
                              std::string_view name = {}, std::string_view subresource = {});
// 403 Forbidden from an admission plugin: `pods "x" is forbidden: <reason>`
// (`priorityclasses.scheduling.k8s.io "x" is forbidden: ...` for group kinds).
ApiStatusInfo AdmissionForbiddenStatus(const KindInfo& kind, std::string_view name,
                                       std::string_view reason);
// 400 BadRequest with `message` (undecodable manifests).
ApiStatusInfo BadRequestStatus(std::string message);
// 413 RequestEntityTooLarge: `Request entity too large: limit is 3145728`.
ApiStatusInfo RequestEntityTooLargeStatus(int64_t limit);
// 500 InternalError: `Internal error occurred: <message>`.
ApiStatusInfo InternalErrorStatus(std::string_view message);

// Writes `info` as a msg::ApiStatus table into `fbb`.
flatbuffers::Offset<msg::ApiStatus> WriteApiStatus(flatbuffers::FlatBufferBuilder& fbb,
                                                   const ApiStatusInfo& info);
// Reads a msg::ApiStatus back. Cause types come from the reason strings.
ApiStatusInfo ReadApiStatus(const msg::ApiStatus& status);

// The line kubectl prints for the outcome:
//   pod/nginx-pod created
//   Error from server (AlreadyExists): pods "nginx-pod" already exists
//   Error from server (Invalid): Pod "x" is invalid: spec.containers[0].image: Required value
//   error: You must be logged in to the server (Unauthorized)
// With a `source` file name, creation errors read as kubectl apply -f prints
// them: `Error from server (AlreadyExists): error when creating "pod.yaml": ...`.
std::string KubectlMessage(const ApiStatusInfo& info, std::string_view source = {});

}  // namespace podflow::model
