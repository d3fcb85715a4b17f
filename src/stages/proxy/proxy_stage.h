// The proxy stage: follows Services and pods and keeps one Endpoints object
// per Service with a selector, written to the log. It renders no iptables
// rules and no DNS records yet.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "pipeline/loop_thread.h"
#include "pipeline/stage.h"

namespace podflow::proxy {

class ProxyStage {
 public:
  static constexpr std::string_view kName = "proxy";
  static Result<std::unique_ptr<ProxyStage>> Create(pipeline::StageContext& context);

  Status Start();
  void Stop();

 private:
  explicit ProxyStage(pipeline::StageContext& context) : context_(context) {}
  void Loop(const std::atomic<bool>& stopping);

  pipeline::StageContext& context_;
  pipeline::LoopThread loop_;
};
static_assert(pipeline::Stage<ProxyStage>);

}  // namespace podflow::proxy
