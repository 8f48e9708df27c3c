// The list and watch core behind kube/decode.h, and the JSON helpers the
// decoders of the kinds share. Internal to kube/: only the decode_*.cc
// files include it.
//
// Each kind's decoder is in a file of its own, which gives the core a
// Codec<T> (below) and instantiates DecodeList<T> and DecodeWatchEvent<T>:
//   decode_pod.cc       Pod
//   decode_node.cc      Node
//   decode_workload.cc  Namespace, Workload, PodDisruptionBudget; and the
//                       Lease, decoded alone
//   decode_storage.cc   PersistentVolumeClaim, PersistentVolume,
//                       StorageClass, CsiNode, CsiDriver,
//                       CsiStorageCapacity
//   decode_device.cc    DeviceClass
// decode_core.cc has the helpers below, timestamps and the apiserver's
// error Status.
//
// The decoders throw (DecodeError, or simdjson's own error) and Guard turns
// either into InvalidArgument: no exception leaves kube/decode.h's
// functions. One simdjson parser per thread (Parser()); thread-safe.
#ifndef METRICS_SCHEDULER_KUBE_DECODE_CORE_H_
#define METRICS_SCHEDULER_KUBE_DECODE_CORE_H_

#include <simdjson.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "kube/decode.h"
#include "model/node.h"
#include "model/pod.h"
#include "model/pod_affinity.h"

