#include "stages/runtime/catalog.h"

#include <algorithm>

#include "stages/runtime/hex_id.h"

namespace podflow::runtime {

std::string ImageReference::Canonical() const {
  return digest.empty() ? repository + ":" + tag : repository + "@" + digest;
}

ImageReference NormalizeImageReference(std::string_view reference) {
  ImageReference ref;
  std::string_view rest = reference;
  if (size_t at = rest.find('@'); at != std::string_view::npos) {
    ref.digest = std::string(rest.substr(at + 1));
    rest = rest.substr(0, at);
  }
  // A ':' after the last '/' starts the tag (one before it is a registry port).
  const size_t slash = rest.rfind('/');
  const size_t colon = rest.rfind(':');
  if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
    ref.tag = std::string(rest.substr(colon + 1));
    rest = rest.substr(0, colon);
  } else if (ref.digest.empty()) {
    ref.tag = "latest";
  }
  // The first component names a registry when it looks like a host.
  const size_t first = rest.find('/');
  std::string_view head = rest.substr(0, first);
  const bool has_domain = first != std::string_view::npos &&
                          (head.find('.') != std::string_view::npos ||
                           head.find(':') != std::string_view::npos || head == "localhost");
  if (has_domain) {
    ref.repository = std::string(rest);
  } else if (first == std::string_view::npos) {
    ref.repository = "docker.io/library/" + std::string(rest);
  } else {
    ref.repository = "docker.io/" + std::string(rest);
  }
  return ref;
}

ImageCatalog::ImageCatalog(const std::vector<CatalogImage>& images) : images_(images) {
  for (const CatalogImage& image : images_) {
    by_repository_[NormalizeImageReference(image.name).repository] = &image;
  }
}

std::optional<ResolvedImage> ImageCatalog::Resolve(std::string_view reference) const {
  const ImageReference ref = NormalizeImageReference(reference);
  auto it = by_repository_.find(ref.repository);
  if (it == by_repository_.end()) return std::nullopt;
  const CatalogImage& image = *it->second;
  if (!ref.tag.empty() && !image.tags.empty() &&
      std::find(image.tags.begin(), image.tags.end(), ref.tag) == image.tags.end()) {
    return std::nullopt;
  }
  ResolvedImage out;
  out.canonical = ref.Canonical();
  out.tag = ref.tag;
  out.image_id = ref.repository + "@" +
                 (ref.digest.empty() ? "sha256:" + DeterministicHex(out.canonical) : ref.digest);
  out.size_bytes = image.size_bytes;
  out.pull_time = image.pull_time;
  return out;
}

}  // namespace podflow::runtime
