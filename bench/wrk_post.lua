-- wrk script for bench/ingest.py: POST distinct bodies (one JSON document per line of the
-- file named by BODIES), each wrk thread taking every n-th line so no body is sent twice
-- while the file lasts. Reports non-2xx answers.
local threads = {}
local counter = 0

function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

function init(args)
  bodies = {}
  for line in io.lines(os.getenv("BODIES")) do
    bodies[#bodies + 1] = line
  end
  step = tonumber(os.getenv("THREADS"))
  index = id + 1
  failures = 0
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("TOKEN")
end

function request()
  local body = bodies[index]
  index = index + step
  if index > #bodies then index = id + 1 end
  return wrk.format(nil, nil, nil, body)
end

function response(status, headers, body)
  if status ~= 201 then failures = failures + 1 end
end

function done(summary, latency, requests)
  local failed = 0
  for _, thread in ipairs(threads) do failed = failed + thread:get("failures") end
  io.write(string.format("WRK requests=%d seconds=%.3f failed=%d p50_ms=%.2f p95_ms=%.2f\n",
    summary.requests, summary.duration / 1e6, failed,
    latency:percentile(50) / 1000, latency:percentile(95) / 1000))
end
