// The numbers behind duration prediction and trend analysis, computed by
// aisched itself (the model only judges them): percentiles, a least-squares
// line and the direction it points, failure rates per slice of a window. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "proto/time.hpp"

namespace aisched::ai {

/// The `p`-th percentile (0..100) of ascending `sorted` by nearest rank;
/// 0 for an empty vector.
double percentile(const std::vector<double>& sorted, double p);

/// Least-squares line through (x, y) points.
struct line_fit {
  double slope = 0;
  double intercept = 0;
};
line_fit fit_line(const std::vector<std::pair<double, double>>& points);

/// "rising", "falling" or "stable": whether the fitted line changes by more
/// than `threshold` (relative to the mean of y) from the first x to the last;
/// "stable" with fewer than 3 points. Also "stable" when the mean is 0 and
/// the line stays within `abs_floor`.
std::string direction(const std::vector<std::pair<double, double>>& points,
                      double threshold = 0.2, double abs_floor = 1e-9);

/// Statistics of a task's successful run durations.
struct duration_stats {
  size_t count = 0;
  double mean_ms = 0, p50_ms = 0, p95_ms = 0, max_ms = 0, min_ms = 0;
  double slope_ms_per_run = 0;  // least-squares slope over the runs in order
  std::string trend = "stable";
  double next_estimate_ms = 0;  // the line's value for the next run (>= 0)
};

/// Stats of `durations_ms` given oldest first (the order matters for the trend).
duration_stats compute_duration_stats(const std::vector<double>& durations_ms);

/// One finished run, for failure rates.
struct run_outcome {
  unix_ms finished_at = 0;
  bool failed = false;
};

/// Runs and failures in one slice [start, end) of a window.
struct rate_slice {
  unix_ms start = 0, end = 0;
  uint64_t runs = 0, failures = 0;
  double failure_rate() const { return runs ? double(failures) / double(runs) : 0.0; }
};

/// Splits [from, to) into `n` equal slices (n >= 1) and counts `outcomes` in them
/// (outcomes outside the window are ignored).
std::vector<rate_slice> slice_outcomes(const std::vector<run_outcome>& outcomes, unix_ms from,
                                       unix_ms to, size_t n);

}  // namespace aisched::ai
