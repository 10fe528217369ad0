-- wrk script: POST /v1/push updates round-robin over 10 tags of one device (durable ingest benchmark).
-- wrk -t1 -c8 -d10s -s Benchmarks/ingest.lua http://127.0.0.1:PORT  (env LANPUSH_TOKEN = admin token)
local n = 0
local token = os.getenv("LANPUSH_TOKEN") or ""
request = function()
  n = n + 1
  local body = string.format(
    '{"targets":["phone"],"title":"Bench","message":"m%d","data":{"tag":"t%d","live_update":true,"progress":%d,"progress_max":1000000}}',
    n, n % 10, n)
  return wrk.format("POST", "/v1/push", {["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. token}, body)
end
