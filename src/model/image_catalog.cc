#include "model/image_catalog.h"

#include <algorithm>
#include <charconv>
#include <regex>

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

Result<std::vector<CatalogImage>> ParseImages(const YAML::Node& node, const std::string& path) {
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
      } else if (key == "tags" || key == "entrypoint" || key == "cmd") {
        if (!entry.second.IsSequence()) return Status::Invalid(field + ": must be a list");
        std::vector<std::string>& list = key == "tags" ? image.tags : key == "entrypoint" ? image.entrypoint : image.cmd;
        for (size_t t = 0; t < entry.second.size(); ++t) {
          Result<std::string> item = yaml::Scalar<std::string>(entry.second[t], yaml::Index(field, t), "must be a string");
          if (!item.ok()) return item.status();
          list.push_back(std::move(*item));
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

}  // namespace

Result<RegistryConfig> ParseRegistry(const YAML::Node& node, const std::string& path) {
  RegistryConfig registry;
  if (node.IsSequence()) {
    Result<std::vector<CatalogImage>> images = ParseImages(node, path);
    if (!images.ok()) return images.status();
    registry.images = std::move(*images);
    return registry;
  }
  if (!node.IsMap()) return Status::Invalid(path + ": must be a list of images or a map");
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    const std::string field = yaml::Child(path, key);
    if (key == "open") {
      Result<bool> open = yaml::Scalar<bool>(entry.second, field, "must be true or false");
      if (!open.ok()) return open.status();
      registry.open = *open;
    } else if (key == "images") {
      Result<std::vector<CatalogImage>> images = ParseImages(entry.second, field);
      if (!images.ok()) return images.status();
      registry.images = std::move(*images);
    } else if (key == "missing") {
      if (!entry.second.IsSequence()) return Status::Invalid(field + ": must be a list");
      for (size_t i = 0; i < entry.second.size(); ++i) {
        Result<std::string> ref =
            yaml::Scalar<std::string>(entry.second[i], yaml::Index(field, i), "must be a string");
        if (!ref.ok()) return ref.status();
        if (std::optional<std::string> why = InvalidImageReference(*ref)) {
          return Status::Invalid(yaml::Index(field, i) + ": \"" + *ref + "\": " + *why);
        }
        registry.missing.push_back(std::move(*ref));
      }
    } else if (key == "defaultSizeBytes" || key == "defaultPullMillis") {
      Result<int64_t> n = NonNegative(entry.second, field);
      if (!n.ok()) return n.status();
      if (key == "defaultSizeBytes") {
        registry.default_size_bytes = *n;
      } else {
        registry.default_pull_time = SimDuration(*n);
      }
    } else {
      return Status::Invalid(field + ": unknown key");
    }
  }
  return registry;
}

std::optional<std::string> InvalidImageReference(std::string_view reference) {
  static const char kFormat[] = "invalid reference format";
  // Anything longer than a name (255), a tag (128) and a digest can hold is
  // not one; the bound also keeps the matcher's work small.
  if (reference.empty() || reference.size() > 600) return kFormat;
  // Docker's normalization (distribution's splitDockerDomain): a first
  // component that is not a host is a Docker Hub path.
  std::string domain = "docker.io";
  std::string remainder(reference);
  const size_t slash = reference.find('/');
  if (slash != std::string_view::npos) {
    const std::string_view head = reference.substr(0, slash);
    const bool lower = std::none_of(head.begin(), head.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
    if (head.find_first_of(".:") != std::string_view::npos || head == "localhost" || !lower) {
      domain = std::string(head);
      remainder = std::string(reference.substr(slash + 1));
    }
  }
  if (domain == "index.docker.io") domain = "docker.io";
  if (domain == "docker.io" && remainder.find('/') == std::string::npos) remainder = "library/" + remainder;
  const std::string remote = remainder.substr(0, remainder.find(':'));
  if (std::any_of(remote.begin(), remote.end(), [](char c) { return c >= 'A' && c <= 'Z'; })) {
    return std::string(kFormat) + ": repository name (" + remote + ") must be lowercase";
  }
  // The reference grammar: [domain/]path[:tag][@digest].
  static const std::regex kReference(
      R"(^(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*)"
      R"(|\[[a-fA-F0-9:]+\])(?::[0-9]+)?)"
      R"(/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*)"
      R"((?::[\w][\w.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$)");
  const std::string normalized = domain + "/" + remainder;
  if (!std::regex_match(normalized, kReference)) return kFormat;
  const size_t name_end = normalized.find_first_of("@");
  std::string name = normalized.substr(0, name_end);
  if (const size_t colon = name.rfind(':'); colon != std::string::npos && colon > name.rfind('/')) {
    name.resize(colon);
  }
  if (name.size() > 255) return std::string("repository name must not be more than 255 characters");
  return std::nullopt;
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

ImageCatalog::ImageCatalog(const RegistryConfig& registry)
    : images_(registry.images),
      open_(registry.open),
      default_size_bytes_(registry.default_size_bytes),
      default_pull_time_(registry.default_pull_time) {
  for (const CatalogImage& image : images_) {
    by_repository_[NormalizeImageReference(image.name).repository] = &image;
  }
  for (const std::string& ref : registry.missing) {
    ImageReference missing = NormalizeImageReference(ref);
    // "example/gone" names every tag: only a written tag or digest narrows it.
    if (ref.find('@') == std::string::npos) {
      const size_t slash = ref.rfind('/');
      const size_t colon = ref.rfind(':');
      if (colon == std::string::npos || (slash != std::string::npos && colon < slash)) missing.tag.clear();
    }
    missing_.push_back(std::move(missing));
  }
}

ImageCatalog::ImageCatalog(const std::vector<CatalogImage>& images)
    : ImageCatalog(RegistryConfig{images, false, {}, 0, SimDuration(0)}) {}

std::optional<ResolvedImage> ImageCatalog::Resolve(std::string_view reference) const {
  static const SimBehavior kNoBehavior;
  const ImageReference ref = NormalizeImageReference(reference);
  const CatalogImage* image = nullptr;
  if (auto it = by_repository_.find(ref.repository); it != by_repository_.end()) {
    image = it->second;
    if (!ref.tag.empty() && !image->tags.empty() &&
        std::find(image->tags.begin(), image->tags.end(), ref.tag) == image->tags.end()) {
      return std::nullopt;
    }
  } else if (!open_) {
    return std::nullopt;
  }
  if (open_) {
    for (const ImageReference& m : missing_) {
      if (m.repository != ref.repository) continue;
      if ((m.tag.empty() && m.digest.empty()) || (!m.tag.empty() && m.tag == ref.tag) ||
          (!m.digest.empty() && m.digest == ref.digest)) {
        return std::nullopt;
      }
    }
    if (image == nullptr && InvalidImageReference(reference)) return std::nullopt;
  }
  ResolvedImage out;
  out.canonical = ref.Canonical();
  out.tag = ref.tag;
  out.image_id = ref.repository + "@" +
                 (ref.digest.empty() ? "sha256:" + DeterministicHex(out.canonical) : ref.digest);
  out.size_bytes = image != nullptr ? image->size_bytes : default_size_bytes_;
  out.pull_time = image != nullptr ? image->pull_time : default_pull_time_;
  out.behavior = image != nullptr ? &image->behavior : &kNoBehavior;
  out.listed = image;
  return out;
}

}  // namespace podflow::model
