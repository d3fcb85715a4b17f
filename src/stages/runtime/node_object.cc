#include "stages/runtime/node_object.h"

#include <algorithm>
#include <memory>

#include "base/hex_id.h"
#include "model/conditions.h"
#include "model/objects.h"

namespace podflow::runtime {
namespace {

template <typename Entry, typename Map>
std::vector<std::unique_ptr<Entry>> Entries(const Map& map) {  // std::map: already sorted
  std::vector<std::unique_ptr<Entry>> out;
  for (const auto& [key, value] : map) {
    auto e = std::make_unique<Entry>();
    e->key = key;
    e->value = value;
    out.push_back(std::move(e));
  }
  return out;
}

api::TaintEffect Effect(const std::string& effect) {
  if (effect == "NoSchedule") return api::TaintEffect::NoSchedule;
  if (effect == "PreferNoSchedule") return api::TaintEffect::PreferNoSchedule;
  if (effect == "NoExecute") return api::TaintEffect::NoExecute;
  return api::TaintEffect::Unset;
}

std::unique_ptr<api::NodeConditionT> Condition(const char* type, api::ConditionStatus status,
                                               const char* reason, const char* message,
                                               const std::string& time) {
  auto c = std::make_unique<api::NodeConditionT>();
  c->type = type;
  c->status = status;
  c->reason = reason;
  c->message = message;
  c->last_heartbeat_time = time;
  c->last_transition_time = time;
  return c;
}

std::unique_ptr<api::NodeAddressT> Address(const char* type, std::string address) {
  auto a = std::make_unique<api::NodeAddressT>();
  a->type = type;
  a->address = std::move(address);
  return a;
}

// The conditions a healthy kubelet posts, as of `time`.
std::vector<std::unique_ptr<api::NodeConditionT>> KubeletConditions(const std::string& time) {
  std::vector<std::unique_ptr<api::NodeConditionT>> out;
  using CS = api::ConditionStatus;
  out.push_back(Condition("MemoryPressure", CS::False, "KubeletHasSufficientMemory",
                          "kubelet has sufficient memory available", time));
  out.push_back(
      Condition("DiskPressure", CS::False, "KubeletHasNoDiskPressure", "kubelet has no disk pressure", time));
  out.push_back(Condition("PIDPressure", CS::False, "KubeletHasSufficientPID",
                          "kubelet has sufficient PID available", time));
  out.push_back(Condition("Ready", CS::True, "KubeletReady", "kubelet is posting ready status", time));
  return out;
}

}  // namespace

std::string DeterministicUid(std::string_view seed) {
  const std::string h = DeterministicHex(seed, 32);
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
         "-" + h.substr(20, 12);
}

api::NodeT BuildNode(const SimNode& node, const ImageCatalog& catalog, SimTime now) {
  const std::string time = FormatRfc3339(now);
  api::NodeT n;
  n.api_version = "v1";
  n.kind = "Node";

  n.metadata = std::make_unique<api::ObjectMetaT>();
  n.metadata->name = node.name;
  n.metadata->uid = DeterministicUid("node/" + node.name);
  n.metadata->creation_timestamp = time;
  std::map<std::string, std::string> labels = {
      {"beta.kubernetes.io/arch", "amd64"}, {"beta.kubernetes.io/os", "linux"},
      {"kubernetes.io/arch", "amd64"},      {"kubernetes.io/hostname", node.name},
      {"kubernetes.io/os", "linux"},
  };
  for (const auto& [k, v] : node.labels) labels[k] = v;  // configured labels win
  n.metadata->labels = Entries<api::StringEntryT>(labels);
  n.metadata->annotations = Entries<api::StringEntryT>(std::map<std::string, std::string>{
      {"node.alpha.kubernetes.io/ttl", "0"},
      {"volumes.kubernetes.io/controller-managed-attach-detach", "true"}});

  n.spec = std::make_unique<api::NodeSpecT>();
  n.spec->pod_cidr = node.pod_cidr.ToString();
  n.spec->pod_cidrs = {n.spec->pod_cidr};
  for (const TaintDef& t : node.taints) {
    auto taint = std::make_unique<api::TaintT>();
    taint->key = t.key;
    taint->value = t.value;
    taint->effect = Effect(t.effect);
    n.spec->taints.push_back(std::move(taint));
  }

  auto& s = n.status = std::make_unique<api::NodeStatusT>();
  s->capacity = Entries<api::QuantityEntryT>(node.capacity);
  s->allocatable = Entries<api::QuantityEntryT>(node.capacity);
  s->conditions = KubeletConditions(time);
  s->addresses.push_back(Address("InternalIP", FormatIpv4(node.internal_ip)));
  s->addresses.push_back(Address("Hostname", node.name));
  s->daemon_endpoints = std::make_unique<api::NodeDaemonEndpointsT>();
  s->daemon_endpoints->kubelet_endpoint = std::make_unique<api::DaemonEndpointT>();
  s->daemon_endpoints->kubelet_endpoint->port = kKubeletPort;

  auto& info = s->node_info = std::make_unique<api::NodeSystemInfoT>();
  info->machine_id = DeterministicHex("machine/" + node.name, 32);
  info->system_uuid = DeterministicUid("system/" + node.name);
  info->boot_id = DeterministicUid("boot/" + node.name);
  info->kernel_version = "6.1.0-podflow";
  const bool process = node.type == RuntimeType::kProcess;
  info->os_image = process ? "podflow process node" : "podflow simulated node";
  info->container_runtime_version = process ? kProcessRuntimeVersion : kContainerRuntimeVersion;
  info->kubelet_version = kKubeletVersion;
  info->operating_system = "linux";
  info->architecture = "amd64";

  std::vector<CachedImage> images;
  for (const std::string& ref : node.images) {
    std::optional<ResolvedImage> image = catalog.Resolve(ref);
    if (!image) continue;  // ResolveNodes rejected these already
    images.push_back(CachedImage{image->canonical, image->image_id, image->size_bytes});
  }
  s->images = NodeStatusImages(std::move(images));
  return n;
}

std::vector<std::unique_ptr<api::ContainerImageT>> NodeStatusImages(std::vector<CachedImage> images) {
  // One image (one digest) is listed once, by its tag where it has one.
  const auto pulled_by_tag = [](const CachedImage& c) { return c.canonical != c.image_id; };
  std::ranges::sort(images, [&](const CachedImage& a, const CachedImage& b) {
    if (a.image_id != b.image_id) return a.image_id < b.image_id;
    if (pulled_by_tag(a) != pulled_by_tag(b)) return pulled_by_tag(a);
    return a.canonical < b.canonical;
  });
  images.erase(std::unique(images.begin(), images.end(),
                           [](const CachedImage& a, const CachedImage& b) { return a.image_id == b.image_id; }),
               images.end());
  std::ranges::sort(images, [](const CachedImage& a, const CachedImage& b) {
    return a.size_bytes != b.size_bytes ? a.size_bytes > b.size_bytes : a.canonical < b.canonical;
  });
  if (images.size() > kNodeStatusMaxImages) images.resize(kNodeStatusMaxImages);
  std::vector<std::unique_ptr<api::ContainerImageT>> out;
  for (CachedImage& image : images) {
    auto ci = std::make_unique<api::ContainerImageT>();
    ci->names = {image.image_id};
    if (pulled_by_tag(image)) ci->names.push_back(std::move(image.canonical));
    ci->size_bytes = image.size_bytes;
    out.push_back(std::move(ci));
  }
  return out;
}

std::string InternalIpOf(const api::Node& node) {
  if (node.status() == nullptr || node.status()->addresses() == nullptr) return "";
  for (const api::NodeAddress* a : *node.status()->addresses()) {
    if (a->type() && a->type()->string_view() == "InternalIP" && a->address()) return a->address()->str();
  }
  return "";
}

std::optional<api::NodeT> NodeStatusUpdate(const api::Node& stored, const std::vector<CachedImage>& present,
                                           Ipv4 internal_ip) {
  std::vector<std::unique_ptr<api::ContainerImageT>> images = NodeStatusImages(present);
  const auto* have = stored.status() ? stored.status()->images() : nullptr;
  const auto same = [&](size_t i) {
    const api::ContainerImage* h = have->Get(i);
    if (h->size_bytes() != images[i]->size_bytes || h->names() == nullptr ||
        h->names()->size() != images[i]->names.size()) {
      return false;
    }
    for (size_t j = 0; j < images[i]->names.size(); ++j) {
      if (h->names()->Get(j)->string_view() != images[i]->names[j]) return false;
    }
    return true;
  };
  bool unchanged = (have == nullptr ? images.empty() : have->size() == images.size());
  for (size_t i = 0; unchanged && i < images.size(); ++i) unchanged = same(i);
  // The address the node is at now (a restart may have put it elsewhere).
  const std::string address = FormatIpv4(internal_ip);
  if (unchanged && InternalIpOf(stored) == address) return std::nullopt;
  api::NodeT node;
  stored.UnPackTo(&node);
  if (!node.status) node.status = std::make_unique<api::NodeStatusT>();
  node.status->images = std::move(images);
  auto& listed = node.status->addresses;
  auto internal = std::ranges::find_if(listed, [](const auto& a) { return a->type == "InternalIP"; });
  if (internal == listed.end()) {
    listed.insert(listed.begin(), Address("InternalIP", address));
  } else {
    (*internal)->address = address;
  }
  return node;
}

std::string BuildNodeBytes(const SimNode& node, const ImageCatalog& catalog, SimTime now) {
  return model::Pack(BuildNode(node, catalog, now));
}


std::optional<api::NodeT> RepostedNodeStatus(const api::Node& stored, SimTime now) {
  if (model::ConditionIsTrue(stored, "Ready")) return std::nullopt;
  std::unique_ptr<api::NodeT> node(stored.UnPack());
  if (!node->status) node->status = std::make_unique<api::NodeStatusT>();
  auto& have = node->status->conditions;
  const std::string time = FormatRfc3339(now);
  for (auto& posted : KubeletConditions(time)) {
    auto it = std::ranges::find_if(have, [&](const auto& c) { return c->type == posted->type; });
    if (it == have.end()) {
      have.push_back(std::move(posted));
      continue;
    }
    // A status it already had keeps the time it changed to it.
    if ((*it)->status == posted->status && !(*it)->last_transition_time.empty()) {
      posted->last_transition_time = (*it)->last_transition_time;
    }
    *it = std::move(posted);
  }
  return std::move(*node);
}

}  // namespace podflow::runtime
