#!/usr/bin/python3
"""Read a Prometheus text exposition (format 0.0.4) on stdin with the
prometheus_client library's parser (Debian: python3-prometheus-client) and
print it as one JSON document for jq:
  {"families": {"<family>": "<type>", ...},
   "samples": [{"name": ..., "labels": {...}, "value": ...}, ...]}
Exits 1, with the parser's message on stderr, when the text does not parse.
"""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families


def main():
    text = sys.stdin.read()
    families = {}
    samples = []
    try:
        for family in text_string_to_metric_families(text):
            families[family.name] = family.type
            for s in family.samples:
                samples.append(
                    {"name": s.name, "labels": dict(s.labels), "value": s.value}
                )
    except Exception as e:  # the parser raises ValueError and others
        print("not a valid exposition: %s" % e, file=sys.stderr)
        return 1
    json.dump({"families": families, "samples": samples}, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
