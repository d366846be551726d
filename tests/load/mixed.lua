-- mixed.lua — wrk script: cycles through request bodies for dot, additive
-- and NW attention (files given after "--": PATH=FILE ...), counts answers
-- by status class across all threads, and prints one machine-readable line
--   RESULT requests=N non2xx=N errors=N p50_ms=X p99_ms=X max_ms=X rps=X
-- (errors: connect, read, write and timeout errors as wrk counts them).
--   usage: wrk -s mixed.lua URL -- /attention/dot=dot.json ...

local threads = {}

function setup(thread)
    thread:set("id", #threads)
    table.insert(threads, thread)
end

local function slurp(path)
    local f = assert(io.open(path, "rb"))
    local s = f:read("*a")
    f:close()
    return s
end

local requests = {}
local next_request = 1
non2xx = 0

function init(args)
    local headers = { ["Content-Type"] = "application/json" }
    for _, arg in ipairs(args) do
        local path, file = arg:match("^([^=]+)=(.+)$")
        table.insert(requests, wrk.format("POST", path, headers, slurp(file)))
    end
    -- threads start at different bodies so that the mix is even
    next_request = (wrk.thread:get("id") or 0) % #requests + 1
end

function request()
    local r = requests[next_request]
    next_request = next_request % #requests + 1
    return r
end

function response(status, headers, body)
    if status < 200 or status > 299 then
        non2xx = non2xx + 1
    end
end

function done(summary, latency, requests_done)
    local bad = 0
    for _, t in ipairs(threads) do
        bad = bad + (t:get("non2xx") or 0)
    end
    local e = summary.errors
    local errors = e.connect + e.read + e.write + e.timeout
    io.write(string.format(
        "RESULT requests=%d non2xx=%d errors=%d p50_ms=%.2f p99_ms=%.2f max_ms=%.2f rps=%.0f\n",
        summary.requests, bad, errors, latency:percentile(50) / 1000,
        latency:percentile(99) / 1000, latency.max / 1000,
        summary.requests / (summary.duration / 1e6)))
end
