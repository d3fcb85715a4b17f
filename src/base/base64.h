// Base64 (RFC 4648, standard alphabet, padded) as Kubernetes writes []byte
// fields in JSON and YAML: Secret data, ConfigMap binaryData. The coding is
// OpenSSL's; the checks in front of it give Go's encoding/base64 errors, so
// a bad value is refused with the words kube-apiserver uses.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace podflow {

std::string Base64Encode(std::string_view bytes);

// The bytes `text` encodes. Invalid, "illegal base64 data at input byte N"
// (N as Go counts it, in the text as given), for a character outside the alphabet, misplaced
// padding, or a length that is not a multiple of four.
Result<std::string> Base64Decode(std::string_view text);

}  // namespace podflow
