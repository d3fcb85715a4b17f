// Field errors: why an object was rejected, one cause per field, as
// k8s.io/apimachinery's field.Error words them and a metav1.StatusCause
// carries them. The codec (decode.cc) and admission's validation both
// report with this one type.
//
// Thread safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace podflow::model {

// Go's %q for the plain strings that appear in manifests: quotes around,
// '"' and '\' escaped.
std::string GoQuote(std::string_view s);

struct FieldError {
  enum class Type {
    kUnknownField,  // the codec's strict decoding; admission answers BadRequest
    kInvalid,
    kRequired,
    kNotSupported,
    kDuplicate,
    kTooLong,
    kForbidden,
    kNotFound,
  };
  Type type = Type::kInvalid;
  std::string field;    // "spec.containers[0].image"
  std::string value;    // the offending value as written, where there is one
  std::string detail;   // what is wrong with it
  std::string message;  // the body after "<field>: ": "Required value", "Invalid value: \"x\": ..."

  // "FieldValueRequired", "FieldValueInvalid", ... (metav1.CauseType); an
  // unknown field travels as FieldValueInvalid.
  std::string_view Reason() const;
  // "spec.containers[0].image: Required value".
  std::string ToString() const;
  // The type a metav1.StatusCause reason names; kInvalid when unknown.
  static Type TypeOfReason(std::string_view reason);

  // Admission's wording (values quoted as Go's %q):
  // `Required value` or `Required value: <detail>`.
  static FieldError Required(std::string field, std::string_view detail = {});
  // `Invalid value: "<value>": <detail>` (a string value).
  static FieldError Invalid(std::string field, std::string_view value, std::string_view detail);
  // `Invalid value: 0: <detail>` (a number, unquoted).
  static FieldError InvalidInt(std::string field, int64_t value, std::string_view detail);
  // `Invalid value: <rendered>: <detail>`, the value already printed as Go
  // prints it (e.g. `[]string{"1.1.1.1"}`).
  static FieldError InvalidRendered(std::string field, std::string_view rendered,
                                    std::string_view detail);
  // `Duplicate value: "<value>"`.
  static FieldError Duplicate(std::string field, std::string_view value);
  static FieldError DuplicateInt(std::string field, int64_t value);  // `Duplicate value: 30080`
  // `Unsupported value: "<value>": supported values: "a", "b"`.
  static FieldError NotSupported(std::string field, std::string_view value,
                                 const std::vector<std::string>& supported);
  // `Too long: may not be more than <max> bytes`.
  static FieldError TooLong(std::string field, int64_t max);
  // `Forbidden: <detail>`.
  static FieldError Forbidden(std::string field, std::string_view detail);
  // `Not found: "<value>"`.
  static FieldError NotFound(std::string field, std::string_view value);

  // The codec's wording of what it found, from the value as written and
  // the detail: "unknown field", `Invalid value: "<value>": <detail>` (the
  // value left out when empty, not escaped), `Unsupported value:
  // "<value>": <detail>`, `Too long: <detail>`, and as Required/Duplicate.
  static FieldError FromCodec(Type type, std::string field, std::string value, std::string detail);
};

// Kubernetes' wording for an invalid object:
// `Pod "nginx" is invalid: spec.containers[0].image: Required value`
// (several causes joined as `[a, b]`).
std::string InvalidMessage(std::string_view kind, std::string_view name,
                           const std::vector<FieldError>& causes);

}  // namespace podflow::model
