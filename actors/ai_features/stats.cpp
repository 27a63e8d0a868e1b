// Percentiles, line fits and failure slices; see stats.hpp.
#include "actors/ai_features/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace aisched::ai {

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  auto rank = static_cast<size_t>(std::ceil(p / 100.0 * double(sorted.size())));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

line_fit fit_line(const std::vector<std::pair<double, double>>& points) {
  line_fit f;
  if (points.empty()) return f;
  double n = double(points.size()), sx = 0, sy = 0;
  for (auto& [x, y] : points) sx += x, sy += y;
  double mx = sx / n, my = sy / n, num = 0, den = 0;
  for (auto& [x, y] : points) {
    num += (x - mx) * (y - my);
    den += (x - mx) * (x - mx);
  }
  f.slope = den > 0 ? num / den : 0;
  f.intercept = my - f.slope * mx;
  return f;
}

std::string direction(const std::vector<std::pair<double, double>>& points, double threshold,
                      double abs_floor) {
  if (points.size() < 3) return "stable";
  auto f = fit_line(points);
  double mean = 0;
  for (auto& p : points) mean += p.second;
  mean /= double(points.size());
  auto span = points.back().first - points.front().first;
  auto change = f.slope * span;
  auto scale = std::max(std::fabs(mean), abs_floor);
  if (std::fabs(change) <= abs_floor || std::fabs(change) / scale <= threshold) return "stable";
  return change > 0 ? "rising" : "falling";
}

duration_stats compute_duration_stats(const std::vector<double>& durations_ms) {
  duration_stats s;
  s.count = durations_ms.size();
  if (durations_ms.empty()) return s;
  auto sorted = durations_ms;
  std::sort(sorted.begin(), sorted.end());
  s.mean_ms = std::accumulate(sorted.begin(), sorted.end(), 0.0) / double(s.count);
  s.p50_ms = percentile(sorted, 50);
  s.p95_ms = percentile(sorted, 95);
  s.max_ms = sorted.back();
  s.min_ms = sorted.front();
  std::vector<std::pair<double, double>> pts;
  for (size_t i = 0; i < durations_ms.size(); ++i) pts.emplace_back(double(i), durations_ms[i]);
  auto f = fit_line(pts);
  s.slope_ms_per_run = f.slope;
  s.trend = direction(pts, 0.2, 1.0);
  s.next_estimate_ms = std::max(0.0, f.intercept + f.slope * double(durations_ms.size()));
  if (s.count < 3) s.next_estimate_ms = s.mean_ms;
  return s;
}

std::vector<rate_slice> slice_outcomes(const std::vector<run_outcome>& outcomes, unix_ms from,
                                       unix_ms to, size_t n) {
  n = std::max<size_t>(n, 1);
  std::vector<rate_slice> out(n);
  auto width = std::max<int64_t>(1, (to - from + int64_t(n) - 1) / int64_t(n));
  for (size_t i = 0; i < n; ++i) {
    out[i].start = from + int64_t(i) * width;
    out[i].end = std::min<int64_t>(to, out[i].start + width);
  }
  for (auto& o : outcomes) {
    if (o.finished_at < from || o.finished_at >= to) continue;
    auto i = std::min<size_t>(n - 1, size_t((o.finished_at - from) / width));
    ++out[i].runs;
    if (o.failed) ++out[i].failures;
  }
  return out;
}

}  // namespace aisched::ai
