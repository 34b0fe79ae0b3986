// Counter-based random numbers: the same (seed, key, counter) always gives
// the same number, so batched and unbatched runs draw identical dropout masks.
#pragma once

#include <cstdint>

namespace foldc::rt {

/// SplitMix64's finaliser: a bijective mix with good avalanche.
inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// A uniform float in [0, 1) determined by (seed, key, counter) alone.
inline float counterUniform(uint64_t seed, uint64_t key, uint64_t counter) {
  uint64_t h = mix64(seed ^ mix64(key ^ mix64(counter)));
  return float(h >> 40) * (1.0f / 16777216.0f); // 24 random bits
}

/// The identity of an instance: which example, and its ordinal there.
inline uint64_t instanceKey(uint32_t example, uint32_t ordinal) {
  return (uint64_t(example) << 32) | ordinal;
}

} // namespace foldc::rt
