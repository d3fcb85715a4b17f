// The registry catalog: which images exist, how big they are and how long a
// pull takes (the runtime pulls from it; admission's ImagePolicy refuses an
// image it does not have). Image references resolve as Docker normalizes them:
// "nginx" = "nginx:latest" = "docker.io/library/nginx:latest";
// "fluent/fluent-bit:3.0" = "docker.io/fluent/fluent-bit:3.0".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/clock.h"
#include "base/result.h"
#include "model/sim_behavior.h"

namespace podflow::model {

// One catalog entry, as configured.
struct CatalogImage {
  std::string name;               // "nginx", "fluent/fluent-bit", "registry.k8s.io/pause"
  std::vector<std::string> tags;  // empty: every tag exists
  int64_t size_bytes = 0;
  SimDuration pull_time{0};
  SimBehavior behavior;  // what its containers do (runtime.registry[].behavior)
  // What its containers run on a process node, as an image's config has
  // them: a container's command replaces `entrypoint`, its args `cmd`.
  std::vector<std::string> entrypoint;
  std::vector<std::string> cmd;
};

// A reference split and normalized: "nginx:1.14.2" ->
// {repository "docker.io/library/nginx", tag "1.14.2"}.
struct ImageReference {
  std::string repository;
  std::string tag;     // "latest" when none was written and no digest
  std::string digest;  // "sha256:..." when written with @

  // "docker.io/library/nginx:1.14.2" (or "...@sha256:..." for digests).
  std::string Canonical() const;
};

ImageReference NormalizeImageReference(std::string_view reference);

// Why `reference` is not an image reference, in the words of the parser
// kubelet uses (distribution's reference grammar, after Docker's
// normalization): "invalid reference format", or "invalid reference format:
// repository name (library/Nginx) must be lowercase"; nullopt when it is one.
std::optional<std::string> InvalidImageReference(std::string_view reference);

// The registry as configured. A closed registry has only its listed
// images; an open one has every well-formed reference but those marked
// missing, an unlisted one with the default size and pull time. A listed
// image with `tags` has those tags only, open or not.
struct RegistryConfig {
  std::vector<CatalogImage> images;
  bool open = false;
  std::vector<std::string> missing;  // "nginx:9.9" (one tag), "example/gone" (every tag)
  int64_t default_size_bytes = 30'000'000;
  SimDuration default_pull_time{1000};
};

// `runtime.registry` at `path`: a list of {name (required), tags, sizeBytes,
// pullMillis, behavior, entrypoint, cmd} (a closed registry), or a map {open, images (that
// list), missing, defaultSizeBytes, defaultPullMillis}. Invalid naming the
// key otherwise.
Result<RegistryConfig> ParseRegistry(const YAML::Node& node, const std::string& path);

// An image the catalog knows.
struct ResolvedImage {
  std::string canonical;  // "docker.io/library/nginx:1.14.2": containerStatuses[].image
  std::string image_id;   // "docker.io/library/nginx@sha256:<64 hex>": imageID
  std::string tag;
  int64_t size_bytes = 0;
  SimDuration pull_time{0};
  const SimBehavior* behavior = nullptr;  // the catalog's; lives as long as it
  const CatalogImage* listed = nullptr;   // its entry, when the registry lists it
};

// Immutable after construction; safe to share between threads.
class ImageCatalog {
 public:
  ImageCatalog() = default;
  explicit ImageCatalog(const RegistryConfig& registry);
  // A closed registry of `images`.
  explicit ImageCatalog(const std::vector<CatalogImage>& images);
  // Not copyable: the index points into images_ (a move keeps them).
  ImageCatalog(const ImageCatalog&) = delete;
  ImageCatalog& operator=(const ImageCatalog&) = delete;
  ImageCatalog(ImageCatalog&&) = default;
  ImageCatalog& operator=(ImageCatalog&&) = default;

  // nullopt when the registry does not have the image (the pull fails) or
  // the reference is not well formed.
  std::optional<ResolvedImage> Resolve(std::string_view reference) const;

 private:
  std::unordered_map<std::string, const CatalogImage*> by_repository_;
  std::vector<CatalogImage> images_;
  bool open_ = false;
  std::vector<ImageReference> missing_;
  int64_t default_size_bytes_ = 0;
  SimDuration default_pull_time_{0};
};

}  // namespace podflow::model
