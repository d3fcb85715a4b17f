#include "stages/runtime/pod_config.h"

#include <algorithm>
#include <climits>
#include <cmath>

#include "base/base64.h"
#include "model/field_error.h"
#include "model/objects.h"
#include "model/quantity.h"
#include "stages/runtime/container_plan.h"

namespace podflow::runtime {
namespace {

constexpr size_t kMaxEnvBytes = 1024 * 1024;  // a container's expanded environment

std::map<std::string, std::string> DecodedEntries(
    const flatbuffers::Vector<flatbuffers::Offset<api::StringEntry>>* entries) {
  std::map<std::string, std::string> out;
  if (entries == nullptr) return out;
  for (const api::StringEntry* e : *entries) {
    if (e->key() == nullptr) continue;
    Result<std::string> bytes = Base64Decode(e->value() ? e->value()->string_view() : "");
    if (bytes.ok()) out[e->key()->str()] = std::move(*bytes);
  }
  return out;
}

const char* KindWord(SourceKind kind) { return kind == SourceKind::kSecret ? "secret" : "configmap"; }

// The apiserver's NotFound as kubelet's managers return it.
std::string NotFound(SourceKind kind, std::string_view name) {
  return std::string(KindWord(kind)) + " \"" + std::string(name) + "\" not found";
}

// k="v" lines in key order, as kubelet's fieldpath.FormatMap writes them.
std::string FormatMap(const std::vector<std::unique_ptr<api::StringEntryT>>& entries) {
  std::map<std::string, std::string> sorted;
  for (const auto& e : entries) {
    if (e) sorted[e->key] = e->value;
  }
  std::string out;
  for (const auto& [k, v] : sorted) {
    if (!out.empty()) out += '\n';
    out += k + "=" + model::GoQuote(v);
  }
  return out;
}

std::string EntryValue(const std::vector<std::unique_ptr<api::StringEntryT>>& entries,
                       std::string_view key) {
  for (const auto& e : entries) {
    if (e && e->key == key) return e->value;
  }
  return "";
}

const api::ContainerT* FindContainer(const api::PodT& pod, std::string_view name) {
  if (pod.spec == nullptr) return nullptr;
  for (const auto* list : {&pod.spec->containers, &pod.spec->init_containers}) {
    for (const auto& c : *list) {
      if (c && c->name == name) return c.get();
    }
  }
  return nullptr;
}

// The quantity of `resource` in `entries`, or nullopt.
std::optional<model::Quantity> Find(const std::vector<std::unique_ptr<api::QuantityEntryT>>& entries,
                                    std::string_view resource) {
  for (const auto& e : entries) {
    if (e && e->key == resource) {
      Result<model::Quantity> q = model::Quantity::Parse(e->value);
      if (q.ok()) return *q;
    }
  }
  return std::nullopt;
}

// Looks up a ConfigMap or Secret once per resolution, as kubelet caches
// them for one container's environment.
class SourceCache {
 public:
  SourceCache(const ConfigSources& sources, std::string namespace_)
      : sources_(sources), namespace_(std::move(namespace_)) {}
  const ConfigData* Get(SourceKind kind, const std::string& name) {
    auto& seen = kind == SourceKind::kSecret ? secrets_ : maps_;
    auto [it, fresh] = seen.try_emplace(name, nullptr);
    if (fresh) it->second = sources_.Find(kind, namespace_, name);
    return it->second;
  }

 private:
  const ConfigSources& sources_;
  const std::string namespace_;
  std::map<std::string, const ConfigData*> maps_, secrets_;
};

// The environment being built: a name set again keeps its place.
class EnvBuilder {
 public:
  void Set(const std::string& name, std::string value) {
    auto it = std::find_if(env_.begin(), env_.end(), [&](const auto& e) { return e.first == name; });
    const size_t old = it == env_.end() ? 0 : it->second.size();
    if (bytes_ - old + value.size() > kMaxEnvBytes) return;
    bytes_ = bytes_ - old + value.size();
    if (it == env_.end()) {
      env_.emplace_back(name, std::move(value));
    } else {
      it->second = std::move(value);
    }
  }
  // A literal value: expanded unless that would pass the bound.
  void SetExpanded(const std::string& name, const std::string& written) {
    std::string value = ExpandKubeVars(written, env_);
    if (bytes_ + value.size() > kMaxEnvBytes) value = written;
    Set(name, std::move(value));
  }
  const EnvList& env() const { return env_; }
  EnvList Take() { return std::move(env_); }

