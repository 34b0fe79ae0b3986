// Central differences for the gradient tests.
#pragma once

namespace foldc::rt::testing {

/// (f(x + h) - f(x - h)) / 2h, leaving x as it was.
template <typename Objective> double centralDifference(float &x, double h, Objective objective) {
  float saved = x;
  x = saved + float(h);
  double up = objective();
  x = saved - float(h);
  double down = objective();
  x = saved;
  return (up - down) / (2 * h);
}

} // namespace foldc::rt::testing
