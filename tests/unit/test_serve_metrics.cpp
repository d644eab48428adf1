// The Prometheus text exposition: HELP and TYPE before each family, counters by label, and a
// cumulative histogram whose +Inf bucket equals its count.

#include <doctest/doctest.h>

#include "hwimg/serve/metrics.hpp"

using namespace hwimg;
using namespace std::chrono_literals;

TEST_CASE("counters, selections and the resolution histogram") {
  serve::Metrics metrics;
  metrics.count_request("tag", 200);
  metrics.count_request("tag", 200);
  metrics.count_request("blob", 404);
  metrics.count_upstream_error("127.0.0.1:5000");
  metrics.count_selection("cpu-x86-64-v3");
  metrics.count_selection("we\"ird\\name\n");
  metrics.observe_resolution(300us);
  metrics.observe_resolution(3ms);
  metrics.observe_resolution(2s);
  const auto text = metrics.render();
  CHECK(text.find("# TYPE hwimg_serve_requests_total counter\n") < text.find("hwimg_serve_requests_total{"));
  CHECK(text.find("hwimg_serve_requests_total{kind=\"tag\",code=\"200\"} 2\n") != std::string::npos);
  CHECK(text.find("hwimg_serve_requests_total{kind=\"blob\",code=\"404\"} 1\n") != std::string::npos);
  CHECK(text.find("hwimg_serve_upstream_errors_total{upstream=\"127.0.0.1:5000\"} 1\n") != std::string::npos);
  CHECK(text.find("hwimg_serve_selections_total{variant=\"cpu-x86-64-v3\"} 1\n") != std::string::npos);
  CHECK(text.find("hwimg_serve_selections_total{variant=\"we\\\"ird\\\\name\\n\"} 1\n") != std::string::npos);
  CHECK(text.find("# TYPE hwimg_serve_resolution_seconds histogram\n") != std::string::npos);
  CHECK(text.find("hwimg_serve_resolution_seconds_bucket{le=\"0.0005\"} 1\n") != std::string::npos);
  CHECK(text.find("hwimg_serve_resolution_seconds_bucket{le=\"0.005\"} 2\n") != std::string::npos);
  CHECK(text.find("hwimg_serve_resolution_seconds_bucket{le=\"1\"} 2\n") != std::string::npos);
  CHECK(text.find("hwimg_serve_resolution_seconds_bucket{le=\"+Inf\"} 3\n") != std::string::npos);
  CHECK(text.find("hwimg_serve_resolution_seconds_count 3\n") != std::string::npos);
  CHECK(text.ends_with("\n"));
}
