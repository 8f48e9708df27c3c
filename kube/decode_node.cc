// Nodes: the fields placement reads (model/node.h), and the annotations
// asked for.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/hash/hash.h"
#include "kube/decode_core.h"
#include "model/image_names.h"
#include "model/node_features.h"

namespace ms::kube {
namespace decode_internal {
namespace {

// Every name of every image of a status.images array, interned at once: a
// node reports tens of them.
void InternImages(od::array images, std::vector<uint32_t>& ids) {
  std::vector<ImageName> names;
  for (od::value image : images) {
    // The size may come after the names: take both, then set it.
    int64_t size = 0;
    const size_t first = names.size();
    for (od::field imf : image.get_object()) {
      std::string_view ikey = imf.unescaped_key();
      od::value iv = imf.value();
      if (ikey == "sizeBytes" && !IsNull(iv)) {
        size = int64_t(iv);
      } else if (ikey == "names" && !IsNull(iv)) {
        for (od::value name : iv.get_array()) {
          names.push_back({.name = AbslView(std::string_view(name))});
        }
      }
    }
    for (size_t i = first; i < names.size(); ++i) names[i].size_bytes = size;
  }
  InternImageNames(names, ids);
}

// status.images: reused from the node as held when its text is the same
// (context.known_images), else read from that text with a parser of this
// thread's own (the document's is still walking the node).
void NodeImages(od::value value, const DecodeContext<Node>& context,
                Node& node) {
  od::array array = value.get_array();
  const std::string_view raw = array.raw_json();
  node.images_digest = absl::HashOf(AbslView(raw)) | 1;  // 0: none
  if (context.known_images &&
      context.known_images(node.name, node.images_digest, node.images)) {
    return;
  }
  node.images.clear();
  thread_local od::parser parser;
  simdjson::padded_string padded(raw);
  od::document doc = parser.iterate(padded);
  InternImages(doc.get_array(), node.images);
}

void NodeStatus(od::value v, const DecodeContext<Node>& context, Node& node) {
  for (od::field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    od::value value = f.value();
    if (key == "allocatable") {
      node.allocatable = ResourceList(value);
    } else if (key == "conditions") {
      if (IsNull(value)) continue;
      for (od::value cond : value.get_array()) {
        std::string type, status;
        for (od::field cf : cond.get_object()) {
          std::string_view ckey = cf.unescaped_key();
          if (ckey == "type") type = String(cf.value());
          if (ckey == "status") status = String(cf.value());
        }
        if (type == "Ready") node.ready = status == "True";
      }
    } else if (key == "images") {
      if (IsNull(value)) continue;
      NodeImages(value, context, node);
    } else if (key == "declaredFeatures") {
      if (IsNull(value)) continue;
      for (od::value name : value.get_array()) {
        node.declared_features |= NodeFeatureOf(std::string_view(name));
      }
    } else if (key == "addresses") {
      if (IsNull(value)) continue;
      for (od::value addr : value.get_array()) {
        NodeAddress a;
        for (od::field af : addr.get_object()) {
          std::string_view akey = af.unescaped_key();
          if (akey == "type") a.type = String(af.value());
          if (akey == "address") a.address = String(af.value());
        }
        node.addresses.push_back(std::move(a));
      }
    }
  }
}

Node NodeFrom(od::value v, const DecodeContext<Node>& context) {
  const std::vector<std::string>& annotations = context.annotations;
  Node node;
  for (od::field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    od::value value = f.value();
    if (key == "metadata") {
      for (od::field mf : value.get_object()) {
        std::string_view mkey = mf.unescaped_key();
        if (mkey == "name") {
          node.name = String(mf.value());
        } else if (mkey == "uid") {
          node.uid = String(mf.value());
        } else if (mkey == "resourceVersion") {
          node.resource_version = String(mf.value());
        } else if (mkey == "labels") {
          node.labels = StringMap(mf.value());
        } else if (mkey == "annotations" && !annotations.empty()) {
          od::value all = mf.value();
          if (IsNull(all)) continue;
          for (od::field af : all.get_object()) {
            std::string_view akey = af.unescaped_key();
            if (absl::c_linear_search(annotations, akey)) {
              node.annotations.emplace(akey, String(af.value()));
            }
          }
        }
      }
    } else if (key == "spec") {
      for (od::field sf : value.get_object()) {
        std::string_view skey = sf.unescaped_key();
        if (skey == "unschedulable") {
          node.unschedulable = bool(sf.value());
        } else if (skey == "taints") {
          od::value taints = sf.value();
          if (IsNull(taints)) continue;
          for (od::value item : taints.get_array()) {
            Taint t;
            for (od::field tf : item.get_object()) {
              std::string_view tkey = tf.unescaped_key();
              if (tkey == "key") t.key = String(tf.value());
              if (tkey == "value") t.value = String(tf.value());
              if (tkey == "effect") t.effect = Effect(tf.value());
            }
            node.taints.push_back(std::move(t));
          }
        }
      }
    } else if (key == "status") {
      NodeStatus(value, context, node);
    }
  }
  return node;
}

}  // namespace

template <>
struct Codec<Node> {
  static Node From(od::value v, const DecodeContext<Node>& context) {
    return NodeFrom(v, context);
  }
  static const char* Resource(const DecodeContext<Node>&) { return "nodes"; }
  static std::string ListName(const DecodeContext<Node>&) { return "NodeList"; }
};

}  // namespace decode_internal

template absl::StatusOr<ObjectList<Node>> DecodeList(
    absl::string_view, const DecodeContext<Node>&);
template absl::StatusOr<WatchEvent<Node>> DecodeWatchEvent(
    absl::string_view, const DecodeContext<Node>&);

absl::StatusOr<Node> DecodeNode(absl::string_view json,
                                const std::vector<std::string>& annotations) {
  return decode_internal::DecodeObject<Node>(json, "Node",
                                             {.annotations = annotations});
}

}  // namespace ms::kube
