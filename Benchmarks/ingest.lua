-- wrk script: POST /v1/push updates round-robin over 10 tags of one device (the ingest benchmark).
--   LANPUSH_TOKEN=<admin token> LANPUSH_DEVICE=<device id> wrk -t1 -c16 -d8s --latency -s Benchmarks/ingest.lua http://127.0.0.1:PORT
-- lanpush-bench runs it itself (scenario `ingest`) when wrk is installed, against the lanpushd it started.
local n = 0
local token = os.getenv("LANPUSH_TOKEN") or ""
local device = os.getenv("LANPUSH_DEVICE") or "phone"
request = function()
  n = n + 1
  local body = string.format(
    '{"targets":["%s"],"title":"Bench","message":"m%d","data":{"tag":"t%d","live_update":true,"progress":%d,"progress_max":1000000}}',
    device, n, n % 10, n)
  return wrk.format("POST", "/v1/push", {["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. token}, body)
end
