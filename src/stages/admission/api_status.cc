// Field causes and Kubernetes-style API statuses: construction, the
// msg::ApiStatus wire form, and the lines kubectl prints.
#include <cctype>

#include "messages_generated.h"
#include "stages/admission/admission.h"

namespace podflow::admission {
namespace {

// Go's %q for the plain strings that appear in manifests.
std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "" for the core group, "scheduling.k8s.io" for "scheduling.k8s.io/v1".
std::string Group(const model::KindInfo& kind) {
  size_t slash = kind.api_version.find('/');
  return slash == std::string_view::npos ? "" : std::string(kind.api_version.substr(0, slash));
}

// "pods", or "priorityclasses.scheduling.k8s.io" as GroupResource prints.
std::string QualifiedResource(const model::KindInfo& kind) {
  std::string group = Group(kind);
  return std::string(kind.resource) + (group.empty() ? "" : "." + group);
}

struct ReasonName {
  Cause::Type type;
  std::string_view reason;
};
constexpr ReasonName kReasons[] = {
    {Cause::Type::kRequired, "FieldValueRequired"},
    {Cause::Type::kInvalid, "FieldValueInvalid"},
    {Cause::Type::kDuplicate, "FieldValueDuplicate"},
    {Cause::Type::kNotSupported, "FieldValueNotSupported"},
    {Cause::Type::kTooLong, "FieldValueTooLong"},
    {Cause::Type::kForbidden, "FieldValueForbidden"},
};

ApiStatusInfo Failure(int32_t code, std::string reason, std::string message) {
  ApiStatusInfo info;
  info.status = "Failure";
  info.code = code;
  info.reason = std::move(reason);
  info.message = std::move(message);
  return info;
}

}  // namespace

std::string_view Cause::Reason() const {
  for (const ReasonName& r : kReasons) {
    if (r.type == type) return r.reason;
  }
  return "FieldValueInvalid";
}

std::string Cause::ToString() const { return field + ": " + message; }

Cause Cause::Required(std::string field, std::string_view detail) {
  std::string message = "Required value";
  if (!detail.empty()) message += ": " + std::string(detail);
  return {Type::kRequired, std::move(field), std::move(message)};
}

Cause Cause::Invalid(std::string field, std::string_view value, std::string_view detail) {
  return InvalidRendered(std::move(field), Quote(value), detail);
}

Cause Cause::InvalidInt(std::string field, int64_t value, std::string_view detail) {
  return InvalidRendered(std::move(field), std::to_string(value), detail);
}

Cause Cause::InvalidRendered(std::string field, std::string_view rendered,
                             std::string_view detail) {
  std::string message = "Invalid value: " + std::string(rendered);
  if (!detail.empty()) message += ": " + std::string(detail);
  return {Type::kInvalid, std::move(field), std::move(message)};
}

Cause Cause::Duplicate(std::string field, std::string_view value) {
  return {Type::kDuplicate, std::move(field), "Duplicate value: " + Quote(value)};
}

Cause Cause::NotSupported(std::string field, std::string_view value,
                          const std::vector<std::string>& supported) {
  std::string message = "Unsupported value: " + Quote(value);
  if (!supported.empty()) {
    message += ": supported values: ";
    for (size_t i = 0; i < supported.size(); ++i) {
      if (i > 0) message += ", ";
      message += Quote(supported[i]);
    }
  }
  return {Type::kNotSupported, std::move(field), std::move(message)};
}

Cause Cause::TooLong(std::string field, int64_t max) {
  return {Type::kTooLong, std::move(field),
          "Too long: may not be more than " + std::to_string(max) + " bytes"};
}

Cause Cause::Forbidden(std::string field, std::string_view detail) {
  return {Type::kForbidden, std::move(field), "Forbidden: " + std::string(detail)};
}

Cause Cause::FromFieldError(const model::FieldError& error) {
  Type type = Type::kInvalid;
  switch (error.type) {
    case model::FieldError::Type::kRequired:
      type = Type::kRequired;
      break;
    case model::FieldError::Type::kDuplicate:
      type = Type::kDuplicate;
      break;
    case model::FieldError::Type::kUnsupported:
      type = Type::kNotSupported;
      break;
    case model::FieldError::Type::kTooLong:
      type = Type::kTooLong;
      break;
    case model::FieldError::Type::kInvalid:
    case model::FieldError::Type::kUnknownField:
      type = Type::kInvalid;
      break;
  }
  std::string text = error.ToString();
  std::string prefix = error.field + ": ";
  if (text.starts_with(prefix)) text.erase(0, prefix.size());
  return {type, error.field, std::move(text)};
}

std::string InvalidMessage(std::string_view kind, std::string_view name,
                           const std::vector<Cause>& causes) {
  std::string out = std::string(kind) + " " + Quote(name) + " is invalid: ";
  if (causes.size() == 1) return out + causes[0].ToString();
  out += "[";
  for (size_t i = 0; i < causes.size(); ++i) {
    if (i > 0) out += ", ";
    out += causes[i].ToString();
  }
  return out + "]";
}

ApiStatusInfo CreatedStatus(const model::KindInfo& kind, std::string_view name) {
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

ApiStatusInfo InvalidStatus(const model::KindInfo& kind, std::string_view name,
                            std::vector<Cause> causes) {
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

ApiStatusInfo AlreadyExistsStatus(const model::KindInfo& kind, std::string_view name) {
  ApiStatusInfo info = Failure(409, "AlreadyExists",
                               QualifiedResource(kind) + " " + Quote(name) + " already exists");
  info.details.name = std::string(name);
  info.details.group = Group(kind);
  info.details.kind = std::string(kind.resource);
  return info;
}

ApiStatusInfo UnauthorizedStatus() { return Failure(401, "Unauthorized", "Unauthorized"); }

ApiStatusInfo ForbiddenStatus(std::string_view user, std::string_view verb,
                              const model::KindInfo& kind, std::string_view namespace_,
                              std::string_view name) {
  std::string reason = "User " + Quote(user) + " cannot " + std::string(verb) + " resource " +
                       Quote(kind.resource) + " in API group " + Quote(Group(kind));
  reason += kind.namespaced ? " in the namespace " + Quote(namespace_) : " at the cluster scope";
  return AdmissionForbiddenStatus(kind, name, reason);
}

ApiStatusInfo AdmissionForbiddenStatus(const model::KindInfo& kind, std::string_view name,
                                       std::string_view reason) {
  // apierrors.NewForbidden: `<resource> "<name>" is forbidden: <reason>`,
  // the name left out when there is none.
  std::string message = QualifiedResource(kind);
  if (!name.empty()) message += " " + Quote(name);
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

ApiStatusInfo InternalErrorStatus(std::string_view message) {
  return Failure(500, "InternalError", "Internal error occurred: " + std::string(message));
}

flatbuffers::Offset<msg::ApiStatus> WriteApiStatus(flatbuffers::FlatBufferBuilder& fbb,
                                                   const ApiStatusInfo& info) {
  std::vector<flatbuffers::Offset<msg::StatusCause>> causes;
  for (const Cause& c : info.details.causes) {
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
        Cause cause{Cause::Type::kInvalid, str(c->field()), str(c->message())};
        for (const ReasonName& r : kReasons) {
          if (r.reason == str(c->reason())) cause.type = r.type;
        }
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
  if (!source.empty()) out += "error when creating " + Quote(source) + ": ";
  return out + info.message;
}

}  // namespace podflow::admission