 private:
  EnvList env_;
  size_t bytes_ = 0;
};

}  // namespace

ConfigData ConfigMapData(const api::ConfigMap& map) {
  ConfigData out;
  if (map.data() != nullptr) {
    for (const api::StringEntry* e : *map.data()) {
      if (e->key()) out.data[e->key()->str()] = e->value() ? e->value()->str() : "";
    }
  }
  out.binary = DecodedEntries(map.binary_data());
  return out;
}

ConfigData SecretData(const api::Secret& secret) {
  ConfigData out;
  out.data = DecodedEntries(secret.data());
  return out;
}

const ConfigData* ConfigSources::Find(SourceKind kind, std::string_view namespace_,
                                      std::string_view name) const {
  const std::string key = model::ObjectKey(
      model::Kind(kind == SourceKind::kSecret ? "Secret" : "ConfigMap"), namespace_, name);
  auto it = objects_.find(key);
  return it == objects_.end() ? nullptr : &it->second;
}

Result<std::string> PodFieldValue(const api::PodT& pod, std::string_view path, const PodFacts& facts) {
  static const api::ObjectMetaT kNoMeta;
  static const api::PodSpecT kNoSpec;
  const api::ObjectMetaT& meta = pod.metadata ? *pod.metadata : kNoMeta;
  const api::PodSpecT& spec = pod.spec ? *pod.spec : kNoSpec;
  if (path == "spec.nodeName" || path == "spec.host") return spec.node_name;  // spec.host: its old name
  if (path == "spec.serviceAccountName") return spec.service_account_name;
  if (path == "status.hostIP" || path == "status.hostIPs") return facts.host_ip;
  if (path == "status.podIP" || path == "status.podIPs") return facts.pod_ip;
  if (path == "spec.terminationGracePeriodSeconds") {
    return std::to_string(spec.termination_grace_period_seconds.value_or(30));
  }
  if (path == "metadata.name") return meta.name;
  if (path == "metadata.namespace") return meta.namespace_;
  if (path == "metadata.uid") return meta.uid;
  if (path == "metadata.labels") return FormatMap(meta.labels);
  if (path == "metadata.annotations") return FormatMap(meta.annotations);
  // metadata.labels['KEY'] and metadata.annotations['KEY']
  for (const auto& [prefix, entries] :
       {std::pair{std::string_view("metadata.labels['"), &meta.labels},
        std::pair{std::string_view("metadata.annotations['"), &meta.annotations}}) {
    if (path.starts_with(prefix) && path.ends_with("']") && path.size() >= prefix.size() + 2) {
      return EntryValue(*entries, path.substr(prefix.size(), path.size() - prefix.size() - 2));
    }
  }
  return Status::Invalid("unsupported fieldPath: " + std::string(path));
}

Result<std::string> ResourceFieldValue(const api::PodT& pod, const api::ContainerT& c,
                                       const api::ResourceFieldSelectorT& selector,
                                       const PodFacts& facts) {
  const api::ContainerT* target = &c;
  if (!selector.container_name.empty()) {
    target = FindContainer(pod, selector.container_name);
    if (target == nullptr) return Status::Invalid("container " + selector.container_name + " not found");
  }
  model::Quantity divisor = model::Quantity::FromUnits(1);
  if (!selector.divisor.empty()) {
    Result<model::Quantity> d = model::Quantity::Parse(selector.divisor);
    if (d.ok() && !d->IsZero()) divisor = *d;
  }
  const std::string_view resource = selector.resource;
  const bool limits = resource.starts_with("limits.");
  if (!limits && !resource.starts_with("requests.")) {
    return Status::Invalid("unsupported container resource : " + selector.resource);
  }
  const std::string name(resource.substr(limits ? 7 : 9));
  if (name != "cpu" && name != "memory" && name != "ephemeral-storage" && !name.starts_with("hugepages-")) {
    return Status::Invalid("unsupported container resource : " + selector.resource);
  }
  static const std::vector<std::unique_ptr<api::QuantityEntryT>> kNone;
  const auto& entries = target->resources == nullptr ? kNone
                        : limits                     ? target->resources->limits
                                                     : target->resources->requests;
  std::optional<model::Quantity> amount = Find(entries, name);
  const bool defaulted = name == "cpu" || name == "memory" || name == "ephemeral-storage";
  if ((!amount || amount->IsZero()) && limits && defaulted && facts.allocatable != nullptr) {
    // kubelet defaults an unset limit to the node's allocatable.
    if (auto it = facts.allocatable->find(name); it != facts.allocatable->end()) {
      Result<model::Quantity> q = model::Quantity::Parse(it->second);
      if (q.ok()) amount = *q;
    }
  }
  const model::Quantity value = amount.value_or(model::Quantity());
  const double ratio = name == "cpu" ? static_cast<double>(value.MilliValue()) /
                                           static_cast<double>(divisor.MilliValue())
                                     : static_cast<double>(value.Value()) /
                                           static_cast<double>(divisor.Value());
  // Quantities saturate at int64's bounds: so does the answer.
  const double rounded = std::ceil(ratio);
  if (!(rounded < 9.2e18)) return std::to_string(INT64_MAX);
  if (!(rounded > -9.2e18)) return std::to_string(INT64_MIN);
  return std::to_string(static_cast<int64_t>(rounded));
}

Result<EnvList> KubeletEnv(const api::PodT& pod, const api::ContainerT& c, const PodFacts& facts,
                           const ConfigSources& sources) {
  const std::string ns = pod.metadata ? pod.metadata->namespace_ : "";
  SourceCache cache(sources, ns);
  EnvBuilder env;
  for (const auto& from : c.env_from) {
    if (from == nullptr) continue;
    const bool secret = from->secret_ref != nullptr;
    if (!secret && from->config_map_ref == nullptr) continue;
    const std::string& name = secret ? from->secret_ref->name : from->config_map_ref->name;
    const std::optional<bool>& optional =
        secret ? from->secret_ref->optional : from->config_map_ref->optional;
    const SourceKind kind = secret ? SourceKind::kSecret : SourceKind::kConfigMap;
    const ConfigData* data = cache.Get(kind, name);
    if (data == nullptr) {
      if (optional.value_or(false)) continue;
      return Status::NotFound(NotFound(kind, name));
    }
    for (const auto& [key, value] : data->data) env.Set(from->prefix + key, value);
  }
  for (const auto& e : c.env) {
    if (e == nullptr) continue;
    if (!e->value.empty() || e->value_from == nullptr) {
      env.SetExpanded(e->name, e->value);
      continue;
    }
    const api::EnvVarSourceT& from = *e->value_from;
    if (from.field_ref) {
      Result<std::string> value = PodFieldValue(pod, from.field_ref->field_path, facts);
      if (!value.ok()) return value.status();
      env.Set(e->name, std::move(*value));
    } else if (from.resource_field_ref) {
      Result<std::string> value = ResourceFieldValue(pod, c, *from.resource_field_ref, facts);
      if (!value.ok()) return value.status();
      env.Set(e->name, std::move(*value));
    } else if (from.config_map_key_ref || from.secret_key_ref) {
      const bool secret = from.secret_key_ref != nullptr;
      const std::string& name = secret ? from.secret_key_ref->name : from.config_map_key_ref->name;
      const std::string& key = secret ? from.secret_key_ref->key : from.config_map_key_ref->key;
      const bool optional = (secret ? from.secret_key_ref->optional : from.config_map_key_ref->optional)
                                .value_or(false);
      const SourceKind kind = secret ? SourceKind::kSecret : SourceKind::kConfigMap;
      const ConfigData* data = cache.Get(kind, name);
      if (data == nullptr) {
        if (optional) continue;
        return Status::NotFound(NotFound(kind, name));
      }
      auto it = data->data.find(key);
      if (it == data->data.end()) {
        if (optional) continue;
        return Status::NotFound("couldn't find key " + key + " in " + (secret ? "Secret " : "ConfigMap ") +
                                ns + "/" + name);
      }
      env.Set(e->name, it->second);
    } else {
      env.Set(e->name, "");
    }
  }
  return env.Take();
}

namespace {

// One configMap or secret source of a volume (direct or projected): its
// files added to `files` (the items named, else every key; a missing source
// or key of an optional one left out), or kubelet's error.
std::optional<std::string> SourceFiles(SourceKind kind, const std::string& name,
                                       const std::vector<std::unique_ptr<api::KeyToPathT>>& items,
                                       bool optional, int32_t mode, SourceCache& cache,
                                       std::vector<VolumeFile>& files) {
  const ConfigData* data = cache.Get(kind, name);
  if (data == nullptr) {
    if (optional) return std::nullopt;
    return NotFound(kind, name);
  }
  const auto value = [&](const std::string& key) -> const std::string* {
    if (auto it = data->data.find(key); it != data->data.end()) return &it->second;
    if (auto it = data->binary.find(key); it != data->binary.end()) return &it->second;
    return nullptr;
  };
  if (items.empty()) {
    for (const auto* keys : {&data->data, &data->binary}) {
      for (const auto& [key, bytes] : *keys) files.push_back({key, bytes, mode});
    }
    return std::nullopt;
  }
  for (const auto& item : items) {
    if (item == nullptr) continue;
    const std::string* bytes = value(item->key);
    if (bytes == nullptr) {
      if (optional) continue;
      return kind == SourceKind::kSecret ? "references non-existent secret key: " + item->key
                                         : "configmap references non-existent config key: " + item->key;
    }
    files.push_back({item->path.empty() ? item->key : item->path, *bytes, item->mode.value_or(mode)});
  }
  return std::nullopt;
}

// A downwardAPI source's files, or the first error.
std::optional<std::string> DownwardFiles(const api::PodT& pod,
                                         const std::vector<std::unique_ptr<api::DownwardAPIVolumeFileT>>& items,
                                         int32_t mode, const PodFacts& facts, std::vector<VolumeFile>& files) {
  for (const auto& item : items) {
    if (item == nullptr) continue;
    Result<std::string> value = Status::Invalid("no fieldRef or resourceFieldRef");
    if (item->field_ref) {
      value = PodFieldValue(pod, item->field_ref->field_path, facts);
    } else if (item->resource_field_ref) {
      const api::ContainerT* c = FindContainer(pod, item->resource_field_ref->container_name);
      value = c != nullptr ? ResourceFieldValue(pod, *c, *item->resource_field_ref, facts)
                           : Status::Invalid("container " + item->resource_field_ref->container_name + " not found");
    }
    if (!value.ok()) return value.status().message();
    files.push_back({item->path, std::move(*value), item->mode.value_or(mode)});
  }
  return std::nullopt;
}

bool Mounted(const api::PodSpecT& spec, const std::string& volume) {
  for (const auto* list : {&spec.init_containers, &spec.containers}) {
    for (const auto& c : *list) {
      if (c == nullptr) continue;
      for (const auto& m : c->volume_mounts) {
        if (m && m->name == volume) return true;
      }
    }
  }
  return false;
}

// Go's aggregate of errors: each distinct message once, in brackets when
// more than one.
std::string Aggregate(std::vector<std::string> errors) {
  std::vector<std::string> distinct;
  for (std::string& e : errors) {
    if (std::find(distinct.begin(), distinct.end(), e) == distinct.end()) distinct.push_back(std::move(e));
  }
  if (distinct.size() == 1) return distinct.front();
  std::string message = "[";
  for (size_t i = 0; i < distinct.size(); ++i) message += (i ? ", " : "") + distinct[i];
  return message + "]";
}

}  // namespace

PodVolumes ResolveVolumes(const api::PodT& pod, const PodFacts& facts, const ConfigSources& sources) {
  PodVolumes out;
  if (pod.spec == nullptr) return out;
  SourceCache cache(sources, pod.metadata ? pod.metadata->namespace_ : "");
  constexpr int32_t kDefaultMode = 0644;  // the API's default for each of these
  for (const auto& v : pod.spec->volumes) {
    if (v == nullptr || !Mounted(*pod.spec, v->name)) continue;  // kubelet ignores unused volumes
    VolumeSource volume;
    volume.name = v->name;
    volume.type = VolumeSource::Type::kFiles;
    volume.read_only = true;
    std::vector<std::string> errors;
    const auto add = [&](std::optional<std::string> error) {
      if (error) errors.push_back(std::move(*error));
    };
    if (v->config_map) {
      add(SourceFiles(SourceKind::kConfigMap, v->config_map->name, v->config_map->items,
                      v->config_map->optional.value_or(false), v->config_map->default_mode.value_or(kDefaultMode),
                      cache, volume.files));
    } else if (v->secret) {
      volume.memory = true;
      add(SourceFiles(SourceKind::kSecret, v->secret->secret_name, v->secret->items,
                      v->secret->optional.value_or(false), v->secret->default_mode.value_or(kDefaultMode), cache,
                      volume.files));
    } else if (v->downward_api) {
      add(DownwardFiles(pod, v->downward_api->items, v->downward_api->default_mode.value_or(kDefaultMode), facts,
                        volume.files));
    } else if (v->projected) {
      volume.memory = true;
      const int32_t mode = v->projected->default_mode.value_or(kDefaultMode);
      for (const auto& s : v->projected->sources) {
        if (s == nullptr) continue;
        if (s->config_map) {
          add(SourceFiles(SourceKind::kConfigMap, s->config_map->name, s->config_map->items,
                          s->config_map->optional.value_or(false), mode, cache, volume.files));
        } else if (s->secret) {
          add(SourceFiles(SourceKind::kSecret, s->secret->name, s->secret->items,
                          s->secret->optional.value_or(false), mode, cache, volume.files));
        } else if (s->downward_api) {
          add(DownwardFiles(pod, s->downward_api->items, mode, facts, volume.files));
        }
        // A serviceAccountToken source needs a token the API issues
        // (TokenRequest), which podflow's API does not: no file.
      }
    } else if (v->host_path) {
      volume.type = VolumeSource::Type::kHostPath;
      volume.read_only = false;
      volume.path = v->host_path->path;
      volume.host_path_type = v->host_path->type;
    } else if (v->persistent_volume_claim) {
      volume.type = VolumeSource::Type::kClaim;
      volume.read_only = v->persistent_volume_claim->read_only;
      volume.claim = (pod.metadata ? pod.metadata->namespace_ : "") + "/" + v->persistent_volume_claim->claim_name;
    } else {
      // emptyDir, and every other kind (a network disk, an ephemeral
      // claim): an empty directory of the pod's on this node.
      volume.type = VolumeSource::Type::kEmptyDir;
      volume.read_only = false;
      if (v->empty_dir) {
        volume.memory = v->empty_dir->medium == "Memory";
        if (!v->empty_dir->size_limit.empty()) {
          Result<model::Quantity> limit = model::Quantity::Parse(v->empty_dir->size_limit);
          if (limit.ok() && limit->Value() > 0) volume.size_limit = limit->Value();
        }
      }
    }
    // kubelet hands the pod's fsGroup to the volume kinds that manage
    // their ownership: not to a hostPath, nor to this claim's directory.
    if (volume.type == VolumeSource::Type::kFiles || volume.type == VolumeSource::Type::kEmptyDir) {
      volume.fs_group = pod.spec->security_context ? pod.spec->security_context->fs_group : std::nullopt;
    }
    if (errors.empty()) {
      out.ready.push_back(std::move(volume));
    } else {
      out.failed.push_back({v->name, Aggregate(std::move(errors))});
    }
  }
  return out;
}

std::string MountSubPath(const api::VolumeMountT& mount, const EnvList& env) {
  return mount.sub_path_expr.empty() ? mount.sub_path : ExpandKubeVars(mount.sub_path_expr, env);
}

std::string SubPathError(const api::ContainerT& c, const EnvList& env) {
  for (const auto& m : c.volume_mounts) {
    if (m == nullptr) continue;
    const std::string sub = MountSubPath(*m, env);
    if (sub.empty()) continue;
    if (sub.front() == '/') return "error SubPath `" + sub + "` must not be an absolute path";
    for (size_t start = 0; start <= sub.size();) {
      size_t end = sub.find('/', start);
      if (end == std::string::npos) end = sub.size();
      if (sub.compare(start, end - start, "..") == 0) return "unable to provision SubPath `" + sub + "`: must not contain '..'";
      start = end + 1;
    }
  }
  return "";
}

}  // namespace podflow::runtime
