// The proxy stage: follows Services, pods and nodes and keeps, per Service
// with a selector, its Endpoints object and its EndpointSlices in the log,
// as Kubernetes' endpoints and EndpointSlice controllers do; and answers
// the cluster's DNS from them (`proxy.dnsListen`), as CoreDNS does.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "pipeline/loop_thread.h"
#include "pipeline/stage.h"
#include "stages/proxy/config.h"
#include "stages/proxy/dns/cluster_records.h"
#include "stages/proxy/dns/dns_server.h"

namespace podflow::proxy {

class ProxyStage {
 public:
  static constexpr std::string_view kName = "proxy";
  static Result<std::unique_ptr<ProxyStage>> Create(pipeline::StageContext& context);

  Status Start();
  void Stop();

 private:
  ProxyStage(pipeline::StageContext& context, ProxyConfig config)
      : context_(context), config_(std::move(config)), records_(config_.cluster_domain, config_.dns_ttl) {}
  void Loop(const std::atomic<bool>& stopping);
  // The DNS servers' view of the records (under records_mu_).
  dns::Lookup RecordsLookup();

  pipeline::StageContext& context_;
  const ProxyConfig config_;
  std::mutex records_mu_;
  dns::ClusterRecords records_;  // GUARDED_BY(records_mu_): the loop writes, the DNS server reads
  std::unique_ptr<dns::Forwarder> forwarder_;  // names outside the cluster's zones (none: REFUSED)
  std::unique_ptr<dns::DnsServer> dns_server_;  // before the forwarder it uses is gone
  pipeline::LoopThread loop_;
};
static_assert(pipeline::Stage<ProxyStage>);

}  // namespace podflow::proxy
