#include "kernels/index_keys.hpp"

namespace zfc {
namespace kernels {
namespace {

template <class I, class K>
BadIndex load_typed(const I* in, size_t n, int64_t vocab, bool check, K* keys) {
  BadIndex bad;
  if (!check) {
    for (size_t i = 0; i < n; ++i) keys[i] = static_cast<K>(in[i]);
    return bad;
  }
  // Comparing as unsigned folds the negative test into the upper bound.
  const uint64_t bound = static_cast<uint64_t>(vocab);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t v = static_cast<uint64_t>(static_cast<int64_t>(in[i]));
    if (v >= bound) {
      bad.found = true;
      bad.position = i;
      bad.value = static_cast<int64_t>(in[i]);
      return bad;
    }
    keys[i] = static_cast<K>(v);
  }
  return bad;
}

template <class I>
BadIndex find_typed(const I* in, size_t n, int64_t vocab) {
  const uint64_t bound = static_cast<uint64_t>(vocab);
  BadIndex bad;
  for (size_t i = 0; i < n; ++i) {
    if (static_cast<uint64_t>(static_cast<int64_t>(in[i])) >= bound) {
      bad.found = true;
      bad.position = i;
      bad.value = static_cast<int64_t>(in[i]);
      return bad;
    }
  }
  return bad;
}

}  // namespace

BadIndex find_bad_index(const void* indices, zfcDataType_t type, size_t n, int64_t vocab) {
  if (type == zfcInt32) return find_typed(static_cast<const int32_t*>(indices), n, vocab);
  return find_typed(static_cast<const int64_t*>(indices), n, vocab);
}

template <class K>
BadIndex load_keys(const void* indices, zfcDataType_t type, size_t n, int64_t vocab,
                   bool check, K* keys) {
  if (type == zfcInt32) {
    return load_typed(static_cast<const int32_t*>(indices), n, vocab, check, keys);
  }
  return load_typed(static_cast<const int64_t*>(indices), n, vocab, check, keys);
}

template <class K>
void store_keys(const K* keys, size_t n, zfcDataType_t type, void* out) {
  if (type == zfcInt32) {
    int32_t* o = static_cast<int32_t*>(out);
    for (size_t i = 0; i < n; ++i) o[i] = static_cast<int32_t>(keys[i]);
  } else {
    int64_t* o = static_cast<int64_t*>(out);
    for (size_t i = 0; i < n; ++i) o[i] = static_cast<int64_t>(keys[i]);
  }
}

template BadIndex load_keys<uint32_t>(const void*, zfcDataType_t, size_t, int64_t, bool,
                                      uint32_t*);
template BadIndex load_keys<uint64_t>(const void*, zfcDataType_t, size_t, int64_t, bool,
                                      uint64_t*);
template void store_keys<uint32_t>(const uint32_t*, size_t, zfcDataType_t, void*);
template void store_keys<uint64_t>(const uint64_t*, size_t, zfcDataType_t, void*);

}  // namespace kernels
}  // namespace zfc
