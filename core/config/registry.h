// core/config/registry.h
//
// The one shape of rung's registries (positional variants, length-extension methods): entries that
// each live in their own file, listed by the build (cmake/registry_list.cmake), kept here in listing
// order with unique names. An Entry has name(), label(), summary() (const char*) and listing_order().
//
// Example:
//   static const Registry<PositionalVariant> registry(RegisteredPositionalVariants(), "positional variant");
//   const PositionalVariant* rope = registry.Find("rope");
//
// Thread safety: immutable after construction.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace rung {

// The entry of `entries` named `name` (entries have a const char* name()), or nullptr: the lookup
// every registry makes, the model parts' lists of factories too.
template <typename Entry>
const Entry* FindNamed(const std::vector<const Entry*>& entries, std::string_view name) {
  for (const Entry* entry : entries) {
    if (name == entry->name()) return entry;
  }
  return nullptr;
}

// The names of `entries`, in their order.
template <typename Entry>
std::vector<std::string> NamesOf(const std::vector<const Entry*>& entries) {
  std::vector<std::string> names;
  for (const Entry* entry : entries) names.emplace_back(entry->name());
  return names;
}

template <typename Entry>
class Registry {
 public:
  // Aborts with a message when two entries share a name: the build has two files of one name in
  // spirit, caught on the first use of any binary.
  Registry(std::vector<const Entry*> entries, const char* kind) : entries_(std::move(entries)) {
    std::stable_sort(entries_.begin(), entries_.end(),
                     [](const Entry* a, const Entry* b) { return a->listing_order() < b->listing_order(); });
    std::set<std::string> names;
    for (const Entry* entry : entries_) {
      if (!names.insert(entry->name()).second) {
        std::fprintf(stderr, "rung: two %ss are named '%s'\n", kind, entry->name());
        std::abort();
      }
    }
    names_ = NamesOf(entries_);
  }

  const std::vector<const Entry*>& entries() const { return entries_; }

  const Entry* Find(std::string_view name) const { return FindNamed(entries_, name); }

  // In listing order; made once (a config read asks for them on every trial).
  const std::vector<std::string>& Names() const { return names_; }

  // `heading` on its own line, then "  NAME  LABEL: SUMMARY" for each entry, names aligned.
  std::string Help(const std::string& heading) const {
    size_t width = 0;
    for (const Entry* entry : entries_) width = std::max(width, std::string(entry->name()).size());
    std::string text = heading + "\n";
    for (const Entry* entry : entries_) {
      const std::string name = entry->name();
      text += "  " + name + std::string(width + 2 - name.size(), ' ') + entry->label() + ": " + entry->summary() + "\n";
    }
    return text;
  }

 private:
  std::vector<const Entry*> entries_;
  std::vector<std::string> names_;
};

}  // namespace rung
