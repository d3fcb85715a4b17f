// Name, port and label syntax, worded as k8s.io/apimachinery validation.
#include "stages/admission/names.h"

#include <cctype>
#include <regex>

namespace podflow::admission {
namespace {

constexpr std::string_view kDns1123LabelFmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
constexpr std::string_view kDns1123SubdomainFmt =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
constexpr std::string_view kDns1035LabelFmt = "[a-z]([-a-z0-9]*[a-z0-9])?";
constexpr std::string_view kQualifiedNameFmt = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
constexpr std::string_view kLabelValueFmt = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";

constexpr std::string_view kDns1123LabelMsg =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character";
constexpr std::string_view kDns1123SubdomainMsg =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character";
constexpr std::string_view kDns1035LabelMsg =
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character";
constexpr std::string_view kQualifiedNameMsg =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";
constexpr std::string_view kLabelValueMsg =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character";

bool Matches(std::string_view value, std::string_view fmt) {
  // One compiled regex per format; formats are the constants above.
  static thread_local std::vector<std::pair<std::string_view, std::regex>> cache;
  for (auto& [f, re] : cache) {
    if (f.data() == fmt.data()) return std::regex_match(value.begin(), value.end(), re);
  }
  cache.emplace_back(fmt, std::regex(std::string(fmt)));
  return std::regex_match(value.begin(), value.end(), cache.back().second);
}

// validation.RegexError: msg (e.g. 'a',  or 'b', regex used for validation is 'fmt').
std::string RegexError(std::string_view msg, std::string_view fmt,
                       std::initializer_list<std::string_view> examples) {
  std::string out(msg);
  if (examples.size() == 0)
    return out + " (regex used for validation is '" + std::string(fmt) + "')";
  out += " (e.g. ";
  bool first = true;
  for (std::string_view e : examples) {
    if (!first) out += " or ";
    first = false;
    out += "'" + std::string(e) + "', ";
  }
  return out + "regex used for validation is '" + std::string(fmt) + "')";
}

std::string MaxLenError(size_t n) {
  return "must be no more than " + std::to_string(n) + " characters";
}

}  // namespace

std::string InclusiveRangeError(int64_t lo, int64_t hi) {
  return "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", inclusive";
}

std::vector<std::string> IsDns1123Label(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > 63) errs.push_back(MaxLenError(63));
  if (!Matches(value, kDns1123LabelFmt)) {
    if (Matches(value, kDns1123SubdomainFmt)) {
      errs.push_back("must not contain dots");  // a valid subdomain: only the dots are wrong
    } else {
      errs.push_back(RegexError(kDns1123LabelMsg, kDns1123LabelFmt, {"my-name", "123-abc"}));
    }
  }
  return errs;
}

std::vector<std::string> IsDns1123Subdomain(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > 253) errs.push_back(MaxLenError(253));
  if (!Matches(value, kDns1123SubdomainFmt)) {
    errs.push_back(RegexError(kDns1123SubdomainMsg, kDns1123SubdomainFmt, {"example.com"}));
  }
  return errs;
}

std::vector<std::string> IsDns1035Label(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > 63) errs.push_back(MaxLenError(63));
  if (!Matches(value, kDns1035LabelFmt)) {
    errs.push_back(RegexError(kDns1035LabelMsg, kDns1035LabelFmt, {"my-name", "abc-123"}));
  }
  return errs;
}

std::vector<std::string> IsValidPortName(std::string_view port) {
  std::vector<std::string> errs;
  if (port.size() > 15) errs.push_back(MaxLenError(15));
  bool charset = !port.empty();
  bool letter = false;
  for (char c : port) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) charset = false;
    if (c >= 'a' && c <= 'z') letter = true;
  }
  if (!charset)
    errs.push_back("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  if (!letter) errs.push_back("must contain at least one letter (a-z)");
  if (port.find("--") != std::string_view::npos)
    errs.push_back("must not contain consecutive hyphens");
  if (!port.empty() && (port.front() == '-' || port.back() == '-')) {
    errs.push_back("must not begin or end with a hyphen");
  }
  return errs;
}

std::vector<std::string> IsQualifiedName(std::string_view value) {
  std::vector<std::string> errs;
  std::string_view name = value;
  size_t slash = value.find('/');
  if (slash != std::string_view::npos) {
    if (value.find('/', slash + 1) != std::string_view::npos) {
      return {"a qualified name " +
              RegexError(kQualifiedNameMsg, kQualifiedNameFmt, {"MyName", "my.name", "123-abc"}) +
              " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"};
    }
    std::string_view prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty()) {
      errs.push_back("prefix part must be non-empty");
    } else {
      for (const std::string& m : IsDns1123Subdomain(prefix)) errs.push_back("prefix part " + m);
    }
  }
  if (name.empty()) {
    errs.push_back("name part must be non-empty");
  } else if (name.size() > 63) {
    errs.push_back("name part " + MaxLenError(63));
  }
  if (!Matches(name, kQualifiedNameFmt)) {
    errs.push_back("name part " + RegexError(kQualifiedNameMsg, kQualifiedNameFmt,
                                             {"MyName", "my.name", "123-abc"}));
  }
  return errs;
}

std::vector<std::string> IsValidLabelValue(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > 63) errs.push_back(MaxLenError(63));
  if (!Matches(value, kLabelValueFmt)) {
    errs.push_back(RegexError(kLabelValueMsg, kLabelValueFmt, {"MyValue", "my_value", "12345"}));
  }
  return errs;
}

bool IsIpv4(std::string_view s) {
  static const std::regex kIpv4(
      R"(^((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])$)");
  return std::regex_match(s.begin(), s.end(), kIpv4);
}

std::vector<std::string> IsConfigMapKey(std::string_view key) {
  std::vector<std::string> out;
  if (key.size() > 253) out.push_back("must be no more than 253 characters");
  bool ok = !key.empty();
  for (char c : key) {
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.');
  }
  if (!ok) {
    out.push_back(
        "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or "
        "'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')");
  }
  if (key == ".") {
    out.push_back("must not be '.'");
  } else if (key == "..") {
    out.push_back("must not be '..'");
  } else if (key.starts_with("..")) {
    out.push_back("must not start with '..'");
  }
  return out;
}

std::vector<std::string> IsRelaxedEnvVarName(std::string_view value) {
  std::vector<std::string> out;
  if (value.empty()) out.push_back("environment variable name must be non-empty");
  for (char c : value) {
    if (c < ' ' || c > '~' || c == '=') {
      out.push_back("a valid environment variable name must consist only of printable ASCII characters other than '='");
      break;
    }
  }
  return out;
}

}  // namespace podflow::admission
