#include "stages/proxy/config.h"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>

#include "base/yaml_reader.h"
#include "stages/proxy/dns/forwarder.h"

namespace podflow::proxy {

std::vector<std::string> ProxyConfig::OwnDnsAddresses() const {
  const std::string port = std::to_string(dns_port);
  std::vector<std::string> own = {dns_host + ":" + port};
  if (dns_host == "0.0.0.0") own.push_back("127.0.0.1:" + port);
  return own;
}

Result<ProxyConfig> ParseProxyConfig(const YAML::Node& section) {
  ProxyConfig config;
  if (yaml::Absent(section)) return config;
  if (!section.IsMap()) return Status::Invalid("proxy: must be a map");
  for (const auto& entry : section) {
    const std::string key = yaml::As<std::string>(entry.first).value_or("?");
    const std::string where = yaml::Child("proxy", key);
    if (key == "clusterDomain") {
      Result<std::string> domain = yaml::Scalar<std::string>(entry.second, where, "must be a domain such as cluster.local");
      if (!domain.ok()) return domain.status();
      std::string d = *domain;
      if (!d.empty() && d.back() == '.') d.pop_back();
      if (d.empty() || d.find("..") != std::string::npos || d.front() == '.') {
        return Status::Invalid(where + ": must be a domain such as cluster.local, not \"" + *domain + "\"");
      }
      config.cluster_domain = d;
    } else if (key == "dnsListen") {
      Result<std::string> listen = yaml::Scalar<std::string>(entry.second, where, "must be HOST:PORT or \"\"");
      if (!listen.ok()) return listen.status();
      if (listen->empty()) {
        config.dns = false;
        continue;
      }
      const size_t colon = listen->rfind(':');
      const std::string host = listen->substr(0, colon == std::string::npos ? 0 : colon);
      in_addr parsed{};
      unsigned port = 70000;
      const char* digits = colon == std::string::npos ? nullptr : listen->data() + colon + 1;
      const char* end = listen->data() + listen->size();
      auto [stop, ec] = digits ? std::from_chars(digits, end, port) : std::from_chars_result{end, std::errc::invalid_argument};
      if (colon == std::string::npos || inet_pton(AF_INET, host.c_str(), &parsed) != 1 || ec != std::errc() ||
          stop != end || port > 65535) {
        return Status::Invalid(where + ": must be an IPv4 HOST:PORT such as 127.0.0.1:10053, not \"" + *listen + "\"");
      }
      config.dns_host = host;
      config.dns_port = static_cast<uint16_t>(port);
    } else if (key == "dnsTTL") {
      Result<int64_t> ttl = yaml::Scalar<int64_t>(entry.second, where, "must be a number of seconds");
      if (!ttl.ok()) return ttl.status();
      if (*ttl < 0 || *ttl > 3600) return Status::Invalid(where + ": must be between 0 and 3600");
      config.dns_ttl = static_cast<uint32_t>(*ttl);
    } else if (key == "clusterDNS") {
      Result<std::string> address = yaml::Scalar<std::string>(entry.second, where, "must be an IPv4 address or \"\"");
      if (!address.ok()) return address.status();
      in_addr parsed{};
      if (!address->empty() && inet_pton(AF_INET, address->c_str(), &parsed) != 1) {
        return Status::Invalid(where + ": must be an IPv4 address such as 10.96.0.10, not \"" + *address + "\"");
      }
      config.cluster_dns = *address;
    } else if (key == "clusterCIDR") {
      Result<std::string> cidr = yaml::Scalar<std::string>(entry.second, where, "must be an IPv4 CIDR");
      if (!cidr.ok()) return cidr.status();
      const size_t slash = cidr->find('/');
      in_addr parsed{};
      int prefix = -1;
      const char* end = cidr->data() + cidr->size();
      auto [stop, ec] = slash == std::string::npos ? std::from_chars_result{end, std::errc::invalid_argument}
                                                   : std::from_chars(cidr->data() + slash + 1, end, prefix);
      if (slash == std::string::npos || inet_pton(AF_INET, cidr->substr(0, slash).c_str(), &parsed) != 1 ||
          ec != std::errc() || stop != end || prefix < 0 || prefix > 32) {
        return Status::Invalid(where + ": must be an IPv4 CIDR such as 10.244.0.0/16, not \"" + *cidr + "\"");
      }
      config.cluster_cidr = *cidr;
    } else if (key == "dnsForward") {
      if (!entry.second.IsSequence()) {
        return Status::Invalid(where + ": must be a list of IP, IP:PORT or resolv.conf paths ([] for none)");
      }
      config.dns_forward.clear();
      config.dns_forward_default = false;
      for (size_t i = 0; i < entry.second.size(); ++i) {
        const std::string at = yaml::Index(where, i);
        Result<std::string> to = yaml::Scalar<std::string>(entry.second[i], at, "must be IP, IP:PORT or a path");
        if (!to.ok()) return to.status();
        if (Status valid = dns::CheckUpstream(*to); !valid.ok()) return Status::Invalid(at + ": " + valid.message());
        config.dns_forward.push_back(*to);
      }
    } else {
      return Status::Invalid(where + ": unknown field");
    }
  }
  // A forward to the DNS's own address would send its queries round for ever.
  const std::vector<std::string> own = config.OwnDnsAddresses();
  for (size_t i = 0; config.dns && i < config.dns_forward.size(); ++i) {
    const std::string& to = config.dns_forward[i];
    const std::string address = to.find(':') == std::string::npos ? to + ":53" : to;
    if (std::ranges::find(own, address) != own.end()) {
      return Status::Invalid(yaml::Index("proxy.dnsForward", i) + ": " + to +
                             " is where this DNS answers (proxy.dnsListen): its queries would come back to it");
    }
  }
  return config;
}

Result<ProxyConfig> LoadProxyConfig(const YAML::Node& proxy, const YAML::Node& runtime) {
  YAML::Node merged = yaml::Absent(proxy) ? YAML::Node(YAML::NodeType::Map) : YAML::Clone(proxy);
  if (merged.IsMap() && runtime.IsMap()) {
    const YAML::Node& mine = merged;
    for (const char* key : {"clusterDomain", "clusterCIDR", "clusterDNS"}) {
      const YAML::Node& theirs = runtime[key];
      if (mine[key] || !theirs || theirs.IsNull()) continue;
      if (std::string(key) == "clusterDNS" && theirs.IsSequence()) {
        merged[key] = theirs.size() > 0 ? theirs[0] : YAML::Node("");
      } else {
        merged[key] = theirs;
      }
    }
  }
  Result<ProxyConfig> config = ParseProxyConfig(merged);
  if (config.ok() && config->cluster_cidr.empty()) config->cluster_cidr = "10.244.0.0/16";
  return config;
}

}  // namespace podflow::proxy
