// podflow proxy rules --node NAME: the iptables-restore document kube-proxy
// would install on the node, rendered from the Services and EndpointSlices
// the API holds now (kube-proxy's `iptables-save` view of the node, in the
// form it writes it).
#include <cstdio>
#include <map>

#include "cli/api_session.h"
#include "cli/commands.h"
#include "model/api_status.h"
#include "model/objects.h"
#include "pipeline/config.h"
#include "stages/proxy/config.h"
#include "stages/proxy/rules/from_objects.h"

namespace podflow::cli {
namespace {

struct ProxyRulesOptions : ConnectionFlags {
  std::string node;
  std::string cluster_cidr;  // "": the config's runtime.clusterCIDR
  bool masquerade_all = false;
};

// Every object of `resource` in every namespace, or kubectl's error line.
Result<std::vector<KeyValue>> ListAll(ApiSession& api, const std::string& resource) {
  ApiCall call;
  call.verb = "list";
  call.resource = resource;
  Result<ApiResponse> reply = api.ListAll(call);
  if (!reply.ok()) return reply.status();
  if (!reply->status.success()) return Status::Forbidden(model::KubectlMessage(reply->status));
  return std::move(reply->objects);
}

int RunProxyRules(const ProxyRulesOptions& options) {
  std::string cidr = options.cluster_cidr;
  if (cidr.empty()) {
    Result<pipeline::ClusterConfig> config = pipeline::LoadConfig(options.config);
    if (!config.ok()) {
      std::fprintf(stderr, "error: %s\n", config.status().message().c_str());
      return 1;
    }
    // As the proxy stage reads it: its own clusterCIDR, else the runtime's.
    Result<proxy::ProxyConfig> proxy = proxy::LoadProxyConfig(config->Section("proxy"), config->Section("runtime"));
    if (!proxy.ok()) {
      std::fprintf(stderr, "error: %s\n", proxy.status().message().c_str());
      return 1;
    }
    cidr = proxy->cluster_cidr;
  }
  Result<std::unique_ptr<ApiSession>> api = Connect(options);
  if (!api.ok()) {
    std::fprintf(stderr, "error: %s\n", api.status().message().c_str());
    return 1;
  }
  ApiCall node;
  node.verb = "get";
  node.resource = "nodes";
  node.name = options.node;
  Result<ApiResponse> found = (*api)->Call(node);
  if (!found.ok() || !found->status.success()) {
    std::fprintf(stderr, "%s\n",
                 found.ok() ? model::KubectlMessage(found->status).c_str()
                            : ("error: " + found.status().message()).c_str());
    return 1;
  }
  Result<std::vector<KeyValue>> services = ListAll(**api, "services");
  Result<std::vector<KeyValue>> slices = services.ok() ? ListAll(**api, "endpointslices.discovery.k8s.io")
                                                       : Result<std::vector<KeyValue>>(services.status());
  if (!slices.ok()) {
    const std::string& message = slices.status().message();
    std::fprintf(stderr, "%s%s\n", message.starts_with("Error from server") ? "" : "error: ", message.c_str());
    return 1;
  }
  // Slices by "ns/service", as kube-proxy ties them by their label.
  std::map<std::string, std::vector<const api::EndpointSlice*>> by_service;
  for (const KeyValue& kv : *slices) {
    if (!model::VerifyObject(model::Kind("EndpointSlice"), kv.value).ok()) continue;
    const api::EndpointSlice* slice = flatbuffers::GetRoot<api::EndpointSlice>(kv.value.data());
    const auto* labels = slice->metadata() ? slice->metadata()->labels() : nullptr;
    const api::StringEntry* service = labels ? labels->LookupByKey("kubernetes.io/service-name") : nullptr;
    if (service == nullptr || service->value() == nullptr || slice->metadata()->namespace_() == nullptr) continue;
    by_service[slice->metadata()->namespace_()->str() + "/" + service->value()->str()].push_back(slice);
  }
  proxy::rules::Ruleset rules({"", cidr, options.masquerade_all});
  for (const KeyValue& kv : *services) {
    if (!model::VerifyObject(model::Kind("Service"), kv.value).ok()) continue;
    const api::Service* service = flatbuffers::GetRoot<api::Service>(kv.value.data());
    if (service->metadata() == nullptr || service->metadata()->name() == nullptr) continue;
    const std::string ns = service->metadata()->namespace_() ? service->metadata()->namespace_()->str() : "default";
    for (proxy::rules::ServicePort& port :
         proxy::rules::ServicePortsOf(*service, by_service[ns + "/" + service->metadata()->name()->str()])) {
      rules.Set(std::move(port));
    }
  }
  const std::string document = rules.Render(options.node);
  std::fwrite(document.data(), 1, document.size(), stdout);
  return 0;
}

}  // namespace

void AddProxyCommand(CLI::App& app, CommandAction& action) {
  auto options = std::make_shared<ProxyRulesOptions>();
  CLI::App* proxy = app.add_subcommand("proxy", "What the proxy stage (kube-proxy) does on a node");
  proxy->require_subcommand(1);
  CLI::App* cmd = proxy->add_subcommand(
      "rules", "Print the iptables-restore document kube-proxy's iptables mode would install on a node");
  cmd->add_option("--node", options->node, "The node whose rules to print")->required();
  cmd->add_option("--cluster-cidr", options->cluster_cidr,
                  "kube-proxy's --cluster-cidr: traffic from outside it is masqueraded (default: the config's "
                  "proxy.clusterCIDR, else runtime.clusterCIDR)");
  cmd->add_flag("--masquerade-all", options->masquerade_all, "Masquerade all traffic to cluster IPs");
  AddConnectionFlags(cmd, options.get());
  cmd->callback([&action, options] { action = [options] { return RunProxyRules(*options); }; });
}

}  // namespace podflow::cli
