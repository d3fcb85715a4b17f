#include "base/base64.h"

#include <openssl/evp.h>

#include <optional>
#include <vector>

namespace podflow {
namespace {

bool InAlphabet(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
}

Status IllegalAt(size_t offset) {
  return Status::Invalid("illegal base64 data at input byte " + std::to_string(offset));
}

// Where Go's StdEncoding.DecodeString would stop on `text`, or nullopt. It
// reads four characters at a time (line breaks already dropped): a character
// outside the alphabet is
// reported where it is; padding may only end the text, as "x=" or "=="
// closing a quantum of two or three characters; a text that ends inside a
// quantum is reported at the quantum's start.
std::optional<size_t> Check(std::string_view text) {
  for (size_t q = 0; q < text.size(); q += 4) {
    const size_t n = std::min<size_t>(4, text.size() - q);
    for (size_t j = 0; j < n; ++j) {
      const char c = text[q + j];
      if (InAlphabet(c)) continue;
      if (c != '=' || j < 2) return q + j;
      // Padding: "xx==" or "xxx=", and nothing after it.
      if (j == 2 && n < 4) return text.size();
      if (j == 2 && text[q + 3] != '=') return q + 2;
      if (q + 4 != text.size()) return q + 4;
      return std::nullopt;
    }
    if (n < 4) return q;
  }
  return std::nullopt;
}

}  // namespace

std::string Base64Encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

Result<std::string> Base64Decode(std::string_view input) {
  // Go's decoder skips line breaks, wherever they are, and counts them in
  // the offsets it reports.
  std::string text;
  std::vector<size_t> at;  // where each kept character was in `input`
  text.reserve(input.size());
  for (size_t i = 0; i < input.size(); ++i) {
    if (input[i] == '\n' || input[i] == '\r') continue;
    text += input[i];
    at.push_back(i);
  }
  if (std::optional<size_t> offset = Check(text)) {
    return IllegalAt(*offset < at.size() ? at[*offset] : input.size());
  }
  if (text.empty()) return std::string();
  std::string out(3 * (text.size() / 4) + 1, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0) return IllegalAt(0);
  // EVP_DecodeBlock counts the padding as zero bytes.
  size_t padding = 0;
  if (text.back() == '=') ++padding;
  if (text.size() >= 2 && text[text.size() - 2] == '=') ++padding;
  out.resize(static_cast<size_t>(n) - padding);
  return out;
}

}  // namespace podflow
