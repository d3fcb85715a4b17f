// Static bearer tokens: kube-apiserver's --token-auth-file and the lookup.
#include "stages/admission/admission.h"

namespace podflow::admission {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// Splits one CSV record as encoding/csv does with TrimLeadingSpace: fields
// separated by commas, a field may be double-quoted ("" is a quote inside).
Result<std::vector<std::string>> SplitRecord(std::string_view line) {
  std::vector<std::string> fields;
  size_t i = 0;
  while (true) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::string field;
    if (i < line.size() && line[i] == '"') {
      ++i;
      bool closed = false;
      while (i < line.size()) {
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          closed = true;
          ++i;
          break;
        }
        field += line[i++];
      }
      if (!closed) return Status::Invalid("unterminated quoted field");
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
      if (i < line.size() && line[i] != ',') {
        return Status::Invalid("unexpected text after a quoted field");
      }
    } else {
      size_t end = line.find(',', i);
      if (end == std::string_view::npos) end = line.size();
      std::string_view raw = Trim(line.substr(i, end - i));
      if (raw.find('"') != std::string_view::npos) {
        return Status::Invalid("bare \" in a non-quoted field");
      }
      field = std::string(raw);
      i = end;
    }
    fields.push_back(std::move(field));
    if (i >= line.size()) break;
    ++i;  // the comma
  }
  return fields;
}

std::string LineError(size_t line, std::string_view what) {
  return "token file line " + std::to_string(line) + ": " + std::string(what);
}

}  // namespace

Result<std::vector<TokenEntry>> ParseTokenFile(std::string_view text) {
  std::vector<TokenEntry> entries;
  std::unordered_map<std::string, size_t> seen;  // token -> line
  size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    std::string_view trimmed = Trim(line);
    if (trimmed.empty() || trimmed.front() == '#') continue;

    Result<std::vector<std::string>> record = SplitRecord(line);
    if (!record.ok()) return Status::Invalid(LineError(line_number, record.status().message()));
    std::vector<std::string>& f = *record;
    if (f.size() < 3) {
      return Status::Invalid(LineError(
          line_number, "must have at least 3 columns (token, user name, user uid), found " +
                           std::to_string(f.size())));
    }
    if (f[0].empty()) return Status::Invalid(LineError(line_number, "empty token"));
    if (f[1].empty()) return Status::Invalid(LineError(line_number, "empty user name"));
    if (auto it = seen.find(f[0]); it != seen.end()) {
      return Status::Invalid(LineError(
          line_number, "duplicate token (first on line " + std::to_string(it->second) + ")"));
    }
    seen.emplace(f[0], line_number);

    TokenEntry entry{f[0], {f[1], f[2], {}}};
    if (f.size() >= 4) {
      std::string_view groups = f[3];
      while (!groups.empty()) {
        size_t comma = groups.find(',');
        std::string_view g = Trim(groups.substr(0, comma));
        if (!g.empty()) entry.user.groups.emplace_back(g);
        groups.remove_prefix(comma == std::string_view::npos ? groups.size() : comma + 1);
      }
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

Result<TokenAuthenticator> TokenAuthenticator::Create(std::vector<TokenEntry> entries) {
  TokenAuthenticator out;
  for (TokenEntry& e : entries) {
    if (e.token.empty()) return Status::Invalid("a token entry has an empty token");
    if (e.user.name.empty()) return Status::Invalid("a token entry has an empty user name");
    if (!out.users_.emplace(e.token, std::move(e.user)).second) {
      return Status::Invalid("token of user \"" + out.users_[e.token].name + "\" is listed twice");
    }
  }
  return out;
}

Result<UserInfo> TokenAuthenticator::Authenticate(std::string_view bearer_token) const {
  if (bearer_token.empty()) return Status::Invalid("Unauthorized");
  auto it = users_.find(std::string(bearer_token));
  if (it == users_.end()) return Status::Invalid("Unauthorized");
  UserInfo user = it->second;
  user.groups.push_back("system:authenticated");
  return user;
}

void TokenAuthenticator::TrustPeer(std::string peer, UserInfo user) {
  user.groups.push_back("system:authenticated");
  peers_[std::move(peer)] = std::move(user);
}

Result<UserInfo> TokenAuthenticator::Authenticate(std::string_view bearer_token, std::string_view peer) const {
  if (!bearer_token.empty()) return Authenticate(bearer_token);
  auto it = peers_.find(std::string(peer));
  if (it == peers_.end()) return Status::Invalid("Unauthorized");
  return it->second;
}

}  // namespace podflow::admission
