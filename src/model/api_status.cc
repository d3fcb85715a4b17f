#include "model/api_status.h"

#include <cctype>

#include "messages_generated.h"

namespace podflow::model {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "" for the core group, "scheduling.k8s.io" for "scheduling.k8s.io/v1".
std::string Group(const KindInfo& kind) { return std::string(ApiGroup(kind)); }

// "pods", or "priorityclasses.scheduling.k8s.io" as GroupResource prints.
std::string QualifiedResource(const KindInfo& kind) {
  std::string group = Group(kind);
  return std::string(kind.resource) + (group.empty() ? "" : "." + group);
}

ApiStatusInfo Failure(int32_t code, std::string reason, std::string message) {
  ApiStatusInfo info;
  info.status = "Failure";
  info.code = code;
  info.reason = std::move(reason);
  info.message = std::move(message);
  return info;
}

}  // namespace

ApiStatusInfo CreatedStatus(const KindInfo& kind, std::string_view name) {
  ApiStatusInfo info;
  info.status = "Success";
  info.code = 201;
  std::string group = Group(kind);
  info.message =
      Lower(kind.kind) + (group.empty() ? "" : "." + group) + "/" + std::string(name) + " created";
  info.details.name = std::string(name);
  info.details.group = std::move(group);
  info.details.kind = std::string(kind.kind);
  return info;
}

ApiStatusInfo InvalidStatus(const KindInfo& kind, std::string_view name,
                            std::vector<FieldError> causes) {
  // The kind as GroupKind prints: "Pod", "PriorityClass.scheduling.k8s.io".
  std::string group = Group(kind);
  std::string qualified = std::string(kind.kind) + (group.empty() ? "" : "." + group);
  ApiStatusInfo info = Failure(422, "Invalid", InvalidMessage(qualified, name, causes));
  info.details.name = std::string(name);
  info.details.group = std::move(group);
  info.details.kind = std::string(kind.kind);
  info.details.causes = std::move(causes);
  return info;
}

ApiStatusInfo AlreadyExistsStatus(const KindInfo& kind, std::string_view name) {
  ApiStatusInfo info = Failure(409, "AlreadyExists",
                               QualifiedResource(kind) + " " + GoQuote(name) + " already exists");
  info.details.name = std::string(name);
  info.details.group = Group(kind);
  info.details.kind = std::string(kind.resource);
  return info;
}

ApiStatusInfo NotFoundStatus(const KindInfo& kind, std::string_view name) {
  ApiStatusInfo info = Failure(404, "NotFound", QualifiedResource(kind) + " " + GoQuote(name) + " not found");
  info.details.name = std::string(name);
  info.details.group = Group(kind);
  info.details.kind = std::string(kind.resource);
  return info;
}

ApiStatusInfo ConflictStatus(const KindInfo& kind, std::string_view name, std::string_view detail) {
  ApiStatusInfo info =
      Failure(409, "Conflict",
              "Operation cannot be fulfilled on " + QualifiedResource(kind) + " " + GoQuote(name) + ": " +
                  std::string(detail.empty() ? "the object has been modified; please apply your changes to the "
                                               "latest version and try again"
                                             : detail));
  info.details.name = std::string(name);
  info.details.group = Group(kind);
  info.details.kind = std::string(kind.resource);
  return info;
}

ApiStatusInfo OkStatus(const KindInfo& kind, std::string_view name, std::string message) {
  ApiStatusInfo info;
  info.status = "Success";
  info.code = 200;
  info.message = std::move(message);
  info.details.name = std::string(name);
  info.details.group = Group(kind);
  info.details.kind = std::string(kind.resource);
  return info;
}

ApiStatusInfo NoSuchResourceStatus() {
  return Failure(404, "NotFound", "the server could not find the requested resource");
}

ApiStatusInfo UnauthorizedStatus() { return Failure(401, "Unauthorized", "Unauthorized"); }

