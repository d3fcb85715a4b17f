// ImagePolicy (off unless enabled, as kube-apiserver's ImagePolicyWebhook):
// a pod is refused when the registry catalog (the config's
// `runtime.registry`, the images the runtime can pull) does not have one of
// its init containers' or containers' images — seed 004's "does the image
// exist" — on create and on every update of the pod (images may change), as
// kube-apiserver reviews them. The refusal is worded as the webhook's:
//   pods "web" is forbidden: image policy webhook backend denied one or
//   more images: images not in the registry: "nginx:9.9"
#include <set>

#include "model/image_catalog.h"
#include "stages/admission/plugins/plugin.h"
#include "stages/admission/validation.h"

namespace podflow::admission {
namespace {

class ImagePolicy : public Plugin {
 public:
  explicit ImagePolicy(const model::RegistryConfig& registry) : catalog_(registry) {}

  bool Handles(Operation) const override { return true; }

  std::optional<ApiStatusInfo> Validate(const Attributes& a, RequestState&) const override {
    const api::PodT* pod = a.As<api::PodT>();
    if (pod == nullptr || !pod->spec || !a.subresource().empty()) return std::nullopt;
    std::vector<std::string> missing;
    std::set<std::string> seen;
    auto check = [&](const std::string& image) {
      if (!catalog_.Resolve(image) && seen.insert(image).second) missing.push_back(GoQuote(image));
    };
    for (const auto& c : pod->spec->init_containers) check(c->image);
    for (const auto& c : pod->spec->containers) check(c->image);
    if (missing.empty()) return std::nullopt;
    return AdmissionForbiddenStatus(a.kind(), a.name(),
                                    "image policy webhook backend denied one or more images: images not in the "
                                    "registry: " + Join(missing, ", "));
  }

 private:
  const model::ImageCatalog catalog_;
};

}  // namespace

std::unique_ptr<Plugin> NewImagePolicy(const model::RegistryConfig& registry) {
  return std::make_unique<ImagePolicy>(registry);
}

}  // namespace podflow::admission