namespace ms::kube {
namespace decode_internal {

namespace od = simdjson::ondemand;

// Decoding throws this (or simdjson's own error) internally; the public
// functions turn both into InvalidArgument.
struct DecodeError {
  std::string message;
};

inline absl::string_view AbslView(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

inline std::string String(od::value v) {
  return std::string(std::string_view(v));
}

inline bool IsNull(od::value& v) { return v.is_null(); }

// The JSON helpers the decoders share. Each throws DecodeError (or
// simdjson's error) on what it refuses.

std::map<std::string, std::string> StringMap(od::value v);
std::vector<std::string> StringList(od::value v);

// A timestamp (RFC 3339, see ParseTimestampMs); null is 0.
int64_t TimeMs(od::value v);

// One quantity's value (in thousandths when `milli`, as cpu is kept),
// saturated at +-kMaxQuantity as every quantity decoded is; an error for
// a malformed one, which the caller words with the field's name.
absl::StatusOr<int64_t> SaturatedQuantity(od::value v, bool milli);

// A resource list such as requests, allocatable or overhead; `names`, when
// given, gets whether cpu and memory are named in it (even as "0").
Resources ResourceList(od::value v, RequestNames* names = nullptr);

TaintEffect Effect(std::string_view s);

// A node selector term (matchExpressions, matchFields), and the terms of
// a node selector (its nodeSelectorTerms).
NodeSelectorTerm Term(od::value v);
std::vector<NodeSelectorTerm> NodeSelectorTerms(od::value v);

// A metav1.LabelSelector; null stays absent (it selects nothing). Values
// are checked as metav1.LabelSelectorAsSelector checks them, so a selector
// kube-scheduler cannot use is refused here too.
std::optional<LabelSelector> Selector(od::value v);

// metadata.ownerReferences: the one with controller: true, if any.
std::optional<ControllerRef> Controller(od::value v);

// The identity fields of metadata; false when `key` is not one of them.
template <typename T>
bool Identity(std::string_view key, od::value value, T& object) {
  if (key == "name") {
    object.name = String(value);
  } else if (key == "uid") {
    object.uid = String(value);
  } else if (key == "resourceVersion") {
    object.resource_version = String(value);
  } else {
    return false;
  }
  return true;
}

// A Kubernetes Status (an error body, an ERROR event) as an absl::Status.
absl::Status ErrorStatus(long http_status,  // NOLINT(runtime/int)
                         const std::string& reason, std::string message);

// The core.

// Runs `fn` and turns any decoding failure into InvalidArgument.
template <typename Fn>
auto Guard(absl::string_view what, Fn fn) -> absl::StatusOr<decltype(fn())> {
  try {
    return fn();
  } catch (const simdjson::simdjson_error& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("decoding ", what, ": ", e.what()));
  } catch (const DecodeError& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("decoding ", what, ": ", e.message));
  }
}

// simdjson's parser is not thread-safe and costly to build: one per thread.
od::parser& Parser();

// A second one, for the objects of a list decoded one by one while the
// list's own document is still being iterated with Parser().
od::parser& ItemParser();

// A parser keeps the buffers of the largest document it has read, for the
// life of its thread. A page of a list (megabytes: 500 Nodes with their
// images) is far larger than any watch event the same informer thread
// reads afterwards, so once a page is decoded its buffers are given back.
void ReleaseLargeParsers();

// How the list and watch core decodes one kind T:
//   static T From(od::value object, const DecodeContext<T>& context);
//       the object's decoder: throws DecodeError (or simdjson's error) when
//       it refuses the object
//   static const char* Resource(const DecodeContext<T>& context);
//       the resource's name, for RejectedObject ("pods")
//   static std::string ListName(const DecodeContext<T>& context);
//       what a list that fails to decode is called in the error ("PodList")
// Specialised below, for each kind.
template <typename T>
struct Codec;

// Decodes one object; on failure returns false and says why in `error`.
template <typename T>
bool TryFrom(od::value v, const DecodeContext<T>& context, T& out,
             std::string& error) {
  try {
    out = Codec<T>::From(v, context);
    return true;
  } catch (const simdjson::simdjson_error& e) {
    error = e.what();
  } catch (const DecodeError& e) {
    error = e.message;
  }
  return false;
}

// What can be read of a refused object's identity: metadata's name,
// namespace, uid and resourceVersion, each when it is a string. Skips
// everything else; throws only when the JSON itself is malformed.
RejectedObject IdentityFrom(od::value v, const char* resource);

// The tombstone of a refused object: its identity and nothing else (no
// namespace for the cluster-scoped kinds).
template <typename T>
void IdentityInto(const RejectedObject& r, T& object) {
  if constexpr (requires { object.namespace_; }) {
    object.namespace_ = r.namespace_;
  }
  object.name = r.name;
  object.uid = r.uid;
  object.resource_version = r.resource_version;
}

// Iterates a list's document, handing each item to `item(value, list)`.
template <typename T, typename Item>
ObjectList<T> ListFrom(od::document& doc, Item item) {
  ObjectList<T> list;
  for (od::field f : doc.get_object()) {
    std::string_view key = f.unescaped_key();
    od::value value = f.value();
    if (key == "metadata") {
      for (od::field mf : value.get_object()) {
        std::string_view mkey = mf.unescaped_key();
        if (mkey == "resourceVersion")
          list.resource_version = String(mf.value());
        if (mkey == "continue") list.continue_token = String(mf.value());
      }
    } else if (key == "items") {
      if (IsNull(value)) continue;
      for (od::value v : value.get_array()) item(v, list);
    }
  }
  return list;
}

// A list in one pass; when that fails, again one object at a time, so that
// the objects the decoder refuses are reported and the others kept. (After
// a failure in the middle of an object the iterator's position is not to be
// trusted, so each object is copied out and decoded on its own; this costs
// a second pass only for the rare list that holds a refused object.)
template <typename T>
absl::StatusOr<ObjectList<T>> ListOf(absl::string_view json,
                                     const DecodeContext<T>& context) {
  const std::string what = Codec<T>::ListName(context);
  simdjson::padded_string padded(json.data(), json.size());
  absl::StatusOr<ObjectList<T>> list = Guard(what, [&] {
    od::document doc = Parser().iterate(padded);
    return ListFrom<T>(doc, [&](od::value v, ObjectList<T>& out) {
      out.items.push_back(Codec<T>::From(v, context));
    });
  });
  if (list.ok()) {
    ReleaseLargeParsers();
    return list;
  }
  list = Guard(what, [&] {
    od::document doc = Parser().iterate(padded);
    return ListFrom<T>(doc, [&](od::value v, ObjectList<T>& out) {
      od::object json_object = v.get_object();
      std::string_view raw = json_object.raw_json();
      simdjson::padded_string item(raw.data(), raw.size());
      T object;
      std::string error;
      {
        od::document item_doc = ItemParser().iterate(item);
        if (TryFrom(item_doc.get_value(), context, object, error)) {
          out.items.push_back(std::move(object));
          return;
        }
      }
      od::document item_doc = ItemParser().iterate(item);
      RejectedObject rejected =
          IdentityFrom(item_doc.get_value(), Codec<T>::Resource(context));
      rejected.error = std::move(error);
      out.rejected.push_back(std::move(rejected));
    });
  });
  ReleaseLargeParsers();
  return list;
}

// A watch event's "type".
WatchEventType EventType(std::string_view type);

// Thrown out of a watch event's first pass when the decoder refuses the
// event's object (not the event itself).
struct ObjectRefused {
  std::string message;
};

// Fills `event` from its "object", once the event's type is known: an ERROR
// carries a Status, a BOOKMARK only a resourceVersion, a DELETED only the
// object's identity (a tombstone: handlers of a delete read no more, and a
// pod leaving the pending pods' field selector when it is bound is one
// DELETED per pod scheduled), the others a T.
template <typename T>
void EventObject(od::value object, const DecodeContext<T>& context,
                 WatchEvent<T>& event) {
  if (event.type == WatchEventType::kError) {
    int64_t code = 0;
    std::string reason, message;
    for (od::field f : object.get_object()) {
      std::string_view key = f.unescaped_key();
      if (key == "code") code = f.value();
      if (key == "reason") reason = String(f.value());
      if (key == "message") message = String(f.value());
    }
    event.error = ErrorStatus(code, reason, std::move(message));
  } else if (event.type == WatchEventType::kBookmark) {
    for (od::field f : object.get_object()) {
      if (std::string_view(f.unescaped_key()) != "metadata") continue;
      for (od::field mf : f.value().get_object()) {
        if (std::string_view(mf.unescaped_key()) == "resourceVersion") {
          event.resource_version = String(mf.value());
        }
      }
    }
  } else if (event.type == WatchEventType::kDeleted) {
    IdentityInto(IdentityFrom(object, ""), event.object);
    event.resource_version = event.object.resource_version;
  } else {
    std::string error;
    if (!TryFrom(object, context, event.object, error)) {
      throw ObjectRefused{std::move(error)};
    }
    event.resource_version = event.object.resource_version;
  }
}

// The event whose object was refused, read again for its type and what
// can be read of the object's identity.
template <typename T>
WatchEvent<T> RefusedEvent(const simdjson::padded_string& padded,
                           const char* resource, std::string error) {
  WatchEvent<T> event;
  RejectedObject rejected;
  od::document doc = Parser().iterate(padded);
  for (od::field f : doc.get_object()) {
    std::string_view key = f.unescaped_key();
    if (key == "type") event.type = EventType(f.value());
    if (key == "object") rejected = IdentityFrom(f.value(), resource);
  }
  rejected.resource = resource;
  rejected.error = std::move(error);
  IdentityInto(rejected, event.object);
  event.resource_version = rejected.resource_version;
  if (event.type != WatchEventType::kDeleted) {
    event.rejected = std::move(rejected);
  }
  return event;
}

// A watch event: its type, then its object (EventObject). When the object
// is refused, the event is read again for what can be read of it
// (RefusedEvent).
template <typename T>
absl::StatusOr<WatchEvent<T>> WatchEventOf(absl::string_view line,
                                           const DecodeContext<T>& context) {
  simdjson::padded_string padded(line.data(), line.size());
  try {
    return Guard("watch event", [&] {
      WatchEvent<T> event;
      bool have_type = false;
      bool have_object = false;
      bool object_first = false;
      {
        od::document doc = Parser().iterate(padded);
        for (od::field f : doc.get_object()) {
          std::string_view key = f.unescaped_key();
          if (key == "type") {
            event.type = EventType(f.value());
            have_type = true;
          } else if (key == "object") {
            have_object = true;
            // The apiserver sends the type first, so the object is decoded
            // in the same pass; otherwise in a second pass below.
            if (have_type) {
              EventObject(f.value(), context, event);
            } else {
              object_first = true;
            }
          }
        }
      }
      if (!have_type) throw DecodeError{"event has no type"};
      if (!have_object) throw DecodeError{"event has no object"};
      if (object_first) {
        od::document doc = Parser().iterate(padded);
        for (od::field f : doc.get_object()) {
          if (std::string_view(f.unescaped_key()) == "object") {
            EventObject(f.value(), context, event);
          }
        }
      }
      return event;
    });
  } catch (ObjectRefused& refused) {
    return Guard("watch event", [&] {
      return RefusedEvent<T>(padded, Codec<T>::Resource(context),
                             std::move(refused.message));
    });
  }
}

// One object alone (DecodePod, DecodeNode); any failure is InvalidArgument
// naming `what`.
template <typename T>
absl::StatusOr<T> DecodeObject(absl::string_view json, absl::string_view what,
                               const DecodeContext<T>& context = {}) {
  simdjson::padded_string padded(json.data(), json.size());
  return Guard(what, [&] {
    od::document doc = Parser().iterate(padded);
    return Codec<T>::From(doc.get_value(), context);
  });
}

}  // namespace decode_internal

// Instantiated in each kind's file.
template <typename T>
absl::StatusOr<ObjectList<T>> DecodeList(absl::string_view json,
                                         const DecodeContext<T>& context) {
  return decode_internal::ListOf<T>(json, context);
}

template <typename T>
absl::StatusOr<WatchEvent<T>> DecodeWatchEvent(
    absl::string_view line, const DecodeContext<T>& context) {
  return decode_internal::WatchEventOf<T>(line, context);
}

}  // namespace ms::kube

#endif  // METRICS_SCHEDULER_KUBE_DECODE_CORE_H_
