#include "stages/runtime/pod_dns.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace podflow::runtime {
namespace {

constexpr size_t kMaxNameservers = 3;
constexpr size_t kMaxSearchPaths = 32;
constexpr size_t kMaxSearchChars = 2048;
constexpr size_t kMaxSearchPathLength = 253;  // a DNS-1123 subdomain

std::vector<std::string> Fields(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string f; in >> f;) out.push_back(f);
  return out;
}

std::string Join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

// Keeps the first of each.
std::vector<std::string> OmitDuplicates(const std::vector<std::string>& items) {
  std::set<std::string> seen;
  std::vector<std::string> out;
  for (const std::string& s : items) {
    if (seen.insert(s).second) out.push_back(s);
  }
  return out;
}

// Options by name ("ndots:5": ndots, "5"), in the order they first came;
// a later one of the same name replaces the value in place.
using Options = std::vector<std::pair<std::string, std::string>>;
void SetOption(Options& options, const std::string& name, const std::string& value) {
  auto it = std::find_if(options.begin(), options.end(), [&](const auto& o) { return o.first == name; });
  if (it != options.end()) {
    it->second = value;
  } else {
    options.emplace_back(name, value);
  }
}
void AddOption(Options& options, const std::string& option) {
  const size_t colon = option.find(':');
  SetOption(options, option.substr(0, colon), colon == std::string::npos ? "" : option.substr(colon + 1));
}

struct DnsConfig {
  std::vector<std::string> servers, searches;
  Options options;
};

// The node's resolv.conf as kubelet reads it: every nameserver, the last
// search line (without final dots), the options.
DnsConfig ParseResolvConf(std::string_view text) {
  DnsConfig out;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && (line[0] == '#' || line[0] == ';')) continue;
    const std::vector<std::string> f = Fields(line);
    if (f.empty()) continue;
    if (f[0] == "nameserver" && f.size() >= 2) out.servers.push_back(f[1]);
    if (f[0] == "search") {
      out.searches.clear();
      for (size_t i = 1; i < f.size(); ++i) {
        if (f[i] == ".") continue;
        std::string s = f[i];
        if (s.back() == '.') s.pop_back();
        out.searches.push_back(std::move(s));
      }
    }
    if (f[0] == "options") {
      for (size_t i = 1; i < f.size(); ++i) AddOption(out.options, f[i]);
    }
  }
  return out;
}

void HostAliases(const api::PodT& pod, std::string& out) {
  if (!pod.spec || pod.spec->host_aliases.empty()) return;
  out += "\n# Entries added by HostAliases.\n";
  for (const auto& alias : pod.spec->host_aliases) {
    if (!alias) continue;
    out += alias->ip + "\t" + Join(alias->hostnames, "\t") + "\n";
  }
}

}  // namespace

std::string PodHostname(const api::PodT& pod) {
  std::string name = pod.spec && !pod.spec->hostname.empty() ? pod.spec->hostname
                     : pod.metadata                          ? pod.metadata->name
                                                             : "";
  if (name.size() > 63) {
    name.resize(63);
    while (!name.empty() && (name.back() == '-' || name.back() == '.')) name.pop_back();
  }
  return name;
}

std::string HostsFile(const api::PodT& pod, bool on_host_network, const std::vector<std::string>& pod_ips,
                      std::string_view node_hosts, std::string_view cluster_domain) {
  std::string out;
  if (on_host_network) {
    out = "# Kubernetes-managed hosts file (host network).\n";
    out += node_hosts;
  } else {
    out =
        "# Kubernetes-managed hosts file.\n"
        "127.0.0.1\tlocalhost\n"
        "::1\tlocalhost ip6-localhost ip6-loopback\n"
        "fe00::0\tip6-localnet\n"
        "fe00::0\tip6-mcastprefix\n"
        "fe00::1\tip6-allnodes\n"
        "fe00::2\tip6-allrouters\n";
    const std::string hostname = PodHostname(pod);
    std::string domain;
    if (pod.spec && !pod.spec->subdomain.empty()) {
      const std::string ns = pod.metadata && !pod.metadata->namespace_.empty() ? pod.metadata->namespace_ : "default";
      domain = pod.spec->subdomain + "." + ns + ".svc." + std::string(cluster_domain);
    }
    for (const std::string& ip : pod_ips) {
      out += domain.empty() ? ip + "\t" + hostname + "\n" : ip + "\t" + hostname + "." + domain + "\t" + hostname + "\n";
    }
  }
  HostAliases(pod, out);
  return out;
}

