-- post.lua — wrk script: POST one JSON body from a file on every request.
--   wrk -t2 -c32 -d10s --latency -s tests/bench/post.lua URL -- BODY.json
-- At the end it prints "non2xx=N" (answers with a status of 400 or more),
-- so a throughput figure built on errors is visible.

function init(args)
   local f = assert(io.open(args[1], "rb"))
   wrk.body = f:read("*a")
   f:close()
   wrk.method = "POST"
   wrk.headers["Content-Type"] = "application/json"
end

function done(summary, latency, requests)
   io.write(string.format("non2xx=%d\n", summary.errors.status))
end