ApiStatusInfo ForbiddenStatus(std::string_view user, std::string_view verb,
                              const KindInfo& kind, std::string_view namespace_,
                              std::string_view name, std::string_view subresource) {
  const std::string resource =
      std::string(kind.resource) + (subresource.empty() ? "" : "/" + std::string(subresource));
  std::string reason = "User " + GoQuote(user) + " cannot " + std::string(verb) + " resource " +
                       GoQuote(resource) + " in API group " + GoQuote(Group(kind));
  // A list of every namespace is asked at the cluster scope.
  reason += kind.namespaced && !namespace_.empty() ? " in the namespace " + GoQuote(namespace_)
                                                   : " at the cluster scope";
  return AdmissionForbiddenStatus(kind, name, reason);
}

ApiStatusInfo AdmissionForbiddenStatus(const KindInfo& kind, std::string_view name,
                                       std::string_view reason) {
  // apierrors.NewForbidden: `<resource> "<name>" is forbidden: <reason>`,
  // the name left out when there is none.
  std::string message = QualifiedResource(kind);
  if (!name.empty()) message += " " + GoQuote(name);
  message += " is forbidden: " + std::string(reason);
  ApiStatusInfo info = Failure(403, "Forbidden", std::move(message));
  info.details.name = std::string(name);
  info.details.group = Group(kind);
  info.details.kind = std::string(kind.resource);
  return info;
}

ApiStatusInfo BadRequestStatus(std::string message) {
  return Failure(400, "BadRequest", std::move(message));
}

ApiStatusInfo RequestEntityTooLargeStatus(int64_t limit) {
  return Failure(413, "RequestEntityTooLarge", "Request entity too large: limit is " + std::to_string(limit));
}

ApiStatusInfo InternalErrorStatus(std::string_view message) {
  return Failure(500, "InternalError", "Internal error occurred: " + std::string(message));
}

flatbuffers::Offset<msg::ApiStatus> WriteApiStatus(flatbuffers::FlatBufferBuilder& fbb,
                                                   const ApiStatusInfo& info) {
  std::vector<flatbuffers::Offset<msg::StatusCause>> causes;
  for (const FieldError& c : info.details.causes) {
    causes.push_back(msg::CreateStatusCauseDirect(fbb, std::string(c.Reason()).c_str(),
                                                  c.message.c_str(), c.field.c_str()));
  }
  const ApiStatusInfo::Details& d = info.details;
  flatbuffers::Offset<msg::StatusDetails> details;
  if (!d.name.empty() || !d.group.empty() || !d.kind.empty() || !causes.empty()) {
    details = msg::CreateStatusDetailsDirect(fbb, d.name.c_str(), d.group.c_str(), d.kind.c_str(),
                                             causes.empty() ? nullptr : &causes);
  }
  return msg::CreateApiStatusDirect(fbb, info.status.c_str(), info.code, info.reason.c_str(),
                                    info.message.c_str(), details);
}

ApiStatusInfo ReadApiStatus(const msg::ApiStatus& status) {
  auto str = [](const flatbuffers::String* s) { return s ? s->str() : std::string(); };
  ApiStatusInfo info;
  info.status = str(status.status());
  info.code = status.code();
  info.reason = str(status.reason());
  info.message = str(status.message());
  if (const msg::StatusDetails* d = status.details()) {
    info.details.name = str(d->name());
    info.details.group = str(d->group());
    info.details.kind = str(d->kind());
    if (d->causes()) {
      for (const msg::StatusCause* c : *d->causes()) {
        FieldError cause;
        cause.field = str(c->field());
        cause.message = str(c->message());
        cause.type = FieldError::TypeOfReason(str(c->reason()));
        info.details.causes.push_back(std::move(cause));
      }
    }
  }
  return info;
}

std::string KubectlMessage(const ApiStatusInfo& info, std::string_view source) {
  if (info.success()) return info.message;
  // kubectl prints a 401 without the server's message (cmdutil.CheckErr).
  if (info.code == 401) return "error: You must be logged in to the server (Unauthorized)";
  std::string out = "Error from server";
  if (!info.reason.empty()) out += " (" + info.reason + ")";
  out += ": ";
  if (!source.empty()) out += "error when creating " + GoQuote(source) + ": ";
  return out + info.message;
}

}  // namespace podflow::model