ResolvConf PodResolvConf(const api::PodT& pod, bool on_host_network, const DnsSettings& settings) {
  ResolvConf result;
  const api::DNSPolicy policy = pod.spec ? pod.spec->dns_policy : api::DNSPolicy::ClusterFirst;
  enum class Kind { kCluster, kHost, kNone } kind = Kind::kHost;
  switch (policy) {
    case api::DNSPolicy::None: kind = Kind::kNone; break;
    case api::DNSPolicy::ClusterFirstWithHostNet: kind = Kind::kCluster; break;
    case api::DNSPolicy::Default: kind = Kind::kHost; break;
    default: kind = on_host_network ? Kind::kHost : Kind::kCluster; break;  // ClusterFirst
  }
  if (kind == Kind::kCluster && settings.cluster_dns.empty()) {
    result.warnings.emplace_back("MissingClusterDNS",
                                 "kubelet does not have ClusterDNS IP configured and cannot create Pod using "
                                 "\"ClusterFirst\" policy. Falling back to \"Default\" policy.");
    kind = Kind::kHost;
  }
  DnsConfig config;
  if (kind != Kind::kNone) config = ParseResolvConf(settings.node_resolv_conf);
  if (kind == Kind::kCluster) {
    config.servers = settings.cluster_dns;
    config.options = {{"ndots", "5"}};
    if (!settings.cluster_domain.empty()) {
      const std::string ns = pod.metadata && !pod.metadata->namespace_.empty() ? pod.metadata->namespace_ : "default";
      std::vector<std::string> searches = {ns + ".svc." + settings.cluster_domain, "svc." + settings.cluster_domain,
                                           settings.cluster_domain};
      searches.insert(searches.end(), config.searches.begin(), config.searches.end());
      config.searches = OmitDuplicates(searches);
    }
  }
  if (pod.spec && pod.spec->dns_config) {
    const api::PodDNSConfigT& extra = *pod.spec->dns_config;
    config.servers.insert(config.servers.end(), extra.nameservers.begin(), extra.nameservers.end());
    config.servers = OmitDuplicates(config.servers);
    config.searches.insert(config.searches.end(), extra.searches.begin(), extra.searches.end());
    config.searches = OmitDuplicates(config.searches);
    for (const auto& option : extra.options) {
      if (option) SetOption(config.options, option->name, option->value);
    }
  }
  if (config.servers.size() > kMaxNameservers) {
    config.servers.resize(kMaxNameservers);
    result.warnings.emplace_back("DNSConfigForming",
                                 "Nameserver limits were exceeded, some nameservers have been omitted, the applied "
                                 "nameserver line is: " + Join(config.servers, " "));
  }
  bool cut = false;
  if (config.searches.size() > kMaxSearchPaths) {
    config.searches.resize(kMaxSearchPaths);
    cut = true;
  }
  const size_t before = config.searches.size();
  std::erase_if(config.searches, [](const std::string& s) { return s.size() > kMaxSearchPathLength; });
  cut = cut || config.searches.size() != before;
  while (Join(config.searches, " ").size() > kMaxSearchChars) {
    config.searches.pop_back();
    cut = true;
  }
  if (cut) {
    result.warnings.emplace_back("DNSConfigForming",
                                 "Search Line limits were exceeded, some search paths have been omitted, the applied "
                                 "search line is: " + Join(config.searches, " "));
  }
  if (!config.searches.empty()) result.text += "search " + Join(config.searches, " ") + "\n";
  for (const std::string& server : config.servers) result.text += "nameserver " + server + "\n";
  if (!config.options.empty()) {
    std::vector<std::string> options;
    for (const auto& [name, value] : config.options) options.push_back(value.empty() ? name : name + ":" + value);
    result.text += "options " + Join(options, " ") + "\n";
  }
  return result;
}

}  // namespace podflow::runtime
