#include "stages/proxy/proxy_stage.h"

#include "base/logging.h"
#include "model/objects.h"
#include "client/client.h"
#include "stages/proxy/endpoints.h"

namespace podflow::proxy {
namespace {

// "/registry/pods/<ns>/<name>" -> "<ns>".
std::string NamespaceOf(const std::string& key) {
  size_t start = key.find('/', std::string("/registry/").size());
  if (start == std::string::npos) return "";
  size_t end = key.find('/', start + 1);
  return key.substr(start + 1, end == std::string::npos ? std::string::npos : end - start - 1);
}

}  // namespace

Result<std::unique_ptr<ProxyStage>> ProxyStage::Create(pipeline::StageContext& context) {
  return std::unique_ptr<ProxyStage>(new ProxyStage(context));
}

Status ProxyStage::Start() {
  loop_.Start([this](const std::atomic<bool>& stopping) { Loop(stopping); });
  return Status::Ok();
}

void ProxyStage::Stop() { loop_.Stop(); }

void ProxyStage::Loop(const std::atomic<bool>& stopping) {
  auto log = Logger("stage.proxy");
  const std::string pods_prefix = model::KindPrefix(model::Kind("Pod"));
  const std::string services_prefix = model::KindPrefix(model::Kind("Service"));
  client::Informer pod_informer(context_.bus, context_.Endpoint("api"), context_.Endpoint("watch"), pods_prefix);
  client::Informer service_informer(context_.bus, context_.Endpoint("api"), context_.Endpoint("watch"),
                                         services_prefix);
  client::ApiClient client(context_.bus, context_.Endpoint("api"), "proxy");

  // Stored bytes, verified once on arrival.
  std::map<std::string, std::string> pods, services;
  std::map<std::string, size_t> services_per_ns;
  std::map<std::string, std::string> written;         // endpoints key -> bytes we wrote
  std::set<std::string> dirty;                         // namespaces to recompute
  std::vector<std::string> gone;                       // endpoints of deleted services
  client::Informer::Handlers pod_handlers{
      [&](const KeyValue& kv) {
        if (!model::VerifyObject(model::Kind("Pod"), kv.value).ok()) {
          log->warn("{}: not a valid Pod; ignored", kv.key);
          return;
        }
        pods[kv.key] = kv.value;
        // Only namespaces with Services have Endpoints to keep.
        const std::string ns = NamespaceOf(kv.key);
        if (services_per_ns.contains(ns)) dirty.insert(ns);
      },
      [&](const std::string& key) {
        if (!pods.erase(key)) return;
        const std::string ns = NamespaceOf(key);
        if (services_per_ns.contains(ns)) dirty.insert(ns);
      }};
  client::Informer::Handlers service_handlers{
      [&](const KeyValue& kv) {
        if (!model::VerifyObject(model::Kind("Service"), kv.value).ok()) {
          log->warn("{}: not a valid Service; ignored", kv.key);
          return;
        }
        const std::string ns = NamespaceOf(kv.key);
        if (services.insert_or_assign(kv.key, kv.value).second) ++services_per_ns[ns];
        dirty.insert(ns);
      },
      [&](const std::string& key) {
        if (!services.erase(key)) return;
        const std::string ns = NamespaceOf(key);
        if (--services_per_ns[ns] == 0) services_per_ns.erase(ns);
        gone.push_back(model::ObjectKey(model::Kind("Endpoints"), ns, key.substr(key.rfind('/') + 1)));
      }};

  while (!stopping) {
    Status polled = service_informer.Poll(std::chrono::milliseconds(0), service_handlers);
    if (polled.ok()) polled = pod_informer.Poll(std::chrono::milliseconds(100), pod_handlers);
    if (!polled.ok()) {
      log->warn("following the log: {}", polled.ToString());
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    for (const std::string& ns : dirty) {
      std::vector<const api::Pod*> candidates;
      const std::string ns_prefix = pods_prefix + ns + "/";
      for (auto it = pods.lower_bound(ns_prefix); it != pods.end() && it->first.rfind(ns_prefix, 0) == 0; ++it) {
        candidates.push_back(flatbuffers::GetRoot<api::Pod>(it->second.data()));
      }
      const std::string svc_prefix = services_prefix + ns + "/";
      for (auto it = services.lower_bound(svc_prefix);
           it != services.end() && it->first.rfind(svc_prefix, 0) == 0; ++it) {
        const api::Service* service = flatbuffers::GetRoot<api::Service>(it->second.data());
        if (!service->spec() || !service->spec()->selector() || !service->metadata()) continue;
        std::string bytes = model::Pack(ComputeEndpoints(*service, candidates));
        std::string key = model::ObjectKey(model::Kind("Endpoints"), ns, service->metadata()->name()->str());
        auto known = written.find(key);
        if (known != written.end() && known->second == bytes) continue;
        Result<client::WriteResult> result = client.Write({PutOp{key, bytes}});
        if (result.ok() && result->succeeded) {
          written[key] = bytes;
        } else {
          log->warn("writing {}: {}", key, result.ok() ? "not applied" : result.status().ToString());
        }
      }
    }
    dirty.clear();
    for (const std::string& key : gone) {
      Result<client::WriteResult> result = client.Write({DeleteOp{key}});
      if (!result.ok()) log->warn("deleting {}: {}", key, result.status().ToString());
      written.erase(key);
    }
    gone.clear();
  }
}

}  // namespace podflow::proxy
