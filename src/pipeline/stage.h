// A stage: one node of the pipeline. Every stage is a class that
// models the Stage concept; the registry (StageRegistry, filled by the CLI)
// builds them by kName, and the
// runner starts the stages of one process and stops them on a signal.
#pragma once

#include <atomic>
#include <concepts>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"
#include "bus/bus.h"
#include "pipeline/config.h"
#include "pipeline/stage_names.h"

namespace podflow::pipeline {

// What a stage gets to work with. Outlives the stage.
struct StageContext {
  bus::Context& bus;  // one per process: inproc channels need it shared
  const ClusterConfig& config;
  // The endpoint of a channel ("api", "watch", "submit", "apiwatch", "decisions", "reports",
  // "kubelet").
  std::string Endpoint(const std::string& channel) const { return config.Endpoint(channel); }
};

// Start() binds or connects its sockets and starts its threads, returning
// once it serves (or with the reason it cannot); Stop() joins them. Stop()
// is called once, after a successful Start(), from the thread that started it.
// kName must be one of kStageNames (checked at compile time).
template <typename S>
concept Stage = requires(S& stage) {
  { S::kName } -> std::convertible_to<std::string_view>;
  requires IsStageName(S::kName);
  { stage.Start() } -> std::same_as<Status>;
  { stage.Stop() } -> std::same_as<void>;
};

// Type-erased handle the runner holds.
class StageHandle {
 public:
  virtual ~StageHandle() = default;
  virtual std::string_view Name() const = 0;
  virtual Status Start() = 0;
  virtual void Stop() = 0;
};

template <Stage S>
class StageAdapter final : public StageHandle {
 public:
  explicit StageAdapter(std::unique_ptr<S> stage) : stage_(std::move(stage)) {}
  std::string_view Name() const override { return S::kName; }
  Status Start() override { return stage_->Start(); }
  void Stop() override { stage_->Stop(); }

 private:
  std::unique_ptr<S> stage_;
};

// Builds a stage from the context (it parses and checks its own config
// section here: a bad section fails before anything starts).
using StageFactory = std::function<Result<std::unique_ptr<StageHandle>>(StageContext&)>;

// The stages a program can run, each under its kName: the one registry
// the runner builds stages from (the CLI fills it with every stage).
class StageRegistry {
 public:
  // Registers S under S::kName with its factory. Invalid when the name is
  // registered already.
  template <Stage S>
  Status Register(std::function<Result<std::unique_ptr<S>>(StageContext&)> make) {
    return Add(std::string(S::kName),
               [make = std::move(make)](StageContext& ctx) -> Result<std::unique_ptr<StageHandle>> {
                 Result<std::unique_ptr<S>> stage = make(ctx);
                 if (!stage.ok()) return stage.status();
                 return std::unique_ptr<StageHandle>(new StageAdapter<S>(std::move(*stage)));
               });
  }
  const StageFactory* Find(const std::string& name) const;

 private:
  Status Add(std::string name, StageFactory factory);

  std::map<std::string, StageFactory> factories_;
};

// Runs the stages of `process` (a process name of the pipeline) until
// `stop` becomes true; stops them in reverse order. Returns the first error.
Status RunProcess(const ClusterConfig& config, const StageRegistry& registry,
                  const std::string& process, const std::atomic<bool>& stop);

}  // namespace podflow::pipeline
