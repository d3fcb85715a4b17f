// ServiceAccount: a pod runs as the `default` account of its namespace
// unless it names one (spec.serviceAccount, the old field, kept equal), and
// the account must exist (`error looking up service account ns/name:
// serviceaccount "name" not found`). A namespace made earlier in the
// request brings its `default` account with it. A mirror pod (a static
// pod the kubelet mirrors) runs as none and may not name one.
//
// Unless the pod or its account turns automountServiceAccountToken off,
// the account's token is mounted in every container that has nothing at
// /var/run/secrets/kubernetes.io/serviceaccount, as the projected volume
// `kube-api-access-<5 random characters>` kube-apiserver adds: a bound
// token (expiring after 3607 s), ca.crt from the namespace's
// kube-root-ca.crt ConfigMap, and the pod's namespace.
#include "stages/admission/defaults.h"
#include "stages/admission/plugins/plugin.h"

namespace podflow::admission {
namespace {

constexpr std::string_view kMirrorAnnotation = "kubernetes.io/config.mirror";
constexpr std::string_view kTokenVolumePrefix = "kube-api-access-";
constexpr std::string_view kTokenMountPath = "/var/run/secrets/kubernetes.io/serviceaccount";
constexpr int64_t kTokenExpirationSeconds = 3607;  // one hour, plus the warn-only bound token's 7 s
constexpr int kProjectedDefaultMode = 0644;

// The projected volume of the token, the cluster's CA and the namespace.
std::unique_ptr<api::VolumeT> TokenVolume(std::string name) {
  auto volume = std::make_unique<api::VolumeT>();
  volume->name = std::move(name);
  volume->projected = std::make_unique<api::ProjectedVolumeSourceT>();
  api::ProjectedVolumeSourceT& projected = *volume->projected;
  projected.default_mode = kProjectedDefaultMode;
  auto token = std::make_unique<api::VolumeProjectionT>();
  token->service_account_token = std::make_unique<api::ServiceAccountTokenProjectionT>();
  token->service_account_token->expiration_seconds = kTokenExpirationSeconds;
  token->service_account_token->path = "token";
  projected.sources.push_back(std::move(token));
  auto ca = std::make_unique<api::VolumeProjectionT>();
  ca->config_map = std::make_unique<api::ConfigMapProjectionT>();
  ca->config_map->name = std::string(kRootCaConfigMap);
  auto item = std::make_unique<api::KeyToPathT>();
  item->key = "ca.crt";
  item->path = "ca.crt";
  ca->config_map->items.push_back(std::move(item));
  projected.sources.push_back(std::move(ca));
  auto ns = std::make_unique<api::VolumeProjectionT>();
  ns->downward_api = std::make_unique<api::DownwardAPIProjectionT>();
  auto file = std::make_unique<api::DownwardAPIVolumeFileT>();
  file->path = "namespace";
  file->field_ref = std::make_unique<api::ObjectFieldSelectorT>();
  file->field_ref->api_version = "v1";
  file->field_ref->field_path = "metadata.namespace";
  ns->downward_api->items.push_back(std::move(file));
  projected.sources.push_back(std::move(ns));
  return volume;
}

// Mounts the account's token in every container with nothing at its path,
// and adds the volume when one did (an existing kube-api-access volume is
// used as it is).
void MountToken(api::PodSpecT& spec, std::mt19937_64* rng) {
  std::string volume;
  for (const auto& v : spec.volumes) {
    if (v->name.starts_with(kTokenVolumePrefix)) {
      volume = v->name;
      break;
    }
  }
  const bool has_volume = !volume.empty();
  if (!has_volume) {
    if (rng == nullptr) return;
    volume = GenerateName(kTokenVolumePrefix, *rng);
  }
  bool mounted = false;
  for (auto* containers : {&spec.init_containers, &spec.containers}) {
    for (auto& c : *containers) {
      const bool taken = std::any_of(c->volume_mounts.begin(), c->volume_mounts.end(),
                                     [](const auto& m) { return m->mount_path == kTokenMountPath; });
      if (taken) continue;
      auto mount = std::make_unique<api::VolumeMountT>();
      mount->name = volume;
      mount->read_only = true;
      mount->mount_path = std::string(kTokenMountPath);
      c->volume_mounts.push_back(std::move(mount));
      mounted = true;
    }
  }
  if (mounted && !has_volume) spec.volumes.push_back(TokenVolume(volume));
}

bool Mirror(const api::PodT& pod) {
  if (!pod.metadata) return false;
  for (const auto& a : pod.metadata->annotations) {
    if (a->key == kMirrorAnnotation) return true;
  }
  return false;
}

class ServiceAccount : public Plugin {
 public:
  std::optional<ApiStatusInfo> Admit(Attributes& a, RequestState& state) const override {
    api::PodT* pod = a.As<api::PodT>();
    if (pod == nullptr || !pod->spec) return std::nullopt;
    api::PodSpecT& spec = *pod->spec;
    if (spec.service_account_name.empty()) spec.service_account_name = spec.service_account;
    // A static pod the kubelet mirrors runs as no account.
    if (Mirror(*pod)) {
      if (spec.service_account_name.empty()) return std::nullopt;
      return AdmissionForbiddenStatus(a.kind(), a.name(), "a mirror pod may not reference service accounts");
    }
    if (spec.service_account_name.empty()) spec.service_account_name = "default";
    spec.service_account = spec.service_account_name;
    Result<std::optional<ServiceAccountInfo>> account = Lookup(a.namespace_(), spec.service_account_name, state);
    const std::string looking =
        "error looking up service account " + a.namespace_() + "/" + spec.service_account_name + ": ";
    if (!account.ok()) return AdmissionForbiddenStatus(a.kind(), a.name(), looking + account.status().message());
    if (!account->has_value()) {
      return AdmissionForbiddenStatus(a.kind(), a.name(),
                                      looking + "serviceaccount " + GoQuote(spec.service_account_name) + " not found");
    }
    // The pod's word on the token, else its account's, else mounted.
    const bool automount =
        spec.automount_service_account_token.value_or((*account)->automount_token.value_or(true));
    if (automount) MountToken(spec, state.rng);
    return std::nullopt;
  }

 private:
  // The account as the request or the cluster has it.
  static Result<std::optional<ServiceAccountInfo>> Lookup(const std::string& ns, const std::string& name,
                                                          const RequestState& state) {
    if (auto it = state.request_service_accounts.find(ns + "/" + name); it != state.request_service_accounts.end()) {
      return std::optional<ServiceAccountInfo>(it->second);
    }
    // A namespace made in the request brings its `default` account.
    if (name == "default" && state.request_namespaces.contains(ns)) return std::optional<ServiceAccountInfo>(ServiceAccountInfo{});
    if (!state.service_accounts) return std::optional<ServiceAccountInfo>(ServiceAccountInfo{});
    return state.service_accounts(ns, name);
  }
};

}  // namespace

std::unique_ptr<Plugin> NewServiceAccount() { return std::make_unique<ServiceAccount>(); }

}  // namespace podflow::admission
