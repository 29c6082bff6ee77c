#include "runtime/kernels/attrs.h"

#include <string>

namespace etc {
namespace {

Failure missing(std::string_view name) {
  return fail(Error::InvalidProgram, "missing attribute '", std::string(name), "'");
}
Failure wrong_kind(std::string_view name, const char* want) {
  return fail(Error::InvalidProgram, "attribute '", std::string(name), "' is not ", want);
}

}  // namespace

const AttrView* AttrList::find(std::string_view name) const {
  for (const AttrView& a : attrs_)
    if (a.name == name) return &a;
  return nullptr;
}

Result<int64_t> AttrList::get_int(std::string_view name) const {
  const AttrView* a = find(name);
  if (!a) return missing(name);
  if (a->kind != AttrKind::Int) return wrong_kind(name, "an int");
  return a->i;
}

Result<int64_t> AttrList::get_int(std::string_view name, int64_t fallback) const {
  return has(name) ? get_int(name) : Result<int64_t>(fallback);
}

Result<float> AttrList::get_float(std::string_view name) const {
  const AttrView* a = find(name);
  if (!a) return missing(name);
  if (a->kind == AttrKind::Int) return static_cast<float>(a->i);
  if (a->kind != AttrKind::Float) return wrong_kind(name, "a float");
  return a->f;
}

Result<float> AttrList::get_float(std::string_view name, float fallback) const {
  return has(name) ? get_float(name) : Result<float>(fallback);
}

Result<std::vector<int64_t>> AttrList::get_ints(std::string_view name) const {
  const AttrView* a = find(name);
  if (!a) return missing(name);
  if (a->kind != AttrKind::Ints) return wrong_kind(name, "a list of ints");
  return std::vector<int64_t>(a->ints.begin(), a->ints.end());
}

Result<std::vector<int64_t>> AttrList::get_ints(std::string_view name, std::vector<int64_t> fallback) const {
  return has(name) ? get_ints(name) : Result<std::vector<int64_t>>(std::move(fallback));
}

Result<std::vector<float>> AttrList::get_floats(std::string_view name) const {
  const AttrView* a = find(name);
  if (!a) return missing(name);
  if (a->kind != AttrKind::Floats) return wrong_kind(name, "a list of floats");
  return std::vector<float>(a->floats.begin(), a->floats.end());
}

Result<std::string_view> AttrList::get_string(std::string_view name) const {
  const AttrView* a = find(name);
  if (!a) return missing(name);
  if (a->kind != AttrKind::String) return wrong_kind(name, "a string");
  return a->s;
}

Result<std::string_view> AttrList::get_string(std::string_view name, std::string_view fallback) const {
  return has(name) ? get_string(name) : Result<std::string_view>(fallback);
}

}  // namespace etc
