#include "model/image_catalog.h"

#include <algorithm>
#include <charconv>

#include "base/yaml_reader.h"

#include "base/hex_id.h"

namespace podflow::model {

namespace {

// A count as the config takes it: decimal digits only (no sign, no 0x).
Result<int64_t> NonNegative(const YAML::Node& node, const std::string& path) {
  Result<std::string> text = yaml::Scalar<std::string>(node, path, "must be an integer");
  if (!text.ok()) return text.status();
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || end != text->data() + text->size() || value < 0) {
    return Status::Invalid(path + ": must be a non-negative integer, got \"" + *text + "\"");
  }
  return value;
}

}  // namespace

Result<std::vector<CatalogImage>> ParseRegistry(const YAML::Node& node, const std::string& path) {
  if (!node.IsSequence()) return Status::Invalid(path + ": must be a list");
  std::vector<CatalogImage> out;
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string at = yaml::Index(path, i);
    if (!node[i].IsMap()) return Status::Invalid(at + ": must be a map");
    CatalogImage image;
    for (const auto& entry : node[i]) {
      const std::string key = entry.first.Scalar();
      const std::string field = at + "." + key;
      if (key == "name") {
        Result<std::string> name = yaml::Scalar<std::string>(entry.second, field, "must be a string");
        if (!name.ok()) return name.status();
        image.name = std::move(*name);
      } else if (key == "tags") {
        if (!entry.second.IsSequence()) return Status::Invalid(field + ": must be a list");
        for (size_t t = 0; t < entry.second.size(); ++t) {
          Result<std::string> tag = yaml::Scalar<std::string>(entry.second[t], yaml::Index(field, t), "must be a string");
          if (!tag.ok()) return tag.status();
          image.tags.push_back(std::move(*tag));
        }
      } else if (key == "sizeBytes" || key == "pullMillis") {
        Result<int64_t> n = NonNegative(entry.second, field);
        if (!n.ok()) return n.status();
        if (key == "sizeBytes") {
          image.size_bytes = *n;
        } else {
          image.pull_time = SimDuration(*n);
        }
      } else if (key == "behavior") {
        Result<SimBehavior> behavior = ParseSimBehavior(entry.second, field);
        if (!behavior.ok()) return behavior.status();
        image.behavior = std::move(*behavior);
      } else {
        return Status::Invalid(field + ": unknown key");
      }
    }
    if (image.name.empty()) return Status::Invalid(at + ".name: Required value");
    out.push_back(std::move(image));
  }
  return out;
}

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
  out.behavior = &image.behavior;
  return out;
}

}  // namespace podflow::model
