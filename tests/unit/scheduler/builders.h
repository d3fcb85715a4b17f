// Builders for scheduler tests: pods and nodes as the FlatBuffers bytes the
// log stores (object API + model::Pack), and as the PodInfo / NodeInfo the
// scheduler reads. MakePod().Name("a").Cpu("500m").Info(). The pod's
// building steps are the shared builder's (tests/support/pod_builder.h).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "model/objects.h"
#include "node_generated.h"
#include "pod_builder.h"
#include "pod_generated.h"
#include "scheduler/scheduler.h"

namespace podflow::scheduler::testing {

using ::podflow::testing::PutQuantity;
using ::podflow::testing::PutString;
using ::podflow::testing::Req;

// The shared pod builder with the scheduler's view of the pod added.
class PodBuilder final : public ::podflow::testing::BasicPodBuilder<PodBuilder> {
 public:
  using BasicPodBuilder::BasicPodBuilder;
  PodInfo Info() const {
    std::string bytes = Bytes();
    auto info = PodInfoFromPod(*flatbuffers::GetRoot<api::Pod>(bytes.data()));
    REQUIRE(info.ok());
    return std::move(info).value();
  }
};

inline PodBuilder MakePod() { return PodBuilder(); }

class NodeBuilder {
 public:
  NodeBuilder() {
    node_.api_version = "v1";
    node_.kind = "Node";
    node_.metadata = std::make_unique<api::ObjectMetaT>();
    node_.spec = std::make_unique<api::NodeSpecT>();
    node_.status = std::make_unique<api::NodeStatusT>();
    Name("node");
    Allocatable("pods", "110");
  }

  NodeBuilder& Name(const std::string& name) { node_.metadata->name = name; return *this; }
  NodeBuilder& Label(const std::string& k, const std::string& v) {
    PutString(node_.metadata->labels, k, v);
    return *this;
  }
  NodeBuilder& Unschedulable() { node_.spec->unschedulable = true; return *this; }
  NodeBuilder& Taint(const std::string& key, const std::string& value, api::TaintEffect effect) {
    auto t = std::make_unique<api::TaintT>();
    t->key = key;
    t->value = value;
    t->effect = effect;
    node_.spec->taints.push_back(std::move(t));
    return *this;
  }
  NodeBuilder& Allocatable(const std::string& resource, const std::string& q) {
    PutQuantity(node_.status->allocatable, resource, q);
    PutQuantity(node_.status->capacity, resource, q);
    return *this;
  }
  NodeBuilder& Annotation(const std::string& k, const std::string& v) {
    PutString(node_.metadata->annotations, k, v);
    return *this;
  }
  // An entry of status.images.
  NodeBuilder& Image(std::vector<std::string> names, int64_t size_bytes) {
    auto image = std::make_unique<api::ContainerImageT>();
    image->names = std::move(names);
    image->size_bytes = size_bytes;
    node_.status->images.push_back(std::move(image));
    return *this;
  }
  // An entry of status.conditions, e.g. Condition("MemoryPressure", True).
  NodeBuilder& Condition(const std::string& type, api::ConditionStatus status) {
    auto c = std::make_unique<api::NodeConditionT>();
    c->type = type;
    c->status = status;
    node_.status->conditions.push_back(std::move(c));
    return *this;
  }
  NodeBuilder& Cpu(const std::string& q) { return Allocatable("cpu", q); }
  NodeBuilder& Memory(const std::string& q) { return Allocatable("memory", q); }
  NodeBuilder& Pods(const std::string& q) { return Allocatable("pods", q); }

  std::string Bytes() const { return model::Pack(node_); }
  NodeInfo Info() const {
    std::string bytes = Bytes();
    auto info = NodeInfoFromNode(*flatbuffers::GetRoot<api::Node>(bytes.data()));
    REQUIRE(info.ok());
    return std::move(info).value();
  }

 private:
  api::NodeT node_;
};

inline NodeBuilder MakeNode() { return NodeBuilder(); }

// A node with `pods` already counted on it (their nodeName set to the node).
inline NodeInfo WithPods(NodeInfo node, std::vector<PodInfo> pods) {
  for (auto& p : pods) {
    p.node_name = node.name;
    node.AddPod(std::make_shared<const PodInfo>(std::move(p)));
  }
  return node;
}

inline const CycleState& NoState() {
  static const CycleState state;
  return state;
}

}  // namespace podflow::scheduler::testing
