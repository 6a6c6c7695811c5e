-- bench/server_wrk.lua: wrk prints one machine-readable line at the end (used by
-- bench/server_lib.sh): requests per second and latency percentiles in microseconds.
done = function(summary, latency, requests)
  local s = summary.duration / 1e6
  local e = summary.errors
  io.write(string.format(
    "WRKRESULT rps=%.1f p50_us=%d p99_us=%d max_us=%d requests=%d seconds=%.3f errors=%d bytes=%d\n",
    summary.requests / s, latency:percentile(50), latency:percentile(99), latency.max,
    summary.requests, s, e.connect + e.read + e.write + e.timeout + e.status, summary.bytes))
end
