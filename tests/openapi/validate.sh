#!/bin/sh
# Validate api/fronts/openapi.json with a real OpenAPI 3.1 validator.
# Needs node and the pinned package: `npm ci` in this directory once
# (works offline afterwards).   usage: sh tests/openapi/validate.sh
dir=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$dir/../.." && pwd)
if [ ! -d "$dir/node_modules/@seriousme/openapi-schema-validator" ]; then
    echo "not ok - the validator is not installed: run 'npm ci' in tests/openapi" >&2
    exit 1
fi
cd "$dir" && node validate.mjs "$root/api/fronts/openapi.json"
