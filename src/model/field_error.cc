#include "model/field_error.h"

#include <algorithm>
#include <cstdio>

namespace podflow::model {
namespace {

struct ReasonName {
  FieldError::Type type;
  std::string_view reason;
};
constexpr ReasonName kReasons[] = {
    {FieldError::Type::kRequired, "FieldValueRequired"},
    {FieldError::Type::kInvalid, "FieldValueInvalid"},
    {FieldError::Type::kDuplicate, "FieldValueDuplicate"},
    {FieldError::Type::kNotSupported, "FieldValueNotSupported"},
    {FieldError::Type::kTooLong, "FieldValueTooLong"},
    {FieldError::Type::kForbidden, "FieldValueForbidden"},
    {FieldError::Type::kNotFound, "FieldValueNotFound"},
};

FieldError Make(FieldError::Type type, std::string field, std::string_view value,
                std::string_view detail, std::string message) {
  return {type, std::move(field), std::string(value), std::string(detail), std::move(message)};
}

}  // namespace

std::string GoQuote(std::string_view s) {
  // As Go's strconv.Quote: control characters, C1 controls and bytes that
  // are not UTF-8 are escaped, so that no raw NUL or newline ever reaches
  // a message.
  auto hex = [](unsigned v, int digits) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), "%0*x", digits, v);
    return std::string(buf);
  };
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\a': out += "\\a"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\v': out += "\\v"; continue;
      default: break;
    }
    if (c < 0x20 || c == 0x7f) {
      out += "\\x" + hex(c, 2);
      continue;
    }
    if (c < 0x80) {
      out += static_cast<char>(c);
      continue;
    }
    // A UTF-8 sequence is kept whole when well formed; C1 controls are \u.
    size_t len = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
    if (!ok || c > 0xF4) {
      out += "\\x" + hex(c, 2);
      continue;
    }
    if (c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0) {
      out += "\\u00" + hex(static_cast<unsigned char>(s[i + 1]), 2);
    } else {
      out.append(s.substr(i, len));
    }
    i += len - 1;
  }
  return out + "\"";
}

std::string_view FieldError::Reason() const {
  for (const ReasonName& r : kReasons) {
    if (r.type == type) return r.reason;
  }
  return "FieldValueInvalid";
}

FieldError::Type FieldError::TypeOfReason(std::string_view reason) {
  for (const ReasonName& r : kReasons) {
    if (r.reason == reason) return r.type;
  }
  return Type::kInvalid;
}

std::string FieldError::ToString() const { return field + ": " + message; }

FieldError FieldError::Required(std::string field, std::string_view detail) {
  std::string message = "Required value";
  if (!detail.empty()) message += ": " + std::string(detail);
  return Make(Type::kRequired, std::move(field), "", detail, std::move(message));
}

FieldError FieldError::Invalid(std::string field, std::string_view value,
                               std::string_view detail) {
  FieldError e = InvalidRendered(std::move(field), GoQuote(value), detail);
  e.value = std::string(value);
  return e;
}

FieldError FieldError::InvalidInt(std::string field, int64_t value, std::string_view detail) {
  return InvalidRendered(std::move(field), std::to_string(value), detail);
}

FieldError FieldError::InvalidRendered(std::string field, std::string_view rendered,
                                       std::string_view detail) {
  std::string message = "Invalid value: " + std::string(rendered);
  if (!detail.empty()) message += ": " + std::string(detail);
  return Make(Type::kInvalid, std::move(field), rendered, detail, std::move(message));
}

FieldError FieldError::NotFound(std::string field, std::string_view value) {
  return Make(Type::kNotFound, std::move(field), value, "", "Not found: " + GoQuote(value));
}

FieldError FieldError::Duplicate(std::string field, std::string_view value) {
  return Make(Type::kDuplicate, std::move(field), value, "", "Duplicate value: " + GoQuote(value));
}

FieldError FieldError::DuplicateInt(std::string field, int64_t value) {
  const std::string rendered = std::to_string(value);
  return Make(Type::kDuplicate, std::move(field), rendered, "", "Duplicate value: " + rendered);
}

FieldError FieldError::NotSupported(std::string field, std::string_view value,
                                    const std::vector<std::string>& supported) {
  std::string detail;
  if (!supported.empty()) {
    detail = "supported values: ";
    for (size_t i = 0; i < supported.size(); ++i) {
      if (i > 0) detail += ", ";
      detail += GoQuote(supported[i]);
    }
  }
  std::string message = "Unsupported value: " + GoQuote(value);
  if (!detail.empty()) message += ": " + detail;
  return Make(Type::kNotSupported, std::move(field), value, detail, std::move(message));
}

FieldError FieldError::TooLong(std::string field, int64_t max) {
  std::string detail = "may not be more than " + std::to_string(max) + " bytes";
  std::string message = "Too long: " + detail;
  return Make(Type::kTooLong, std::move(field), "", detail, std::move(message));
}

FieldError FieldError::Forbidden(std::string field, std::string_view detail) {
  return Make(Type::kForbidden, std::move(field), "", detail, "Forbidden: " + std::string(detail));
}

FieldError FieldError::FromCodec(Type type, std::string field, std::string value,
                                 std::string detail) {
  std::string message;
  switch (type) {
    case Type::kUnknownField:
      message = "unknown field";
      break;
    case Type::kRequired:
      message = "Required value" + (detail.empty() ? "" : ": " + detail);
      break;
    case Type::kDuplicate:
      message = "Duplicate value: " + GoQuote(value);
      break;
    case Type::kNotSupported:
      message = "Unsupported value: " + GoQuote(value) + ": " + detail;
      break;
    case Type::kTooLong:
      message = "Too long: " + detail;
      break;
    case Type::kInvalid:
      message = "Invalid value: ";
      if (!value.empty()) message += GoQuote(value) + ": ";
      message += detail;
      break;
    case Type::kForbidden:
      message = "Forbidden: " + detail;
      break;
    case Type::kNotFound:
      message = "Not found: " + GoQuote(value);
      break;
  }
  return {type, std::move(field), std::move(value), std::move(detail), std::move(message)};
}

std::string InvalidMessage(std::string_view kind, std::string_view name,
                           const std::vector<FieldError>& causes) {
  std::string out = std::string(kind) + " " + GoQuote(name) + " is invalid: ";
  // Each message once, as an aggregate error prints them.
  std::vector<std::string> messages;
  for (const FieldError& cause : causes) {
    std::string text = cause.ToString();
    if (std::find(messages.begin(), messages.end(), text) == messages.end()) messages.push_back(std::move(text));
  }
  if (messages.size() == 1) return out + messages[0];
  out += "[";
  for (size_t i = 0; i < messages.size(); ++i) {
    if (i > 0) out += ", ";
    out += messages[i];
  }
  return out + "]";
}

}  // namespace podflow::model
