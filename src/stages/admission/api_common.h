// What the API's verbs (api_requests.cc) and its watches (api_watch.cc)
// share: reading an ApiRequest's fields, the objects a list or a watch
// selects. Private to the stage.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"
#include "log/log.h"
#include "messages_generated.h"
#include "model/fields.h"
#include "model/kind_types.h"
#include "model/labels.h"

namespace podflow::admission {

inline std::string Text(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

inline std::string_view Bytes(const flatbuffers::Vector<uint8_t>* v) {
  return v ? std::string_view(reinterpret_cast<const char*>(v->data()), v->size()) : std::string_view();
}

// The objects of a list or a watch that its label and field selectors
// select. A stored value that is not a valid object of the kind is logged
// and taken as selected only when nothing is asked of it: the client
// verifies what it reads, and names the key it could not use.
struct Selection {
  model::LabelSelector labels;
  model::FieldSelector fields;

  bool Selects(const model::KindInfo& kind, const KeyValue& kv) const;
};

// The request's label_selector and field_selector; Invalid in kubectl's
// words when one cannot be parsed.
Result<Selection> ParseSelection(const model::KindInfo& kind, const msg::ApiRequest& request);

}  // namespace podflow::admission
